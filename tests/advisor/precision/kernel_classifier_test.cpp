// Unit tests of the classification table on names the traces in ../shared/traces do not contain:
// the rows for FP16/INT8/FP64 tensor cores, FP8/FP4 type words and the nvjet codes other than
// "tst". The names are written the way cuBLAS, cuDNN, CUTLASS and PyTorch print them; the
// real-trace fixture (kernel_names.tsv) is in precision_traces_test.cpp.
#include "advisor/precision/classification_rules.h"
#include "advisor/precision/kernel_classifier.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace gpuwise::profiler;

namespace {

struct Case {
  const char* name;
  Precision precision;
  bool tensor_core;
  const char* rule;
};

void checkCases(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    INFO(c.name);
    KernelClass k = classifyKernel(c.name);
    CHECK(precisionName(k.precision) == precisionName(c.precision));
    CHECK(k.tensor_core == c.tensor_core);
    CHECK(k.rule == c.rule);
    CHECK(k.known);
  }
}

} // namespace

TEST_CASE("precision names round-trip and match the report's keys") {
  CHECK(kAllPrecisions.size() == kPrecisionCount);
  std::set<std::string> names;
  for (Precision p : kAllPrecisions) {
    names.insert(std::string(precisionName(p)));
    REQUIRE(parsePrecision(precisionName(p)) == p);
  }
  CHECK(names == std::set<std::string>{"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int8",
                                       "other"});
  CHECK_FALSE(parsePrecision("FP32").has_value());
  CHECK_FALSE(parsePrecision("").has_value());
}

TEST_CASE("the rule table is well formed") {
  auto rules = detail::classificationRules();
  REQUIRE(rules.size() > 10);
  std::set<std::string_view> ids;
  for (size_t i = 0; i < rules.size(); ++i) {
    INFO(rules[i].id);
    CHECK(ids.insert(rules[i].id).second); // ids are unique: a report can name the entry
    CHECK(rules[i].id != "unknown");
    // Only the last entry matches everything; anything after it would never be tried.
    CHECK(rules[i].match.empty() == (i + 1 == rules.size()));
  }
}

TEST_CASE("cuBLAS and CUTLASS MMA shapes give the data type and tensor-core use") {
  checkCases({
      {"volta_h884gemm_256x128_ldg8_nn", Precision::Fp16, true, "mma_shape.fp16"},
      {"turing_h1688gemm_128x128_ldg8_tn", Precision::Fp16, true, "mma_shape.fp16"},
      {"turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn", Precision::Fp16, true,
       "mma_shape.fp32_acc"},
      {"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", Precision::Fp16, true,
       "mma_shape.fp32_acc"},
      {"ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn", Precision::Bf16, true,
       "mma_shape.fp32_acc"},
      // No type named beside s1688: FP32 data on tensor cores, i.e. TF32.
      {"ampere_s1688gemm_fp32_128x128_ldg8_stages_32x3_nn", Precision::Tf32, true,
       "mma_shape.fp32_acc"},
      {"volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_interior_nhwc2nchw_tn_v1",
       Precision::Fp16, true, "mma_shape.fp32_acc"},
      {"void cutlass::Kernel2<cutlass_80_tensorop_i16832gemm_s8_256x128_64x3_tn_align16>("
       "cutlass_80_tensorop_i16832gemm_s8_256x128_64x3_tn_align16::Params)",
       Precision::Int8, true, "mma_shape.int8"},
      {"void cutlass::Kernel2<cutlass_80_tensorop_d884gemm_64x64_16x4_nn_align1>("
       "cutlass_80_tensorop_d884gemm_64x64_16x4_nn_align1::Params)",
       Precision::Fp64, true, "mma_shape.fp64"},
      {"volta_dgemm_128x64_nn", Precision::Fp64, false, "cublas"},
      {"maxwell_hgemm_256x128_raggedMn_nn", Precision::Fp16, false, "cublas"},
      {"ampere_zgemm_32x32_nt", Precision::Fp64, false, "cublas"},
  });
}

