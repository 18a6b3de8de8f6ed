// The element-type words kernel names carry, and the order in which they count as evidence.
//
// Names often mention several types: a BF16 PyTorch kernel computes in float ("BinaryFunctor<
// c10::BFloat16, c10::BFloat16, c10::BFloat16, MulFunctor<float>>"), a cuBLAS GEMV has int index
// arguments, a cuDNN FFT kernel takes float2 buffers. So the evidence is ranked:
//   1. Narrow types win wherever they appear (fp4 > fp8 > bf16 > fp16 > tf32 > int8): a kernel that
//      touches BF16 tensors is part of the BF16 work even when it accumulates in float.
//   2. Otherwise floating-point parameter types of a PyTorch lambda ("{lambda(float, float)#1}"),
//      which are the element types of the TensorIterator loop, beat whatever the enclosing
//      function's signature mentions (nan_to_num_kernel_cuda(..., optional<double>) runs on float).
//      Lambdas with only integer parameters do not decide: gpu_kernel_impl's index lambda is
//      "{lambda(int)#1}" whatever the element type.
//   3. Otherwise the first float/double word in the name (template arguments come first).
//   4. Only integer, bool or opaque-byte types: not floating-point work (TokenVerdict::Integer).
#include "advisor/precision/name_text.h"

#include <array>

