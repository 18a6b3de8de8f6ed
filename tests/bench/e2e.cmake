# The shim on the simulated device: the added cost of one intercepted launch, with the shim
# preloaded into a process running on the stand-in libcudart.so.13 and sending to a real advisor.
if(CMAKE_CUDA_COMPILER_LOADED)
  gpuwise_add_bench(shim_simdevice_bench
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/shim_simdevice_bench.cpp ${CMAKE_CURRENT_LIST_DIR}/shim_bench_kernel.cu
    LIBS gpuwise_ingest CUDA::toolkit)
  set_target_properties(shim_simdevice_bench PROPERTIES CUDA_RUNTIME_LIBRARY Shared
    BUILD_RPATH "${CMAKE_BINARY_DIR}/simdevice" CUDA_ARCHITECTURES 80 CUDA_STANDARD 17)
  add_dependencies(shim_simdevice_bench gpuwise simdevice)
endif()
