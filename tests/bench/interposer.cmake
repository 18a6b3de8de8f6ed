# The shim's hot path: the added cost of one intercepted launch (hook + ring write) over calling
# the real function directly. The "real" function lives in a stub library so the hook reaches it
# through dlsym(RTLD_NEXT), exactly as it reaches libcudart.
add_library(gwbenchstub SHARED ${CMAKE_CURRENT_LIST_DIR}/interposer_stub_runtime.cpp)
target_link_libraries(gwbenchstub PRIVATE CUDA::toolkit)
set_target_properties(gwbenchstub PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)

gpuwise_add_bench(interposer_launch_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/interposer_launch_bench.cpp
  LIBS gpuwise_interposer_core gpuwise_cupti_fake -Wl,--no-as-needed gwbenchstub -Wl,--as-needed)

# The NCCL hooks' cost per collective call (comm lookup, sequence, one recorded event) over
# calling the stub NCCL directly.
add_library(gwbenchstubnccl SHARED ${CMAKE_CURRENT_LIST_DIR}/interposer_stub_nccl.cpp)
target_link_libraries(gwbenchstubnccl PRIVATE CUDA::toolkit)
target_include_directories(gwbenchstubnccl PRIVATE ${PROJECT_SOURCE_DIR})
set_target_properties(gwbenchstubnccl PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)

gpuwise_add_bench(interposer_nccl_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/interposer_nccl_bench.cpp
  LIBS gpuwise_interposer_core gpuwise_cupti_fake -Wl,--no-as-needed gwbenchstubnccl -Wl,--as-needed)
