#include "advisor/cost/board_power.h"

#include <cctype>

namespace gpuwise::advisor {
namespace {

// Maximum board power (TDP / TBP) by model, and where the figure was read (2026-12):
//  B200        1000 W  awesomeagents.ai/hardware/nvidia-b200: "1,000W TDP"; haink.org (H100 vs
//                      H200 vs B200): "~1,000W TDP". (tweaktown.com/news/97059 reports up to
//                      1,200 W for the full-spec part; servers ship the 1,000 W configuration.)
//  H200 SXM     700 W  aiminingco.com/gpu/h200/specs: "TDP remains at 700W, matching the H100
//                      SXM"; saulelectric.com/nvidia-h200.html: "700W (SXM version)".
//  H100 SXM     700 W  gpu.blog/gpus/nvidia-h100-sxm: "TDP Up to 700W (configurable)".
//  H100 PCIe    350 W  NVIDIA H100 PCIe product brief PB-11133-001_v02 (copy at manuals.plus):
//                      "operates unconstrained up to its maximum thermal design power (TDP)
//                      level of 350 W".
//  A100 SXM4    400 W  glennklockwood.com/garden/processors/A100 (from NVIDIA's A100 datasheet):
//                      "400 W maximum", 40 GB and 80 GB alike; thundercompute.com A100 guide:
//  A100 PCIe    300 W  TDP PCIe 40GB 250 W, PCIe 80GB 300 W, SXM 400 W.
//  L4            72 W  aiwiki.ai/wiki/nvidia_l4: "operates within a 72 watt power envelope";
//                      pcpartdb.com: "TDP 72 W".
//  A10G         150 W  NOT VERIFIED: the A10's 150 W from memory of NVIDIA's A10 datasheet; AWS
//                      publishes no board power for its A10G variant (baseten.co: same memory
//                      and bandwidth as the A10, different clocks).
//  V100 SXM2    300 W  hwupgrade.it (Tesla V100 PCIe announcement): "dai 300 Watt del modello
//  V100 PCIe    250 W  SXM2 ai 250 Watt" of the PCIe card. DGX Station's V100-DGXS is the SXM2
//                      part: 300 W.
//  MI300X       750 W  gpu.blog/gpus/instinct-mi300x-mi300x: "TDP 750 W"; meterpreter.org: "AMD
//                      confirms Instinct MI300X power consumption up to 750W" (OAM module).
struct Row {
  std::string_view model;
  double watts;
};
constexpr Row kB200{"B200", 1000}, kH200{"H200 SXM", 700}, kH100Sxm{"H100 SXM", 700},
    kH100Pcie{"H100 PCIe", 350}, kA100Sxm{"A100 SXM4", 400}, kA100Pcie80{"A100 PCIe 80GB", 300},
    kA100Pcie40{"A100 PCIe 40GB", 250}, kL4{"L4", 72}, kA10G{"A10G", 150},
    kV100Sxm{"V100 SXM2", 300}, kV100Pcie{"V100 PCIe", 250}, kMi300x{"MI300X", 750};

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// `word` in `text`, case-insensitively, not glued to other letters or digits.
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

std::optional<BoardPower> of(const Row& r) {
  return BoardPower{r.model, r.watts};
}

} // namespace

std::optional<BoardPower> boardPowerOf(std::string_view name) {
  const bool pcie = containsWord(name, "PCIe");
  if (containsWord(name, "B200")) return of(kB200);
  if (containsWord(name, "H200")) return of(kH200); // the NVL (PCIe) H200 is not in the table
  if (containsWord(name, "H100")) return of(pcie ? kH100Pcie : kH100Sxm);
  if (containsWord(name, "A100")) {
    if (!pcie) return of(kA100Sxm);
    return of(name.find("40GB") != std::string_view::npos ? kA100Pcie40 : kA100Pcie80);
  }
  if (containsWord(name, "L4")) return of(kL4);
  if (containsWord(name, "A10G")) return of(kA10G);
  if (containsWord(name, "V100")) return of(pcie ? kV100Pcie : kV100Sxm);
  if (containsWord(name, "MI300X")) return of(kMi300x);
  return std::nullopt;
}

} // namespace gpuwise::advisor
