#include "advisor/precision/kernel_classifier.h"

#include "advisor/precision/classification_rules.h"
#include "advisor/precision/name_text.h"

#include <optional>

namespace gpuwise::profiler {

namespace {

using detail::NameText;
using detail::PrecisionFrom;
using detail::Rule;
using detail::TensorCores;
using detail::TokenVerdict;

struct Decoded {
  Precision precision = Precision::Other;
  bool tensor_core = false;
  bool known = false;
};

std::optional<Precision> nvjetLetter(char c) {
  switch (c) {
  case 's': return Precision::Fp32;
  case 'h': return Precision::Fp16;
  case 't': return Precision::Bf16;
  case 'q': return Precision::Fp8;
  case 'o': return Precision::Fp4;
  case 'd': return Precision::Fp64;
  case 'i': return Precision::Int8;
  default: return std::nullopt;
  }
}

// nvjet_[smNNN[x]_]<code>_...: a 3-letter code is <A=B><compute><D> ("tst", "hsh", "sss"), a
// 5-letter one <A><B><C><compute><D> ("qqtst", "oohsh"). The precision is the narrower input.
Decoded decodeNvjet(std::string_view s) {
  s.remove_prefix(std::string_view("nvjet_").size());
  if (s.size() > 2 && s.substr(0, 2) == "sm" && s[2] >= '0' && s[2] <= '9') {
    size_t underscore = s.find('_');
    if (underscore == std::string_view::npos) return {Precision::Other, true, false};
    s.remove_prefix(underscore + 1);
  }
  std::string_view code = s.substr(0, s.find('_'));
  if (code.size() != 3 && code.size() != 5) return {Precision::Other, true, false};
  std::optional<Precision> a = nvjetLetter(code[0]);
  std::optional<Precision> b = code.size() == 5 ? nvjetLetter(code[1]) : a;
  if (!a || !b) return {Precision::Other, true, false};
  Precision p = detail::narrower(*a, *b);
  if (s.find("e2m1") != std::string_view::npos) p = Precision::Fp4;
  if (p == Precision::Fp32) {
    // "nvjet_sss_tf32_*" is FP32 data with TF32 tensor-core math; plain "sss" is true FP32.
    if (s.find("tf32") != std::string_view::npos) return {Precision::Tf32, true, true};
    return {Precision::Fp32, false, true};
  }
  return {p, true, true};
}

// Cijk_<A>_<B>_<type>_...: the type code's leading letters name the input type; an MFMA
// ("_MI16x16x1") means the AMD matrix cores. FP32 MFMA is native FP32 on AMD, so no TF32 promotion.
Decoded decodeTensile(std::string_view s) {
  size_t at = 0;
  for (int field = 0; field < 3 && at != std::string_view::npos; ++field) {
    at = s.find('_', at);
    if (at != std::string_view::npos) ++at;
  }
  bool mfma = false;
  for (size_t pos = s.find("_mi"); pos != std::string_view::npos; pos = s.find("_mi", pos + 1)) {
    if (pos + 3 < s.size() && s[pos + 3] >= '0' && s[pos + 3] <= '9') mfma = true;
  }
  if (at == std::string_view::npos || at >= s.size()) return {Precision::Other, mfma, false};
  std::string_view code = s.substr(at, s.find('_', at) - at);
  auto starts = [&](std::string_view p) { return code.substr(0, p.size()) == p; };
  Precision p = Precision::Other;
  if (starts("i8") || starts("4xi8"))
    p = Precision::Int8;
  else if (starts("f8") || starts("b8"))
    p = Precision::Fp8;
  else if (starts("x"))
    p = Precision::Tf32; // XF32
  else if (starts("s") || starts("c"))
    p = Precision::Fp32;
  else if (starts("d") || starts("z"))
    p = Precision::Fp64;
  else if (starts("h"))
    p = Precision::Fp16;
  else if (starts("b"))
    p = Precision::Bf16;
  return {p, mfma, p != Precision::Other};
}

KernelClass apply(const Rule& rule, const NameText& name) {
  KernelClass out;
  out.rule = rule.id;
  Decoded decoded;
  switch (rule.from) {
  case PrecisionFrom::Fixed:
    out.precision = rule.precision;
    out.known = rule.precision != Precision::Other || rule.other_is_known;
    break;
  case PrecisionFrom::Tokens: {
    detail::TokenResult t = detail::precisionFromTokens(name.text());
    if (t.verdict == TokenVerdict::None) {
      out.precision = rule.precision;
      out.known = rule.precision != Precision::Other || rule.other_is_known;
    } else {
      out.precision = t.precision; // Other for TokenVerdict::Integer: definite, not a gap
      out.known = true;
    }
    break;
  }
  case PrecisionFrom::NvjetCode: decoded = decodeNvjet(name.text()); break;
  case PrecisionFrom::TensileCode: decoded = decodeTensile(name.text()); break;
  }

  switch (rule.tensor_cores) {
  case TensorCores::No: out.tensor_core = false; break;
  case TensorCores::Yes: out.tensor_core = true; break;
  case TensorCores::Markers: out.tensor_core = name.matches(detail::kTensorCoreMarkers); break;
  case TensorCores::Decoder:
    out.precision = decoded.precision;
    out.tensor_core = decoded.tensor_core;
    out.known = decoded.known;
    return out;
  }
  // NVIDIA tensor cores have no FP32 mode: FP32 operands of an MMA are rounded to TF32.
  if (out.tensor_core && out.precision == Precision::Fp32) out.precision = Precision::Tf32;
  // The catch-all entry that found no type word has recognised nothing.
  if (!out.known && rule.match.empty()) out.rule = "unknown";
  return out;
}

} // namespace

KernelClass classifyKernel(std::string_view name) {
  if (name.empty()) return {};
  NameText text(name);
  for (const Rule& rule : detail::classificationRules()) {
    if (!text.matches(rule.match)) continue;
    if (!rule.also.empty() && !text.matches(rule.also)) continue;
    if (!rule.unless.empty() && text.matches(rule.unless)) continue;
    return apply(rule, text);
  }
  return {};
}

bool usesTensorCores(std::string_view name) {
  if (name.empty()) return false;
  return NameText(name).matches(detail::kTensorCoreMarkers);
}

} // namespace gpuwise::profiler