TEST_CASE("xmma and CUTLASS 3.x names carry A/B types") {
  checkCases({
      {"sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1_execute_"
       "segment_k_off_kernel__5x_cublas",
       Precision::Fp8, true, "xmma"},
      {"sm86_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_"
       "warpsize2x2x1_g1_tensor16x8x16_execute_kernel_cudnn",
       Precision::Fp16, true, "xmma"},
      {"sm75_xmma_gemm_i8i8_i8i32_f32_tn_n_tilesize128x128x64_stage2_warpsize2x2x1_tensor8x8x16_"
       "kernel",
       Precision::Int8, true, "xmma"},
      {"cutlass3x_sm90_tensorop_s64x128x16gemm_bf16_bf16_f32_bf16_bf16_128x128x64_1x1x1_0_tnn_"
       "align8_warpspecialized_cooperative_epi_tma",
       Precision::Bf16, true, "sm90plus.mma"},
      {"cutlass3x_sm90_tensorop_gemm_e5m2_e4m3_f32_f32_f32_128x128x128_1x1x1_0_tnn_align16",
       Precision::Fp8, true, "sm90plus.mma"},
      {"cutlass3x_sm100_bstensorop_s256x192x64gemm_block_scaled_ue4m3xf4_ue4m3xf4_f32_f16_f16_"
       "256x192x256_0_tnn_align32_o_vs16_2sm_bias_f16_relu",
       Precision::Fp4, true, "sm90plus.mma"},
      {"cutlass3x_sm100_simt_sgemm_f32_f32_f32_f32_f32_128x64x16_1x1x1_3_tnn_align1_bias_f32_relu",
       Precision::Fp32, false, "cutlass.simt"},
      {"cutlass_80_tensorop_tf32_s1688gemm_tf32_256x128_16x3_tn_align4", Precision::Tf32, true,
       "mma_shape.fp32_acc"},
      {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_16x16_128x1_tn_align8>("
       "cutlass_80_wmma_tensorop_f16_s161616gemm_f16_16x16_128x1_tn_align8::Params)",
       Precision::Fp16, true, "mma_shape.fp32_acc"},
  });
}

TEST_CASE("cuBLASLt nvjet type codes") {
  checkCases({
      {"nvjet_hsh_256x128_64x4_2x1_v_bz_coopA_TNN", Precision::Fp16, true, "cublaslt.nvjet"},
      {"nvjet_sm100_tst_64x8_64x16_4x1_v_bz_TNT", Precision::Bf16, true, "cublaslt.nvjet"},
      {"nvjet_sm100_qqtst_128x256_128x6_2x1_2cta_v_bz_TNT", Precision::Fp8, true, "cublaslt.nvjet"},
      {"nvjet_qqtst_128x256_128x6_2x2_2cta_h_bz_Avec32UE8M0_Bvec32UE8M0_TNT", Precision::Fp8, true,
       "cublaslt.nvjet"},
      // NVFP4: "o" operands; UE4M3 is the block-scale format, not FP8 data.
      {"nvjet_sm100_ootst_128x128_256x7_4x1_2cta_v_bx_Avec16UE4M3_Bvec16UE4M3_TNT", Precision::Fp4,
       true, "cublaslt.nvjet"},
      {"nvjet_sm103_oohsh_128x128_256x7_2x2_2cta_v_bz_Avec16UE4M3_Bvec16UE4M3_TNT", Precision::Fp4,
       true, "cublaslt.nvjet"},
      {"nvjet_sss_tf32_128x256_TNT", Precision::Tf32, true, "cublaslt.nvjet"},
      // Plain sss (FP32 without TF32) cannot be on tensor cores.
      {"nvjet_sss_128x64_64x4_2x1_v_bz_TNN", Precision::Fp32, false, "cublaslt.nvjet"},
  });
  KernelClass odd = classifyKernel("nvjet_zzz_128x64");
  CHECK(odd.rule == "cublaslt.nvjet");
  CHECK(odd.precision == Precision::Other);
  CHECK_FALSE(odd.known);
}

TEST_CASE("PyTorch, attention and Triton kernels") {
  checkCases({
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::"
       "Float8_e4m3fn>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::"
       "Float8_e4m3fn>, std::array<char*, 3ul>)",
       Precision::Fp8, false, "pytorch.aten"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::"
       "Float4_e2m1fn_x2>, std::array<char*, 1ul> >(int, at::native::FillFunctor<c10::"
       "Float4_e2m1fn_x2>, std::array<char*, 1ul>)",
       Precision::Fp4, false, "pytorch.aten"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<signed "
       "char>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<signed char>, "
       "std::array<char*, 3ul>)",
       Precision::Int8, false, "pytorch.aten"},
      {"void quantize_kernel<__nv_fp8_e4m3>(__nv_fp8_e4m3*, float const*, int)", Precision::Fp8,
       false, "type_words"},
      {"void at::native::conv_depthwise2d_forward_kernel<5, float, int>(float const*, float*, "
       "float const*, float const*, int, int, int, int, int, int, int, int, int, int, int, int, "
       "int)",
       Precision::Fp32, false, "convolution"},
      {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false, false, "
       "cutlass::half_t, Flash_kernel_traits<128, 64, 64, 4, cutlass::half_t> >, true, false, "
       "false, false, true, true, false>(Flash_fwd_params)",
       Precision::Fp16, true, "attention"},
      {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::"
       "bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
       Precision::Bf16, true, "attention"},
      {"triton_poi_fused__to_copy_add_mul_0", Precision::Other, false, "triton"},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       Precision::Other, false, "nccl"},
  });
}

