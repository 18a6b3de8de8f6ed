// THE classification table: every kernel-name pattern gpuwise knows, in the order they are tried.
// The first entry whose patterns match decides; see classification_rules.h for the fields and
// name_text.h for the pattern syntax ('|' alternatives, '^' prefix, '<' word start; lower case).
//
// To teach gpuwise a new kernel family: add an entry above the first one that wrongly catches it,
// and add the real name with its expected class to tests/advisor/precision/kernel_names.tsv.
#include "advisor/precision/classification_rules.h"

#include <array>

namespace gpuwise::profiler::detail {

namespace {

using P = Precision;
using F = PrecisionFrom;
using T = TensorCores;

// Instruction families that only exist on tensor cores: WMMA/HMMA (Volta+), IMMA (int8), DMMA
// (FP64, A100+), GMMA/WGMMA (Hopper warpgroup MMA), UMMA/tcgen05 (Blackwell), CUTLASS "tensorop"
// and its OpClassTensorOp/MmaTensorOp types, NVIDIA's xmma generator, inline "mma" PTX, and the
// <accumulator><M><N><K> shapes cuBLAS and CUTLASS print (h884 = FP16 accumulate 8x8x4 ...).
// "<mma" needs a word start so that "gamma" (GammaBetaBackward) does not count; "<tensorop" so that
// MIOpen's "SubTensorOp" does not.
constexpr std::string_view kMarkers =
    "<wmma|<hmma|<imma|<dmma|<gmma|<wgmma|<umma|tcgen05|<xmma|<mma|"
    "<tensorop|mmatensorop|opclasstensorop|"
    "h884|h1688|h16816|s884|s1688|s16816|s161616|i8816|i8832|i16832|d884|^nvjet_";

constexpr std::array kRules = {
    // --- Communication: moves bytes, whatever their type. Counted as other, not as compute.
    Rule{"nccl", "nccl", "", "", F::Fixed, P::Other, T::No, true},
    Rule{"collective",
         "all_reduce|allreduce|all_gather|allgather|reduce_scatter|reducescatter|alltoall|"
         "all_to_all|multimem_|cross_device_reduce",
         "", "", F::Fixed, P::Other, T::No, true},

    // --- Vendor GEMM generators whose names encode the types in a short code.
    // cuBLASLt's Hopper/Blackwell kernels: nvjet_[smXX_]<code>_<tile>..., code letters per operand
    // (t = bf16, h = fp16, s = fp32, q = fp8, o = fp4): "tst" BF16, "hsh" FP16, "qqtst" FP8,
    // "ootst" NVFP4 (its "Avec16UE4M3" is the scale format, not the data), "sss_tf32" TF32.
    Rule{"cublaslt.nvjet", "^nvjet_", "", "", F::NvjetCode, P::Other, T::Decoder, false},
    // ROCm Tensile / hipBLASLt: Cijk_<A layout>_<B layout>_<type code>_..., MI<m>x<n> = MFMA.
    Rule{"rocm.tensile", "^cijk_", "", "", F::TensileCode, P::Other, T::Decoder, false},

    // --- Attention: FlashAttention (Dao, pytorch_flash, flash::), FMHA (xformers/PyTorch
    // mem-efficient "fmha_cutlassF_*", TensorRT-LLM "fmhaSm100aKernel_*"), cuDNN SDPA. All run
    // their matmuls on tensor cores; the element type is in the template arguments or the name.
    Rule{"attention",
         "flash_fwd|flash_bwd|pytorch_flash|flash::|flashattn|flash_attn|<fmha|sdpa|"
         "attention_kernel|<attnkernel",
         "", "", F::Tokens, P::Other, T::Yes, false},

    // --- MMA instruction shapes, <accumulator><M><N><K>, in cuBLAS/cuDNN/CUTLASS names.
    // hNNN: FP16 accumulate, so FP16 data ("volta_h884gemm", "turing_h1688gemm").
    Rule{"mma_shape.fp16", "h884|h1688|h16816", "", "", F::Fixed, P::Fp16, T::Yes, true},
    // iNNN / IMMA: int8 ("cutlass_80_tensorop_i16832gemm_s8").
    Rule{"mma_shape.int8", "i8816|i8832|i16832|<imma", "", "", F::Fixed, P::Int8, T::Yes, true},
    // dNNN / DMMA: FP64 tensor cores (A100, H100).
    Rule{"mma_shape.fp64", "d884|<dmma", "", "", F::Fixed, P::Fp64, T::Yes, true},
    // sNNN: FP32 accumulate; the data type is named beside it ("ampere_bf16_s16816gemm_bf16",
    // "volta_fp16_s884gemm_fp16") and when it is not, the data is FP32 going through the tensor
    // cores, which is TF32 ("cutlass_80_tensorop_s1688gemm_128x128").
    Rule{"mma_shape.fp32_acc", "s884|s1688|s16816|s161616", "", "", F::Tokens, P::Tf32, T::Yes,
         false},

    // --- NVIDIA's xmma generator (cuBLAS/cuDNN Ampere+): "sm80_xmma_fprop_implicit_gemm_tf32f32_
    // tf32f32_f32_...", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_...": A/B types first.
    Rule{"xmma", "<xmma", "", "", F::Tokens, P::Other, T::Yes, false},

    // --- CUTLASS SIMT kernels: CUDA cores ("cutlass_80_simt_sgemm", "cutlass3x_sm100_simt_sgemm").
    Rule{"cutlass.simt", "simt", "", "", F::Tokens, P::Fp32, T::No, false},

    // --- Hopper/Blackwell generated GEMM, attention and convolution kernels (CUTLASS 3.x
    // "cutlass3x_sm90_*", cuDNN/cuBLAS "sm90_*", "sm100_*"): WGMMA/UMMA based.
    Rule{"sm90plus.mma", "<sm90|<sm100|<sm103|<sm120|<cutlass3x",
         "gemm|fmha|attention|conv|fprop|dgrad|wgrad", "", F::Tokens, P::Other, T::Yes, false},

    // --- Anything else that names a tensor-core instruction or CUTLASS tensor-op type
    // ("cutlass_80_wmma_tensorop_*", mangled CUTLASS convolutions with MmaTensorOp).
    Rule{"tensor_core.mma", kMarkers, "", "", F::Tokens, P::Other, T::Yes, false},

    // --- cuDNN.
    // Pre-Ampere SASS convolutions: <s|h|d>cudnn = FP32/FP16/FP64 data on CUDA cores
    // ("volta_scudnn_128x64_relu_interior_nn_v1", "cudnn_infer_ampere_scudnn_*").
    Rule{"cudnn.sass", "<scudnn|<hcudnn|<dcudnn", "", "", F::Tokens, P::Other, T::No, false},
    // Offset/index helpers of cuDNN's CASK engine: integer bookkeeping, no tensor math.
    Rule{"cudnn.helper", "cask_cudnn", "", "gemm|conv|mma", F::Fixed, P::Other, T::No, true},
    // Convolution engines (cuDNN, ATen): implicit/explicit GEMM, Winograd, FFT, grouped/depthwise.
    Rule{"convolution",
         "implicit_convolve|explicit_convolve|implicit_gemm|implicitgemm|winograd|<fft|"
         "conv2d_grouped|conv_depthwise|<dgrad|<wgrad|<fprop",
         "", "", F::Tokens, P::Other, T::Markers, false},
    // Batch norm, layout transforms and the rest of cuDNN: types in template arguments.
    Rule{"cudnn", "cudnn", "", "", F::Tokens, P::Other, T::Markers, false},

    // --- cuBLAS without tensor cores: <s|d|h|c|z>gemm SASS kernels ("volta_sgemm_128x64_nn",
    // "ampere_gcgemm_64x64_nt" = complex FP32 for FFT convolution), GEMV, split-K reductions and
    // the cuBLAS/cuBLASLt helper kernels that take cublas*Params.
    Rule{"cublas",
         "<sgemm|<dgemm|<hgemm|<cgemm|gcgemm|<zgemm|cublas|<gemv|<gemmk1|<gemmsn|<splitkreduce|"
         "<dot_kernel|<scal_kernel",
         "", "", F::Tokens, P::Other, T::Markers, false},

    // --- TensorRT-LLM / FlashInfer trtllm-gen batched GEMMs on Blackwell:
    // "bmm_<out>_<A><B>_<acc>_..._sm100f", e.g. bmm_Bfloat16_MxE2m1MxE4m3_Fp32 = FP4 weights x FP8
    // activations (classified FP4, the narrower input), UMMA on tensor cores.
    Rule{"trtllm.bmm", "^bmm_", "", "", F::Tokens, P::Other, T::Yes, false},

    // --- Libraries built on PyTorch and serving stacks: types in template arguments. Before the
    // generic CUTLASS and ATen entries, whose namespaces they mention.
    Rule{"fbgemm", "fbgemm|split_embedding|<bounds_check_indices", "", "", F::Tokens, P::Other,
         T::No, false},
    Rule{"cub", "cub::|thrust::", "", "", F::Tokens, P::Other, T::No, false},
    Rule{"llm_serving", "vllm::|tensorrt_llm|flashinfer|moe::|sglang", "", "", F::Tokens, P::Other,
         T::Markers, false},

    // --- Remaining CUTLASS kernels (epilogues, split-K reductions): types in template arguments.
    Rule{"cutlass", "cutlass", "", "", F::Tokens, P::Other, T::Markers, false},

    // --- Triton (torch.compile / Inductor): "triton_poi_fused_add_0" says nothing about types.
    Rule{"triton", "^triton_|^triton__", "", "", F::Tokens, P::Other, T::Markers, true},

    // --- PyTorch ATen/c10: element types are template arguments or lambda parameters
    // ("vectorized_elementwise_kernel<4, CUDAFunctor_add<c10::BFloat16>, ...>").
    Rule{"pytorch.aten",
         "at::|c10::|<cunn_|at_cuda_detail|softmax_warp|<multi_tensor_apply|<elementwise_kernel|"
         "<reduce_kernel|<vectorized_elementwise|<unrolled_elementwise",
         "", "", F::Tokens, P::Other, T::No, false},

    // --- Anything else: whatever type words the name carries.
    Rule{"type_words", "", "", "", F::Tokens, P::Other, T::Markers, false},
};

} // namespace

const std::string_view kTensorCoreMarkers = kMarkers;

std::span<const Rule> classificationRules() {
  return kRules;
}

} // namespace gpuwise::profiler::detail
