#include "advisor/cost/gpu_prices.h"

#include <array>
#include <cctype>

namespace gpuwise::advisor {
namespace {

// USD per GPU-hour, on-demand list-price estimates (see the header). Where a model is sold in
// 8-GPU instances the figure is the instance price / 8; L4, A10G and V100 also come one per
// instance (g6.xlarge, g5.xlarge, p3.2xlarge class).
constexpr std::array<GpuPrice, 8> kTable = {{
    {"B200", 14.24},
    {"H200", 10.60},
    {"H100", 6.88},
    {"A100 80GB", 5.12},
    {"A100 40GB", 4.10},
    {"L4", 0.80},
    {"A10G", 1.01},
    {"V100", 3.06},
}};

constexpr uint64_t kA100SmallMemoryLimit = 48'000'000'000ull;

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// True when `word` occurs in `text` (case-insensitively) not glued to other letters or digits.
bool containsWord(std::string_view text, std::string_view word) {
  for (size_t at = 0; at + word.size() <= text.size(); ++at) {
    bool same = true;
    for (size_t i = 0; i < word.size() && same; ++i)
      same = std::toupper(static_cast<unsigned char>(text[at + i])) ==
             std::toupper(static_cast<unsigned char>(word[i]));
    if (!same) continue;
    bool left = at == 0 || !isWordChar(text[at - 1]);
    bool right = at + word.size() == text.size() || !isWordChar(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

std::optional<GpuPrice> row(std::string_view model) {
  for (const auto& r : kTable)
    if (r.model == model) return r;
  return std::nullopt;
}

} // namespace

std::span<const GpuPrice> gpuPriceTable() {
  return kTable;
}

std::optional<GpuPrice> lookupGpuPrice(std::string_view name, uint64_t memory_total_bytes) {
  for (std::string_view model : {"B200", "H200", "H100", "A10G", "L4", "V100"})
    if (containsWord(name, model)) return row(model);
  // "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-40GB".
  if (containsWord(name, "A100")) {
    if (name.find("80GB") != std::string_view::npos) return row("A100 80GB");
    if (name.find("40GB") != std::string_view::npos) return row("A100 40GB");
    return row(memory_total_bytes > kA100SmallMemoryLimit ? "A100 80GB" : "A100 40GB");
  }
  return std::nullopt;
}

} // namespace gpuwise::advisor
