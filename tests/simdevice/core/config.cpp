#include "tests/simdevice/core/config.h"

#include <cstdlib>
#include <cstring>

#include "tests/simdevice/core/device_model.h"

namespace gpuwise::sim {
namespace {

bool readInt(const char* name, long long lo, long long hi, long long* out) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < lo || value > hi) return false;
  *out = value;
  return true;
}

} // namespace

SimConfig loadConfigFromEnv() {
  SimConfig config;
  if (const char* key = std::getenv("GWSIM_DEVICE"); key != nullptr && *key != '\0') {
    config.device_key = key;
    config.device_key_known = findDeviceModel(key) != nullptr;
    if (!config.device_key_known) config.device_key = "h200";
  }
  long long value = 0;
  if (readInt("GWSIM_DEVICE_COUNT", 1, 16, &value)) config.device_count = static_cast<int>(value);
  if (readInt("GWSIM_LAUNCH_LATENCY_NS", 0, 1'000'000'000, &value))
    config.launch_latency_ns = value;
  if (readInt("GWSIM_LAUNCH_HOST_NS", 0, 1'000'000'000, &value)) config.launch_host_ns = value;
  if (readInt("GWSIM_JITTER_PCT", 0, 50, &value))
    config.jitter = static_cast<double>(value) / 100.0;
  if (readInt("GWSIM_SEED", 0, INT64_MAX, &value)) config.seed = static_cast<uint64_t>(value);
  if (const char* busy = std::getenv("GWSIM_CUPTI_BUSY"); busy != nullptr) {
    config.cupti_busy = std::strcmp(busy, "1") == 0 || std::strcmp(busy, "true") == 0;
  }
  return config;
}

} // namespace gpuwise::sim
