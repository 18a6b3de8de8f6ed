#include "advisor/precision/demangle.h"

#include <catch2/catch.hpp>

using namespace gpuwise::profiler;

TEST_CASE("demangle turns Itanium kernel symbols into C++ names") {
  CHECK(isMangled("_Z15vectorAddKernelPKfS0_Pfi"));
  CHECK(demangle("_Z15vectorAddKernelPKfS0_Pfi") ==
        "vectorAddKernel(float const*, float const*, float*, int)");
  CHECK(demangle("_Z10reduce_sumI6__halfEvPKT_PS1_i") ==
        "void reduce_sum<__half>(__half const*, __half*, int)");
  CHECK(demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5"
                 "ArrayIPcLi1EEEEEviT0_T1_") ==
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1>)");
}

TEST_CASE("demangle leaves plain, demangled and broken names alone") {
  CHECK_FALSE(isMangled("volta_sgemm_128x64_nn"));
  CHECK_FALSE(isMangled("_Z"));
  CHECK_FALSE(isMangled(""));
  CHECK(demangle("volta_sgemm_128x64_nn") == "volta_sgemm_128x64_nn");
  CHECK(demangle("void at::native::f<float>(int)") == "void at::native::f<float>(int)");
  CHECK(demangle("") == "");
  // Truncated symbol: the demangler rejects it, the caller still gets the text.
  CHECK(demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11Fill") ==
        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11Fill");
}

TEST_CASE("shortKernelName keeps the qualified function name only") {
  CHECK(shortKernelName("void at::native::vectorized_elementwise_kernel<4, at::native::"
                        "FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::"
                        "FillFunctor<float>, at::detail::Array<char*, 1>)") ==
        "at::native::vectorized_elementwise_kernel");
  CHECK(shortKernelName("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10,"
                        " true>(float*, float const*, int, int, int)") ==
        "(anonymous namespace)::softmax_warp_forward");
  CHECK(shortKernelName("std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, "
                        "float, float, float, float, false, true, true, false, 7>(int)") ==
        "internal::gemvx::kernel");
  CHECK(shortKernelName("cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)") ==
        "cask_cudnn::computeOffsetsKernel");
  CHECK(shortKernelName("volta_sgemm_128x64_nn") == "volta_sgemm_128x64_nn");
  CHECK(shortKernelName("_Z15vectorAddKernelPKfS0_Pfi") == "vectorAddKernel");
  CHECK(shortKernelName("") == "");
}
