# The application's own CUPTI client under gpuwise (cupti_handover_test.cpp): a CUDA program
# linked against CUPTI, which the simulated device's libcupti stands in for at run time (CUDA is
# enabled with the samples).
if(TARGET samples AND TARGET CUDA::cupti)
  gpuwise_e2e_cuda_app(e2e_cupti_client_app cupti_client_app.cu)
  target_link_libraries(e2e_cupti_client_app PRIVATE CUDA::cupti)
  gpuwise_add_test(e2e_cupti_handover_test SOURCES cupti_handover_test.cpp
    LIBS nlohmann_json::nlohmann_json LABELS e2e TIMEOUT 300)
  add_dependencies(e2e_cupti_handover_test e2e_cupti_client_app gpuwise_exe gpuwise simdevice)
endif()