TEST_CASE("mangled names are demangled before classification") {
  checkCases({
      {"_Z10reduce_sumI6__halfEvPKT_PS1_i", Precision::Fp16, false, "type_words"},
      {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPc"
       "Li1EEEEEviT0_T1_",
       Precision::Fp32, false, "pytorch.aten"},
  });
}

TEST_CASE("unknown names are other and not known") {
  for (const char* name : {"my_custom_kernel", "attn_fwd", "MIOpenBatchNormFwdTrainSpatial"}) {
    INFO(name);
    KernelClass k = classifyKernel(name);
    CHECK(k.precision == Precision::Other);
    CHECK_FALSE(k.tensor_core);
    CHECK_FALSE(k.known);
    CHECK(k.rule == "unknown");
  }
  KernelClass empty = classifyKernel("");
  CHECK(empty.rule == "unknown");
  CHECK_FALSE(empty.known);
}

TEST_CASE("tensor-core markers need word boundaries") {
  CHECK(usesTensorCores("volta_h884gemm_256x128_ldg8_nn"));
  CHECK(usesTensorCores("sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32"));
  CHECK(usesTensorCores("void cutlass::Kernel<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16>"));
  CHECK(usesTensorCores("void my_kernel<cutlass::arch::OpClassTensorOp>(int)"));
  CHECK(usesTensorCores("void kernel_using_mma_sync(float*)"));
  CHECK(usesTensorCores("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT"));
  // "gamma" contains "mma" and MIOpen's SubTensorOp contains "TensorOp": neither is an MMA.
  CHECK_FALSE(usesTensorCores("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel"
                              "<float, float>(long, long, float const*)"));
  CHECK_FALSE(usesTensorCores("SubTensorOpWithScalar1d"));
  CHECK_FALSE(usesTensorCores("volta_sgemm_128x64_nn"));
  CHECK_FALSE(usesTensorCores(""));
}

TEST_CASE("odd inputs do not break the classifier") {
  std::string huge(20000, 'x');
  huge += "<float";
  CHECK(classifyKernel(huge).precision == Precision::Fp32);
  for (const char* name : {"{lambda(", "{lambda()#1}", "<<<<", ">>>>(((", "_Z", "_Zgarbage",
                           "nvjet_", "nvjet_sm", "Cijk_", "Cijk_A_B", "void ", "\t\n"}) {
    INFO(name);
    KernelClass k = classifyKernel(name);
    CHECK(k.precision == Precision::Other);
  }
}
