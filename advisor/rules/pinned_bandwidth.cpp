#include "advisor/rules/pinned_bandwidth.h"

#include <array>
#include <cctype>
#include <string>
#include <vector>

namespace gpuwise::advisor {
namespace {

constexpr PinnedLink kC2C{350e9, "NVLink-C2C", true};
constexpr PinnedLink kGen5{50e9, "PCIe 5.0 x16", true};
constexpr PinnedLink kGen4{24e9, "PCIe 4.0 x16", true};
constexpr PinnedLink kGen3{12e9, "PCIe 3.0 x16", true};

struct Entry {
  std::string_view token;
  PinnedLink link;
};

constexpr std::array kModels = {
    Entry{"GH200", kC2C}, Entry{"GB200", kC2C}, Entry{"GB300", kC2C}, Entry{"H100", kGen5},
    Entry{"H200", kGen5}, Entry{"H800", kGen5}, Entry{"H20", kGen5},  Entry{"B100", kGen5},
    Entry{"B200", kGen5}, Entry{"B300", kGen5}, Entry{"A100", kGen4}, Entry{"A800", kGen4},
    Entry{"A10", kGen4},  Entry{"A16", kGen4},  Entry{"A30", kGen4},  Entry{"A40", kGen4},
    Entry{"A2", kGen4},   Entry{"L4", kGen4},   Entry{"L20", kGen4},  Entry{"L40", kGen4},
    Entry{"L40S", kGen4}, Entry{"V100", kGen3}, Entry{"T4", kGen3},   Entry{"P100", kGen3},
    Entry{"P40", kGen3},  Entry{"P4", kGen3},
};

std::vector<std::string> tokens(std::string_view name) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

bool isDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

} // namespace

PinnedLink pinnedLinkFor(std::string_view gpu_name) {
  auto t = tokens(gpu_name);
  for (size_t i = 0; i < t.size(); ++i) {
    for (const auto& e : kModels)
      if (t[i] == e.token) return e.link;
    // GeForce / workstation: "RTX 4090", "RTX A6000", "RTX PRO 6000" (Blackwell, PCIe 5.0).
    if (t[i] == "RTX" && i + 1 < t.size()) {
      const auto& n = t[i + 1];
      if (n == "PRO") return kGen5;
      if (n.size() >= 2 && n[0] == 'A' && isDigits(n.substr(1))) return kGen4;
      if (isDigits(n) && n.size() == 4) {
        if (n[0] == '5') return kGen5;
        if (n[0] == '3' || n[0] == '4') return kGen4;
        if (n[0] == '2') return kGen3;
      }
    }
  }
  return PinnedLink{};
}

} // namespace gpuwise::advisor
