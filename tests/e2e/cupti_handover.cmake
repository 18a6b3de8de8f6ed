# The application's own CUPTI client under gpuwise (cupti_handover_test.cpp): a CUDA program
# linked against CUPTI, which the simulated device's libcupti stands in for at run time.
if(TARGET gpuwise_exe AND TARGET gpuwise AND TARGET simdevice AND TARGET CUDA::cupti)
  add_executable(e2e_cupti_client_app cupti_client_app.cu)
  set_target_properties(e2e_cupti_client_app PROPERTIES
    CUDA_RUNTIME_LIBRARY Shared
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_ARCHITECTURES 80
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests
    SKIP_BUILD_RPATH ON)
  target_link_libraries(e2e_cupti_client_app PRIVATE CUDA::cupti)
  gpuwise_add_test(e2e_cupti_handover_test SOURCES cupti_handover_test.cpp
    LIBS nlohmann_json::nlohmann_json LABELS e2e TIMEOUT 300)
  add_dependencies(e2e_cupti_handover_test e2e_cupti_client_app gpuwise_exe gpuwise simdevice)
endif()
