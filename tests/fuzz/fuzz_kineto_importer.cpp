// libFuzzer target: the Kineto (PyTorch profiler) importer on arbitrary bytes, the way
// `gpuwise report file.json[.gz]` meets a file: importKinetoBuffer runs the whole pipeline (gzip
// detection and ISA-L inflate, the SIMD splitter, the chunker and prefilter, simdjson On-Demand,
// the builder and its joins) with its reader thread.
//
// Input: the file's bytes, unchanged, so corpus/kineto_importer/ holds plain Kineto JSON that a
// person can read (and gzip files, which reach the inflater). The options that change the code
// path are taken from the input's length, which keeps seeds plain:
//   size % 2        include_operators (cpu_op events decoded rather than skipped)
//   size / 2 % 2    force_scalar_scan (the splitter's scalar path instead of AVX2)
//   size / 4 % 2    tiny batches (256 bytes, the importer's minimum): every event crosses a batch
//                   boundary, which is where a splitter goes wrong
//   size / 8 % 4==0 the bytes are gzip-compressed first, so mutated JSON also goes through inflate
//
// Oracles beyond "no crash, no sanitizer finding": an error is one line that names the file; a
// success has exactly one process trace and lists the file; nothing partial comes back with an
// error. A success is within the input bounds (profiler/model/record_limits.h), which keep the
// analysis of any trace finite: every known time inside +-2^62 and no span ending before it starts,
// at most 64 devices, no name or identity string over 16 KiB.
#include "advisor/import/kineto_importer.h"
#include "profiler/model/record_limits.h"

#include <libdeflate.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_kineto_importer: oracle failed: %s: %s\n", what, detail.c_str());
  std::abort();
}

std::string gzip(std::string_view text) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(1);
  if (!c) return {};
  std::string out(libdeflate_gzip_compress_bound(c, text.size()), '\0');
  const size_t n = libdeflate_gzip_compress(c, text.data(), text.size(), out.data(), out.size());
  libdeflate_free_compressor(c);
  out.resize(n);
  return out;
}

void checkSpan(gpuwise::model::TimeNs start, gpuwise::model::TimeNs end) {
  using gpuwise::model::plausibleTime;
  if (!plausibleTime(start) || !plausibleTime(end))
    fail("a time beyond the bounds", std::to_string(end));
  if (start != 0 && end != 0 && end < start)
    fail("a span ending before it starts", std::to_string(end));
}

void checkBounds(const gpuwise::model::ProcessTrace& p) {
  namespace model = gpuwise::model;
  auto spans = [](const auto& v) {
    for (const auto& r : v)
      checkSpan(r.start, r.end);
  };
  auto instants = [](const auto& v) {
    for (const auto& r : v)
      checkSpan(r.time, r.time);
  };
  spans(p.kernels);
  spans(p.copies);
  spans(p.memsets);
  spans(p.syncs);
  spans(p.api_calls);
  spans(p.ranges);
  instants(p.allocations);
  instants(p.memory_samples);
  if (p.devices.size() > model::kMaxDevicesPerTrace ||
      p.activeDevices().size() > model::kMaxDevicesPerTrace)
    fail("more devices than the bound", std::to_string(p.devices.size()));
  for (size_t id = 0; id < p.names.size(); ++id)
    if (p.names.get(model::NameId(id)).size() > model::kMaxNameBytes)
      fail("a name over the bound", "");
  for (const auto* s : {&p.info.command, &p.info.host, &p.info.pod, &p.info.ns, &p.info.container})
    if (s->size() > model::kMaxNameBytes) fail("an identity string over the bound", "");
  for (const auto& d : p.devices)
    if (d.name.size() > model::kMaxNameBytes) fail("a device name over the bound", "");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Bigger inputs only make each run slower; the seeds are a few KB.
  if (size > (size_t{1} << 20)) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  gpuwise::advisor::KinetoImportOptions options;
  // The default 4 x 1 MiB of batch buffers, allocated and poisoned by ASan on every run, made each
  // run ~40 ms; inputs are at most a few tens of KB, so 64 KiB batches reach the same code.
  options.batch_bytes = size_t{64} << 10;
  options.batches_in_flight = 2;
  options.include_operators = size % 2;
  options.force_scalar_scan = (size / 2) % 2;
  if ((size / 4) % 2) {
    options.batch_bytes = 256;
    options.batches_in_flight = 2;
  }
  options.parallel_files = 1;
  std::string compressed;
  if ((size / 8) % 4 == 0) compressed = gzip(bytes);
  const std::string_view input = compressed.empty() ? bytes : std::string_view(compressed);

  const std::string name = "fuzz.json";
  const auto result = gpuwise::advisor::importKinetoBuffer(input, name, options);
  if (!result.ok()) {
    if (result.error.find('\n') != std::string::npos)
      fail("error is more than one line", result.error);
    if (result.error.rfind(name, 0) != 0)
      fail("error does not start with the file name", result.error);
    if (!result.trace.processes.empty()) fail("an error came with a partial trace", result.error);
  } else {
    if (result.trace.processes.size() != 1)
      fail("one file gave other than one process", result.error);
    if (result.trace.source.files.size() != 1 || result.trace.source.files[0] != name)
      fail("the trace does not list its file", result.error);
    checkBounds(result.trace.processes[0]);
  }
  return 0;
}
