#include "advisor/gpu/gpu_classes.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace gpuwise::advisor {
namespace {

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

constexpr MigGpu kMigA100_40{"A100-40GB", 7, 8, kA100_40};
constexpr MigGpu kMigA100_80{"A100-80GB", 7, 8, kA100_80};
constexpr MigGpu kMigA30{"A30-24GB", 4, 4, kA30};
constexpr MigGpu kMigH100_80{"H100-80GB", 7, 8, kH100_80};
constexpr MigGpu kMigH100_94{"H100-94GB", 7, 8, kH100_94};
constexpr MigGpu kMigH200{"H200-141GB", 7, 8, kH200};
constexpr MigGpu kMigB200{"B200-180GB", 7, 8, kB200};

constexpr auto kNv = GpuVendor::Nvidia;

// Dense peak figures from the vendors' data sheets; where a sheet gives only sparsity figures
// ("with sparsity" / "*") they are halved. Links: NVLink's per-GPU aggregate halved to one
// direction; PCIe x16 per direction Gen3 16, Gen4 32, Gen5 64 GB/s. FP64 of GPUs whose sheet
// gives none (L40S, L4, A10G, A10, T4): FP32 / 64 (GA10x/AD10x/TU104 run FP64 at 1/64 rate, the
// CUDA C++ Programming Guide's "Arithmetic Instructions" throughput table). Prices:
// cost/gpu_prices.h (on-demand list-price estimates, kPriceTableDate); 0 = not in that table.
//
// B200: HGX B200 (https://www.nvidia.com/en-us/data-center/hgx/, 8 GPUs: FP64 tensor 296 TF,
//   FP32 600 TF, TF32 18 PF*, BF16 36 PF*, FP8 72 PF*, INT8 72 POPS*, 1.44 TB at 62 TB/s) per GPU;
//   148 SMs; 1000 W; NVLink 5 1.8 TB/s. https://glennklockwood.com/garden/processors/B200 gives
//   the HGX B200 at 1000 W as FP64 40, FP32 80, TF32 1100, BF16 2250, FP8/INT8 4500 dense and
//   8 TB/s; the table keeps NVIDIA's HGX totals per GPU. GB200: GB200 NVL72 per GPU (20 PF FP8* /
//   2.5 PF BF16 dense, 186 GB, 8 TB/s, 1200 W; the same page: FP64 45, TF32 1250).
// H200: https://www.nvidia.com/en-us/data-center/h200/ (SXM: FP64 34, FP64 tensor 67, FP32 67,
//   TF32 989*, BF16/FP16 1979*, FP8/INT8 3958*, 141 GB at 4.8 TB/s, up to 700 W, NVLink 900 GB/s,
//   PCIe Gen5 128 GB/s); 132 SMs.
// H100 SXM and PCIe: https://www.nvidia.com/en-us/data-center/h100/ (SXM: FP64 34, FP64 tensor
//   67, FP32 67, TF32 989*, BF16/FP16 1979*, FP8/INT8 3958*, 80 GB at 3.35 TB/s, 700 W, NVLink
//   900 GB/s; PCIe: FP64 26, FP64 tensor 51, FP32 51, TF32 756*, BF16/FP16 1513*, FP8/INT8
//   3026*, 80 GB at 2 TB/s, 350 W, 114 SMs; NVL: FP64 30, tensor 60, FP32 60, TF32 835*,
//   BF16 1671*, FP8/INT8 3341*, 94 GB at 3.9 TB/s, 400 W, NVLink bridge 600 GB/s).
// A100: data sheet (https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/
//   nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf: FP64 9.7, FP64 tensor 19.5, FP32 19.5,
//   TF32 156, BF16/FP16 312, INT8 624, 40 GB HBM2 at 1,555 GB/s or 80 GB HBM2e at 2,039 GB/s,
//   400 W SXM, NVLink 600 GB/s, PCIe Gen4 64 GB/s); 108 SMs; no FP8.
// A30: https://www.nvidia.com/en-us/data-center/products/a30-gpu/ (FP64 5.2, tensor 10.3, FP32
//   10.3, TF32 82, BF16 165, INT8 330, 24 GB at 933 GB/s, 165 W); 56 SMs.
// L40S: https://www.nvidia.com/en-us/data-center/l40s/ (FP32 91.6, TF32 366*, BF16/FP16 733*,
//   FP8 1466*, INT8 1466*, 48 GB GDDR6 at 864 GB/s, 350 W, PCIe Gen4 x16); 142 SMs.
// L4: https://www.nvidia.com/en-us/data-center/l4/ (FP32 30.3, TF32 120*, BF16/FP16 242*, FP8
//   485*, INT8 485*, 24 GB at 300 GB/s, 72 W, PCIe Gen4 x16); 58 SMs.
// A10G (AWS g5, not on NVIDIA's site): https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-
//   model-inference/ (FP32 31.52, TF32 35, BF16/FP16 70, INT8 140, 24 GB GDDR6 at 600 GB/s, 80
//   SMs, 300 W). A10: https://www.nvidia.com/en-us/data-center/products/a10-gpu/ (FP32 31.2,
//   TF32 125*, BF16 250*, INT8 500*, 24 GB at 600 GB/s, 150 W); 72 SMs.
// V100: V100 data sheet (https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-
//   datasheet-update-us-1165301-r5.pdf, SXM2: FP64 7.8, FP32 15.7, tensor 125, 32 GB HBM2 at
//   900 GB/s, 300 W, NVLink 300 GB/s, PCIe Gen3); 80 SMs; its tensor cores are FP16 only.
// T4: https://www.nvidia.com/en-us/data-center/tesla-t4/ (FP32 8.1, FP16 65, INT8 130, 16 GB at
//   320 GB/s, 70 W); 40 SMs.
// MI300X: https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html (FP64 vector
//   81.7, FP64 matrix 163.4, FP32 vector 163.4, TF32 653.7, BF16/FP16 1307.4, FP8 2614.9, INT8
//   2614.9 dense, 192 GB HBM3 at 5.3 TB/s, 750 W, 304 CUs, Infinity Fabric 896 GB/s peer
//   aggregate, PCIe Gen5 x16).
// Board power (the watts column; cost/board_power.h's offline energy estimate reads it, so the
// class comparison and the energy estimate use one figure per GPU): the data sheets above, and
//   B200 1000 W: awesomeagents.ai/hardware/nvidia-b200 "1,000W TDP" (tweaktown.com/news/97059:
//     up to 1,200 W for the full-spec part; HGX servers ship the 1,000 W configuration).
//   H100 PCIe 350 W: NVIDIA H100 PCIe product brief PB-11133-001_v02, "maximum thermal design
//     power (TDP) level of 350 W".
//   A100 400 W is the SXM4 module's (40 GB and 80 GB alike); the PCIe cards the table folds into
//     these classes are 300 W (80 GB) and 250 W (40 GB) (thundercompute.com A100 guide), so the
//     estimate is an upper bound for them. Likewise V100 300 W (SXM2, DGXS) against 250 W for the
//     PCIe card (hwupgrade.it, Tesla V100 PCIe announcement).
//   A10G 300 W: baseten.co's A10 vs A10G spec table (AWS publishes none; the A10 is 150 W).
// One class a row, the columns in GpuClass order: name, family, vendor, memory GB, HBM GB/s,
// FP64, FP64 tensor, FP32, TF32, BF16, FP16, FP8, INT8, SMs, link GB/s, PCIe GB/s, watts;
// price row, USD per hour, MIG.
// clang-format off
constexpr std::array<GpuClass, 16> kClasses = {{
    {"GB200", "GB200", kNv, 186, 8000, 45, 45, 80, 1250, 2500, 2500, 5000, 5000, 148, 900, 64, 1200,
     nullptr, 0, &kMigB200},
    {"B200", "B200", kNv, 180, 7700, 37, 37, 75, 1100, 2250, 2250, 4500, 4500, 148, 900, 64, 1000,
     "B200", 14.24, &kMigB200},
    {"H200", "H200", kNv, 141, 4800, 34, 67, 67, 495, 990, 990, 1979, 1979, 132, 450, 64, 700,
     "H200", 10.60, &kMigH200},
    {"H100 SXM", "H100", kNv, 80, 3350, 34, 67, 67, 495, 990, 990, 1979, 1979, 132, 450, 64, 700,
     "H100", 6.88, &kMigH100_80},
    {"H100 NVL", "H100", kNv, 94, 3900, 30, 60, 60, 418, 835, 835, 1671, 1671, 132, 300, 64, 400,
     "H100", 6.88, &kMigH100_94},
    {"H100 PCIe", "H100", kNv, 80, 2000, 26, 51, 51, 378, 756, 756, 1513, 1513, 114, 0, 64, 350,
     "H100", 6.88, &kMigH100_80},
    {"A100 80GB", "A100", kNv, 80, 2039, 9.7, 19.5, 19.5, 156, 312, 312, 0, 624, 108, 300, 32, 400,
     "A100 80GB", 5.12, &kMigA100_80},
    {"A100 40GB", "A100", kNv, 40, 1555, 9.7, 19.5, 19.5, 156, 312, 312, 0, 624, 108, 300, 32, 400,
     "A100 40GB", 4.10, &kMigA100_40},
    {"A30", "A30", kNv, 24, 933, 5.2, 10.3, 10.3, 82, 165, 165, 0, 330, 56, 0, 32, 165,
     nullptr, 0, &kMigA30},
    {"L40S", "L40S", kNv, 48, 864, 1.43, 0, 91.6, 183, 366.5, 366.5, 733, 733, 142, 0, 32, 350,
     nullptr, 0, nullptr},
    {"L4", "L4", kNv, 24, 300, 0.47, 0, 30.3, 60, 121, 121, 242.5, 242.5, 58, 0, 32, 72,
     "L4", 0.80, nullptr},
    {"A10G", "A10G", kNv, 24, 600, 0.49, 0, 31.52, 35, 70, 70, 0, 140, 80, 0, 32, 300,
     "A10G", 1.01, nullptr},
    {"A10", "A10", kNv, 24, 600, 0.49, 0, 31.2, 62.5, 125, 125, 0, 250, 72, 0, 32, 150,
     nullptr, 0, nullptr},
    {"V100", "V100", kNv, 32, 900, 7.8, 0, 15.7, 0, 0, 125, 0, 0, 80, 150, 16, 300,
     "V100", 3.06, nullptr},
    {"T4", "T4", kNv, 16, 320, 0.13, 0, 8.1, 0, 0, 65, 0, 130, 40, 0, 16, 70,
     nullptr, 0, nullptr},
    {"MI300X", "MI300X", GpuVendor::Amd, 192, 5300, 81.7, 163.4, 163.4, 653.7, 1307.4,
     1307.4, 2614.9, 2614.9, 304, 448, 64, 750,
     nullptr, 0, nullptr},
}};
// clang-format on

constexpr uint64_t kA100SmallMemoryLimit = 48'000'000'000ull;
constexpr uint64_t kH100NvlMemoryFloor = 90'000'000'000ull;

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) !=
        std::toupper(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

bool containsIgnoreCase(std::string_view text, std::string_view part) {
  for (size_t at = 0; at + part.size() <= text.size(); ++at)
    if (equalsIgnoreCase(text.substr(at, part.size()), part)) return true;
  return false;
}

const GpuClass* h100Class(std::string_view name, uint64_t memory) {
  // "94GB" / "NVL" / more than 90 GB first: a MIG slice of an NVL asks with the larger memory.
  if (containsWord(name, "NVL") || containsIgnoreCase(name, "94GB") || memory > kH100NvlMemoryFloor)
    return gpuClassNamed("H100 NVL");
  if (containsIgnoreCase(name, "PCIE")) return gpuClassNamed("H100 PCIe");
  return gpuClassNamed("H100 SXM");
}

const GpuClass* a100Class(std::string_view name, uint64_t memory) {
  // "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-40GB".
  if (containsIgnoreCase(name, "80GB")) return gpuClassNamed("A100 80GB");
  if (containsIgnoreCase(name, "40GB")) return gpuClassNamed("A100 40GB");
  return gpuClassNamed(memory > kA100SmallMemoryLimit ? "A100 80GB" : "A100 40GB");
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

} // namespace

std::span<const GpuClass> gpuClassTable() {
  return kClasses;
}

bool containsWord(std::string_view text, std::string_view word) {
  for (size_t at = 0; at + word.size() <= text.size(); ++at) {
    if (!equalsIgnoreCase(text.substr(at, word.size()), word)) continue;
    bool left = at == 0 || !isWordChar(text[at - 1]);
    bool right = at + word.size() == text.size() || !isWordChar(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

const GpuClass* gpuClassNamed(std::string_view class_name) {
  for (const auto& c : kClasses)
    if (equalsIgnoreCase(c.name, class_name)) return &c;
  return nullptr;
}

const GpuClass* findGpuClass(std::string_view name, uint64_t memory_total_bytes) {
  if (containsWord(name, "H100")) return h100Class(name, memory_total_bytes);
  if (containsWord(name, "A100")) return a100Class(name, memory_total_bytes);
  // Whole words, so the order only matters for names that hold two models.
  for (std::string_view model :
       {"GB200", "B200", "H200", "A30", "A10G", "A10", "L40S", "L4", "V100", "T4", "MI300X"})
    if (containsWord(name, model)) return gpuClassNamed(model);
  return nullptr;
}

std::optional<double> PriceOverrides::priceOf(const GpuClass& c, bool is_current) const {
  if (is_current && current_gpu) return current_gpu;
  for (const auto& [name, usd] : by_class)
    if (equalsIgnoreCase(name, c.name)) return usd;
  if (c.usd_per_hour > 0) return c.usd_per_hour;
  return std::nullopt;
}

bool parsePriceOverride(std::string_view text, PriceOverrides& into, std::string* error) {
  text = trim(text);
  size_t cut = text.find('=');
  if (cut == std::string_view::npos) cut = text.find_last_of(" \t");
  if (cut == std::string_view::npos) {
    *error = "expected CLASS=USD, got '" + std::string(text) + "'";
    return false;
  }
  std::string_view name = trim(text.substr(0, cut));
  std::string_view number = trim(text.substr(cut + 1));
  // A class by its name, else every class of a price row ("H100": the SXM, NVL and PCIe, which
  // the table prices as one), so that "H100=2.10" means what a user of the price table means.
  std::vector<const GpuClass*> classes;
  if (const GpuClass* named = gpuClassNamed(name)) {
    classes.push_back(named);
  } else {
    for (const auto& c : kClasses)
      if (c.price_model && equalsIgnoreCase(c.price_model, name)) classes.push_back(&c);
  }
  if (classes.empty()) {
    *error = "unknown GPU class '" + std::string(name) + "'";
    return false;
  }
  double usd = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), usd);
  if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(usd) ||
      usd <= 0) {
    *error = "the price of " + std::string(name) + " must be a positive number of dollars, got '" +
             std::string(number) + "'";
    return false;
  }
  for (const GpuClass* c : classes)
    into.by_class.emplace_back(c->name, usd);
  return true;
}

bool parsePriceFile(std::string_view text, PriceOverrides& into, std::string* error) {
  size_t line_number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::string e;
    if (!parsePriceOverride(line, into, &e)) {
      *error = "line " + std::to_string(line_number) + ": " + e;
      return false;
    }
  }
  return true;
}

} // namespace gpuwise::advisor
