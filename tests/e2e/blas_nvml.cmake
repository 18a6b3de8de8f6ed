# The cuBLAS precision probe and NVML device facts end to end (blas_nvml_test.cpp): a program that
# calls the simulated libcublas / libcublasLt, under `gpuwise run --simulate`.
add_executable(e2e_blas_app blas_app.cpp)
target_compile_options(e2e_blas_app PRIVATE ${GPUWISE_WARNINGS})
target_include_directories(e2e_blas_app SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(e2e_blas_app PRIVATE gwsim_cublas gwsim_cublaslt gwsim_cudart)
# Found at run time through LD_LIBRARY_PATH (the simulated device), as a real program would be.
set_target_properties(e2e_blas_app PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests
  SKIP_BUILD_RPATH ON)
gpuwise_add_test(e2e_blas_nvml_test SOURCES blas_nvml_test.cpp
  LIBS nlohmann_json::nlohmann_json LABELS e2e TIMEOUT 300)
add_dependencies(e2e_blas_nvml_test e2e_blas_app gpuwise_exe gpuwise simdevice)
