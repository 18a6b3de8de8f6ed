#include "advisor/rules/gpu_tables.h"

#include <array>
#include <cctype>
#include <string>

namespace gpuwise::advisor {
namespace {

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Dense peak TFLOPS from NVIDIA's data sheets (sparsity figures halved where the sheet gives
// only those): V100 SXM2 (Volta architecture whitepaper / V100 data sheet: 15.7 FP32, 125 FP16
// tensor), T4 (8.1 FP32, 65 FP16 tensor), A100 (A100 data sheet: 19.5 FP32, 156 TF32, 312
// BF16/FP16), A10 (31.2 / 62.5 / 125), A30 (10.3 / 82 / 165), L4 (30.3 / 60 / 121), L40S
// (91.6 / 183 / 362), H100 SXM (H100 data sheet: 67 FP32, 495 TF32, 990 BF16/FP16), H200 (H200
// data sheet: same SXM figures as H100), B200 (HGX B200 data sheet per GPU: 75 FP32, 1100 TF32,
// 2250 BF16/FP16). The ratio of a tensor rate to the FP32 rate bounds what moving GEMMs and
// convolutions to tensor cores can gain; real kernels reach less (memory bound layers), which is
// why the precision rules report table-based estimates with medium confidence at most.
constexpr std::array<MathThroughput, 11> kThroughput = {{
    {"V100", 15.7, 0, 0, 125, true},
    {"T4", 8.1, 0, 0, 65, true},
    {"A100", 19.5, 156, 312, 312, true},
    {"A10", 31.2, 62.5, 125, 125, true},
    {"A30", 10.3, 82, 165, 165, true},
    {"L40S", 91.6, 183, 362, 362, true},
    {"L4", 30.3, 60, 121, 121, true},
    {"H100", 67, 495, 990, 990, true},
    {"H200", 67, 495, 990, 990, true},
    {"B200", 75, 1100, 2250, 2250, true},
    {"GB200", 80, 1250, 2500, 2500, true},
}};

// MIG profiles from the NVIDIA MIG user guide, "Supported MIG Profiles"
// (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html): A100
// 1g = 1/8 of the memory and 1/7 of the SMs, 2g = 2/8 and 2/7, 3g = 4/8 and 3/7, 4g = 4/8 and
// 4/7, 7g = all; the 1g.Ngb profile with twice the memory has 2/8 memory; the A30 has 4 slices
// of each (1g.6gb, 2g.12gb, 4g.24gb). Profile names give the memory in GB, rounded.
constexpr std::array<MigProfile, 6> kA100_40 = {{{"1g.5gb", 5, 1, 1, 7},
                                                 {"1g.10gb", 10, 1, 2, 4},
                                                 {"2g.10gb", 10, 2, 2, 3},
                                                 {"3g.20gb", 20, 3, 4, 2},
                                                 {"4g.20gb", 20, 4, 4, 1},
                                                 {"7g.40gb", 40, 7, 8, 1}}};
constexpr std::array<MigProfile, 6> kA100_80 = {{{"1g.10gb", 10, 1, 1, 7},
                                                 {"1g.20gb", 20, 1, 2, 4},
                                                 {"2g.20gb", 20, 2, 2, 3},
                                                 {"3g.40gb", 40, 3, 4, 2},
                                                 {"4g.40gb", 40, 4, 4, 1},
                                                 {"7g.80gb", 80, 7, 8, 1}}};
constexpr std::array<MigProfile, 3> kA30 = {
    {{"1g.6gb", 6, 1, 1, 4}, {"2g.12gb", 12, 2, 2, 2}, {"4g.24gb", 24, 4, 4, 1}}};
constexpr std::array<MigProfile, 6> kH100_80 = {{{"1g.10gb", 10, 1, 1, 7},
                                                 {"1g.20gb", 20, 1, 2, 4},
                                                 {"2g.20gb", 20, 2, 2, 3},
                                                 {"3g.40gb", 40, 3, 4, 2},
                                                 {"4g.40gb", 40, 4, 4, 1},
                                                 {"7g.80gb", 80, 7, 8, 1}}};
constexpr std::array<MigProfile, 6> kH100_94 = {{{"1g.12gb", 12, 1, 1, 7},
                                                 {"1g.24gb", 24, 1, 2, 4},
                                                 {"2g.24gb", 24, 2, 2, 3},
                                                 {"3g.47gb", 47, 3, 4, 2},
                                                 {"4g.47gb", 47, 4, 4, 1},
                                                 {"7g.94gb", 94, 7, 8, 1}}};
constexpr std::array<MigProfile, 6> kH200 = {{{"1g.18gb", 18, 1, 1, 7},
                                              {"1g.35gb", 35, 1, 2, 4},
                                              {"2g.35gb", 35, 2, 2, 3},
                                              {"3g.71gb", 71, 3, 4, 2},
                                              {"4g.71gb", 71, 4, 4, 1},
                                              {"7g.141gb", 141, 7, 8, 1}}};
constexpr std::array<MigProfile, 6> kB200 = {{{"1g.23gb", 23, 1, 1, 7},
                                              {"1g.45gb", 45, 1, 2, 4},
                                              {"2g.45gb", 45, 2, 2, 3},
                                              {"3g.90gb", 90, 3, 4, 2},
                                              {"4g.90gb", 90, 4, 4, 1},
                                              {"7g.180gb", 180, 7, 8, 1}}};

} // namespace

MathThroughput mathThroughputFor(std::string_view name, int major, int minor) {
  std::string upper(name);
  for (auto& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // Longer names first where one is a prefix of another (GB200 before B200, L40S before L4,
  // A100 before A10).
  for (const char* m :
       {"GB200", "B200", "H200", "H100", "A100", "A30", "A10", "L40S", "L4", "V100", "T4"}) {
    if (contains(upper, m))
      for (const auto& t : kThroughput)
        if (std::string_view(t.model) == m) return t;
  }
  auto pick = [](std::string_view m) {
    for (const auto& t : kThroughput)
      if (std::string_view(t.model) == m) return t;
    return MathThroughput{};
  };
  MathThroughput t;
  if (major == 7 && minor == 0)
    t = pick("V100");
  else if (major == 7 && minor == 5)
    t = pick("T4");
  else if (major == 8 && minor == 0)
    t = pick("A100");
  else if (major == 8)
    t = pick("A10");
  else if (major == 9)
    t = pick("H100");
  else if (major == 10)
    t = pick("B200");
  else
    return {};
  t.known = false; // the architecture's representative, not this GPU's own figures
  return t;
}

// NVLink: NVIDIA's per-GPU aggregate, halved to one direction (V100 300, A100 600, H100/H200 900,
// B200/GB200 1800 GB/s both ways). PCIe: x16 per direction, Gen3 16, Gen4 32, Gen5 64 GB/s.
constexpr LinkBandwidth kLinks[] = {
    {"GB200", 900, 64, true}, {"B200", 900, 64, true}, {"H200", 450, 64, true},
    {"H100", 450, 64, true},  {"A100", 300, 32, true}, {"A30", 0, 32, true},
    {"A10", 0, 32, true},     {"L40S", 0, 32, true},   {"L4", 0, 32, true},
    {"V100", 150, 16, true},  {"T4", 0, 16, true},
};

LinkBandwidth linkBandwidthFor(std::string_view name) {
  std::string upper(name);
  for (auto& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& link : kLinks) {
    if (!contains(upper, link.model)) continue;
    LinkBandwidth l = link;
    if (contains(upper, "PCIE")) l.nvlink_gb_per_s = 0;
    return l;
  }
  return {};
}

MigGpu migGpuFor(std::string_view name, uint64_t memory_total_bytes) {
  std::string upper(name);
  for (auto& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double gb = static_cast<double>(memory_total_bytes) / 1e9;
  if (contains(upper, "GB200") || contains(upper, "B200")) return {"B200-180GB", 7, 8, kB200};
  if (contains(upper, "H200")) return {"H200-141GB", 7, 8, kH200};
  if (contains(upper, "H100")) {
    if (contains(upper, "94GB") || contains(upper, "NVL") || gb > 90)
      return {"H100-94GB", 7, 8, kH100_94};
    return {"H100-80GB", 7, 8, kH100_80};
  }
  if (contains(upper, "A100")) {
    if (contains(upper, "80GB") || gb > 50) return {"A100-80GB", 7, 8, kA100_80};
    return {"A100-40GB", 7, 8, kA100_40};
  }
  if (contains(upper, "A30")) return {"A30-24GB", 4, 4, kA30};
  return {};
}

} // namespace gpuwise::advisor