namespace gpuwise::profiler::detail {

namespace {

enum class Left : uint8_t {
  Any,
  Word, // the character before is not a letter
  NotB, // not preceded by 'b' ("f16" inside "bf16" is not FP16)
  NotU, // not preceded by 'u' ("ue4m3" is an FP8 scale format of NVFP4, "uint8" is not int8)
};

struct Token {
  std::string_view text;
  Precision precision;
  Left left;
  bool right_word; // the character after is not a letter or digit ("float" but not "float4")
};

constexpr std::array kStrongTokens = {
    Token{"e2m1", Precision::Fp4, Left::Any, false},
    Token{"fp4", Precision::Fp4, Left::Any, false},
    Token{"xf4", Precision::Fp4, Left::Any, false}, // CUTLASS block-scaled "ue4m3xf4", "ue8m0xf4"
    Token{"e4m3", Precision::Fp8, Left::NotU, false},
    Token{"e5m2", Precision::Fp8, Left::Any, false},
    Token{"fp8", Precision::Fp8, Left::Any, false}, // also fbgemm's "hfp8"
    Token{"float8", Precision::Fp8, Left::Any, false},
    Token{"bf16", Precision::Bf16, Left::Any, false},
    Token{"bfloat16", Precision::Bf16, Left::Any,
          false}, // c10::BFloat16, __nv_bfloat16, cutlass::bfloat16_t
    Token{"fp16", Precision::Fp16, Left::Any, false},
    Token{"half", Precision::Fp16, Left::Word, false}, // c10::Half, __half, cutlass::half_t
    Token{"f16", Precision::Fp16, Left::NotB, false},  // xmma "f16f16_f16f32", cutlass "_f16_"
    Token{"hgemm", Precision::Fp16, Left::Word, false},
    Token{"hcudnn", Precision::Fp16, Left::Word, false},
    Token{"tf32", Precision::Tf32, Left::Any, false},
    Token{"tfloat32", Precision::Tf32, Left::Any, false}, // cutlass::tfloat32_t
    Token{"int8", Precision::Int8, Left::NotU, false},
    Token{"signed char", Precision::Int8, Left::Word, false}, // not "unsigned char"
    Token{"i8i8", Precision::Int8, Left::Any, false},         // xmma "i8i8_i8i32"
};

constexpr std::array kFloatTokens = {
    Token{"float", Precision::Fp32, Left::Word, true},
    Token{"float2", Precision::Fp32, Left::Word, true}, // complex FP32 (cuDNN FFT convolution)
    Token{"fp32", Precision::Fp32, Left::Any, false},
    Token{"f32", Precision::Fp32, Left::Word, false},
    Token{"sgemm", Precision::Fp32, Left::Word, false},
    Token{"cgemm", Precision::Fp32, Left::Word, false},
    Token{"gcgemm", Precision::Fp32, Left::Word, false},
    Token{"scudnn", Precision::Fp32, Left::Word, false},
    Token{"double", Precision::Fp64, Left::Word, true},
    Token{"fp64", Precision::Fp64, Left::Any, false},
    Token{"f64", Precision::Fp64, Left::Word, false},
    Token{"dgemm", Precision::Fp64, Left::Word, false},
    Token{"zgemm", Precision::Fp64, Left::Word, false},
    Token{"dcudnn", Precision::Fp64, Left::Word, false},
};

constexpr std::array<std::string_view, 11> kIntegerWords = {
    "int",   "long",  "short", "bool",   "char",   "unsigned",
    "int32", "int64", "uint8", "uint32", "uint64",
};

bool isLetter(char c) {
  return c >= 'a' && c <= 'z';
} // text is lower-cased
bool isAlnum(char c) {
  return isLetter(c) || (c >= '0' && c <= '9');
}

bool leftOk(std::string_view s, size_t pos, Left left) {
  if (pos == 0) return true;
  char before = s[pos - 1];
  switch (left) {
  case Left::Any: return true;
  case Left::Word: return !isLetter(before);
  case Left::NotB: return before != 'b';
  case Left::NotU: return before != 'u';
  }
  return true;
}

// First position of `t` in `s` that satisfies its boundaries; npos when none.
size_t findToken(std::string_view s, const Token& t) {
  for (size_t pos = s.find(t.text); pos != std::string_view::npos; pos = s.find(t.text, pos + 1)) {
    size_t end = pos + t.text.size();
    if (!leftOk(s, pos, t.left)) continue;
    if (t.right_word && end < s.size() && isAlnum(s[end])) continue;
    return pos;
  }
  return std::string_view::npos;
}

bool hasIntegerWord(std::string_view s) {
  for (std::string_view w : kIntegerWords) {
    if (findToken(s, Token{w, Precision::Other, Left::Word, true}) != std::string_view::npos) {
      return true;
    }
  }
  return s.find("opaquetype") != std::string_view::npos;
}

// Steps 3 and 4 of the ranking, on any piece of text.
TokenResult weakTokens(std::string_view s) {
  size_t best = std::string_view::npos;
  Precision found = Precision::Other;
  for (const Token& t : kFloatTokens) {
    size_t pos = findToken(s, t);
    if (pos < best) {
      best = pos;
      found = t.precision;
    }
  }
  if (best != std::string_view::npos) return {TokenVerdict::Floating, found};
  if (hasIntegerWord(s)) return {TokenVerdict::Integer, Precision::Other};
  return {};
}

// Floating-point verdict of the last PyTorch lambda whose parameters name a float type, walking
// back from the end of the name; None when no lambda does.
TokenResult lambdaParameters(std::string_view s) {
  constexpr std::string_view kLambda = "{lambda(";
  for (size_t pos = s.rfind(kLambda); pos != std::string_view::npos;) {
    size_t open = pos + kLambda.size();
    size_t close = s.find(')', open);
    if (close != std::string_view::npos && close > open) {
      TokenResult r = weakTokens(s.substr(open, close - open));
      if (r.verdict == TokenVerdict::Floating) return r;
    }
    if (pos == 0) break;
    pos = s.rfind(kLambda, pos - 1);
  }
  return {};
}

int narrowness(Precision p) {
  switch (p) {
  case Precision::Fp4: return 0;
  case Precision::Fp8: return 1;
  case Precision::Int8: return 2;
  case Precision::Fp16: return 3;
  case Precision::Bf16: return 3;
  case Precision::Tf32: return 4;
  case Precision::Fp32: return 5;
  case Precision::Fp64: return 6;
  case Precision::Other: break;
  }
  return 7;
}

} // namespace

Precision narrower(Precision a, Precision b) {
  return narrowness(b) < narrowness(a) ? b : a;
}

TokenResult precisionFromTokens(std::string_view s) {
  for (const Token& t : kStrongTokens) {
    if (findToken(s, t) != std::string_view::npos) return {TokenVerdict::Floating, t.precision};
  }
  if (TokenResult r = lambdaParameters(s); r.verdict != TokenVerdict::None) return r;
  return weakTokens(s);
}

} // namespace gpuwise::profiler::detail
