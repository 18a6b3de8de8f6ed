# Tests of the simulated device (included from CMakeLists.txt). Test programs link the stand-ins
# directly (CMake's build RPATH points at ${CMAKE_BINARY_DIR}/simdevice); helper programs live
# beside the tests in ${CMAKE_BINARY_DIR}/tests.
add_library(gwsim_test_support STATIC test_support.cpp)
target_compile_options(gwsim_test_support PRIVATE ${GPUWISE_WARNINGS})
target_include_directories(gwsim_test_support SYSTEM PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(gwsim_test_support PUBLIC gwsim_cudart gwsim_cupti Threads::Threads ${CMAKE_DL_LIBS})

# A minimal CUPTI client injected into the samples with CUDA_INJECTION64_PATH (tools/collector.cpp).
add_library(gwsim_collector SHARED tools/collector.cpp)
target_compile_options(gwsim_collector PRIVATE ${GPUWISE_WARNINGS})
target_include_directories(gwsim_collector SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(gwsim_collector PRIVATE gwsim_cupti)
set_target_properties(gwsim_collector PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

# An LD_PRELOAD hook library shaped like the shim's (tools/hook.cpp).
add_library(gwsim_test_hook SHARED tools/hook.cpp)
target_compile_options(gwsim_test_hook PRIVATE ${GPUWISE_WARNINGS})
target_include_directories(gwsim_test_hook SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(gwsim_test_hook PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(gwsim_test_hook PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

add_executable(simdevice_probe tools/probe.cpp)
target_compile_options(simdevice_probe PRIVATE ${GPUWISE_WARNINGS})
target_link_libraries(simdevice_probe PRIVATE gwsim_test_support)
set_target_properties(simdevice_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

gpuwise_add_test(simdevice_library_test SOURCES library_test.cpp LIBS gwsim_test_support)
add_dependencies(simdevice_library_test gwsim_nvml gwsim_cublas gwsim_cublaslt)
gpuwise_add_test(simdevice_nvml_energy_test SOURCES nvml_energy_test.cpp
                 LIBS gwsim_test_support gwsim_nvml SKIP_TAGS fork)
gpuwise_add_test(simdevice_runtime_test SOURCES runtime_test.cpp LIBS gwsim_test_support
                 LABELS unit concurrency)
gpuwise_add_test(simdevice_cupti_test SOURCES cupti_test.cpp cupti_recorder.cpp LIBS gwsim_test_support gwsim_core
                 LABELS unit concurrency)
gpuwise_add_test(simdevice_process_test SOURCES process_test.cpp LIBS gwsim_test_support
                 LABELS unit concurrency)
add_dependencies(simdevice_process_test simdevice_probe gwsim_collector)

if(GPUWISE_BUILD_SAMPLES)
  gpuwise_add_test(simdevice_samples_test SOURCES samples_test.cpp LIBS gwsim_test_support
                   LABELS e2e TIMEOUT 900)
  add_dependencies(simdevice_samples_test ${GPUWISE_SAMPLES} gwsim_collector gwsim_test_hook)
  add_dependencies(simdevice_library_test ${GPUWISE_SAMPLES})
  target_compile_definitions(simdevice_library_test PRIVATE GWSIM_HAVE_SAMPLES=1)
endif()

# The stand-in NCCL across processes: each rank is a simdevice_nccl_probe (tools/nccl_probe.cpp).
if(TARGET gwsim_nccl)
  add_executable(simdevice_nccl_probe tools/nccl_probe.cpp cupti_recorder.cpp)
  target_compile_options(simdevice_nccl_probe PRIVATE ${GPUWISE_WARNINGS})
  target_include_directories(simdevice_nccl_probe SYSTEM PRIVATE ${GWSIM_NCCL_INCLUDE_DIR})
  target_link_libraries(simdevice_nccl_probe PRIVATE gwsim_test_support gwsim_core gwsim_nccl)
  set_target_properties(simdevice_nccl_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  gpuwise_add_test(simdevice_nccl_test SOURCES nccl_test.cpp LIBS gwsim_test_support
                   LABELS unit concurrency)
  add_dependencies(simdevice_nccl_test simdevice_nccl_probe)
endif()
