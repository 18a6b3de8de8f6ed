// libFuzzer target: the .gwt recording reader and its replay into the model, the way
// `gpuwise report run.gwt` meets a file: transport::readGwtBytes (magic, record framing, the
// message limit) and replayGwtBytes, which routes every record through a StreamRouter (envelope,
// decoder, streams) and turns a file of nothing but rejected records into an error; then the
// router's trace is taken, as the CLI does.
//
// Input: the file's bytes, unchanged, so corpus/gwt_replay/ holds real recordings. Mutations of a
// record mostly break its envelope's crc32, and the router then rejects it before the decoder: when
// size % 2 == 1, every record that starts with the envelope magic gets its crc recomputed first, so
// mutated FlatBuffers reach the Verifier, the decoder and the streams.
//
// Oracles beyond "no crash, no sanitizer finding": an error is one line that starts with the file
// name; a success never comes from a file whose records were all rejected; the router saw exactly
// the records the replay counted.
#include "advisor/ingest/gwt_replay.h"
#include "transport/envelope.h"
#include "transport/gwt_file.h"

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_gwt_replay: oracle failed: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Recomputes the crc32 of every record that looks like an envelope (envelope.h's layout).
void resealRecords(std::vector<uint8_t>& file) {
  size_t at = sizeof gpuwise::transport::kGwtMagic;
  while (at + 4 <= file.size()) {
    const uint32_t n = uint32_t(file[at]) | uint32_t(file[at + 1]) << 8 |
                       uint32_t(file[at + 2]) << 16 | uint32_t(file[at + 3]) << 24;
    at += 4;
    if (n > file.size() - at) return;
    uint8_t* m = file.data() + at;
    if (n >= gpuwise::transport::kEnvelopeHeaderBytes &&
        std::memcmp(m, gpuwise::transport::kEnvelopeMagic, 4) == 0) {
      uLong crc = crc32(0L, Z_NULL, 0);
      crc = crc32(crc, m, 16);
      const size_t header = gpuwise::transport::kEnvelopeHeaderBytes;
      if (n > header) crc = crc32(crc, m + header, uInt(n - header));
      for (int i = 0; i < 4; ++i)
        m[16 + i] = uint8_t(crc >> (8 * i));
    }
    at += n;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 20)) return 0;
  std::vector<uint8_t> file(data, data + size);
  if (size % 2 == 1) resealRecords(file);

  const std::string name = "fuzz.gwt";
  gpuwise::advisor::StreamRouter router([](std::string_view) {}, 64, 0);
  gpuwise::advisor::GwtReplayStats stats;
  std::string error;
  const bool ok = gpuwise::advisor::replayGwtBytes(file, name, router, &error, &stats);
  if (router.progress().messages != stats.records)
    fail("the router saw other records than the replay counted", std::to_string(stats.records));
  if (!ok) {
    if (error.find('\n') != std::string::npos) fail("error is more than one line", error);
    if (error.rfind(name, 0) != 0) fail("error does not start with the file name", error);
    return 0;
  }
  if (stats.records > 0 && stats.rejected == stats.records)
    fail("a file of rejected records was accepted", std::to_string(stats.records));
  gpuwise::advisor::IngestHealth health;
  const auto trace = router.take(&health);
  if (trace.processes.size() > 64) fail("more streams than the router's cap", "");
  return 0;
}
