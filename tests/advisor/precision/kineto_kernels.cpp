#include "tests/advisor/precision/kineto_kernels.h"
#include "tests/traces_dir.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <simdjson.h>
#include <stdexcept>
#include <string_view>
#include <zlib.h>

namespace gpuwise::test {

namespace fs = std::filesystem;
namespace od = simdjson::ondemand;

namespace {

// gzread reads plain files unchanged, so one path serves .json and .json.gz.
std::string readMaybeGzip(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error("cannot open");
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0)
    out.append(buf, static_cast<size_t>(n));
  bool failed = n < 0;
  gzclose(f);
  if (failed) throw std::runtime_error("gzip read error");
  return out;
}

std::optional<double> number(od::value v) {
  if (v.type() != od::json_type::number) return std::nullopt;
  return double(v.get_double());
}

uint32_t asU32(od::value v) {
  std::optional<double> d = number(v);
  return d && *d > 0 ? static_cast<uint32_t>(*d) : 0;
}

std::array<uint32_t, 3> dim3(od::value v) {
  std::array<uint32_t, 3> out{0, 0, 0};
  if (v.type() != od::json_type::array) return out;
  size_t i = 0;
  for (od::value e : v.get_array()) {
    if (i < 3) out[i] = asU32(e);
    ++i;
  }
  return out;
}

void readArgs(od::object args, KinetoKernel& k) {
  for (od::field f : args) {
    std::string_view key = f.unescaped_key();
    od::value v = f.value();
    if (key == "grid")
      k.grid = dim3(v);
    else if (key == "block")
      k.block = dim3(v);
    else if (key == "device")
      k.device = asU32(v);
    else if (key == "registers per thread")
      k.registers_per_thread = int64_t(number(v).value_or(-1));
    else if (key == "shared memory")
      k.shared_memory = int64_t(number(v).value_or(-1));
    else if (key == "blocks per SM")
      k.blocks_per_sm = number(v).value_or(-1);
    else if (key == "est. achieved occupancy %")
      k.est_achieved_occupancy_pct = number(v).value_or(-1);
  }
}

void readEvents(od::array events, KinetoTrace& trace) {
  for (od::value ev : events) {
    if (ev.type() != od::json_type::object) continue;
    KinetoKernel k;
    std::string cat;
    for (od::field f : ev.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value v = f.value();
      if (key == "cat" && v.type() == od::json_type::string)
        cat = std::string_view(v.get_string());
      else if (key == "name" && v.type() == od::json_type::string)
        k.name = std::string_view(v.get_string());
      else if (key == "args" && v.type() == od::json_type::object)
        readArgs(v.get_object(), k);
    }
    if (cat == "kernel" || cat == "Kernel") trace.kernels.push_back(std::move(k));
  }
}

void readDevices(od::array devices, KinetoTrace& trace) {
  for (od::value dv : devices) {
    if (dv.type() != od::json_type::object) continue;
    KinetoDevice d;
    for (od::field f : dv.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value v = f.value();
      if (key == "id")
        d.id = asU32(v);
      else if (key == "name" && v.type() == od::json_type::string)
        d.name = std::string_view(v.get_string());
      else if (key == "computeMajor")
        d.compute_major = int(asU32(v));
      else if (key == "computeMinor")
        d.compute_minor = int(asU32(v));
      else if (key == "numSms")
        d.num_sms = asU32(v);
      else if (key == "maxThreadsPerBlock")
        d.max_threads_per_block = asU32(v);
      else if (key == "maxThreadsPerMultiprocessor")
        d.max_threads_per_sm = asU32(v);
      else if (key == "regsPerBlock")
        d.regs_per_block = asU32(v);
      else if (key == "regsPerMultiprocessor")
        d.regs_per_sm = asU32(v);
      else if (key == "sharedMemPerBlock")
        d.shared_mem_per_block = asU32(v);
      else if (key == "sharedMemPerBlockOptin")
        d.shared_mem_per_block_optin = asU32(v);
      else if (key == "sharedMemPerMultiprocessor")
        d.shared_mem_per_sm = asU32(v);
      else if (key == "warpSize")
        d.warp_size = asU32(v);
    }
    trace.devices.push_back(std::move(d));
  }
}

} // namespace

const KinetoDevice* KinetoTrace::deviceProperties(uint32_t device) const {
  for (const KinetoDevice& d : devices) {
    if (d.id == device) return &d;
  }
  return nullptr;
}

KinetoCorpus loadKinetoCorpus(const fs::path& root) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root)) {
    std::string name = e.path().filename().string();
    bool json = name.ends_with(".json") || name.ends_with(".json.gz");
    if (e.is_regular_file() && json) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());

  KinetoCorpus corpus;
  od::parser parser;
  for (const fs::path& path : files) {
    std::string rel = fs::relative(path, root).generic_string();
    try {
      simdjson::padded_string json(readMaybeGzip(path));
      od::document doc = parser.iterate(json);
      if (doc.type() != od::json_type::object) {
        corpus.skipped.push_back(rel + ": not a JSON object");
        continue;
      }
      KinetoTrace trace;
      trace.path = rel;
      bool has_events = false;
      for (od::field f : doc.get_object()) {
        std::string_view key = f.unescaped_key();
        od::value v = f.value();
        if (key == "traceEvents" && v.type() == od::json_type::array) {
          has_events = true;
          readEvents(v.get_array(), trace);
        } else if (key == "deviceProperties" && v.type() == od::json_type::array) {
          readDevices(v.get_array(), trace);
        }
      }
      if (!has_events) {
        corpus.skipped.push_back(rel + ": no traceEvents");
        continue;
      }
      corpus.traces.push_back(std::move(trace));
    } catch (const std::exception& e) {
      corpus.skipped.push_back(rel + ": " + e.what());
    }
  }
  return corpus;
}

fs::path kinetoTracesDir() {
  return realTracesDir() / "kineto";
}

model::DeviceInfo toDeviceInfo(const KinetoDevice& k) {
  model::DeviceInfo d;
  d.index = k.id;
  d.name = k.name;
  d.sm_count = k.num_sms;
  d.compute_major = k.compute_major;
  d.compute_minor = k.compute_minor;
  d.max_threads_per_sm = k.max_threads_per_sm;
  d.registers_per_sm = k.regs_per_sm;
  d.shared_memory_per_sm = k.shared_mem_per_sm;
  d.max_shared_memory_per_block = std::max(k.shared_mem_per_block_optin, k.shared_mem_per_block);
  d.warp_size = k.warp_size;
  return d;
}

} // namespace gpuwise::test
