// Writes the wire decoder's seed corpus from the real encoder: `fuzz_seeds DIR`; with a second
// directory, also each scenario as a .gwt recording there (fuzz_gwt_replay's seeds). Each seed is a
// sequence of messages in fuzz_wire_decoder.cpp's input format (mode byte, bytes, separator), and
// each scenario is written twice: as whole sealed messages (mode 0, what arrives on the socket)
// and as bare FlatBuffers (mode 1, which the target re-envelopes, so mutations get past the crc).
// The scenarios are what a shim sends: a Hello with devices, a first batch that interns names and
// kernel signatures, later batches that only reference them, a steady training loop (delta-coded
// timestamps), every record kind, a final batch, and a new epoch after a reconnect.
#include "tests/transport/steady_loop.h"
#include "transport/codec.h"
#include "transport/envelope.h"
#include "transport/gwt_file.h"

#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace gpuwise;
using Bytes = std::vector<uint8_t>;

constexpr std::string_view kSeparator = "\xF7GWFZ\x7F";

// The FlatBuffer inside a sealed message (decompressed when the encoder chose zstd).
Bytes flatbufferOf(const Bytes& message) {
  uint32_t decoded = 0;
  std::memcpy(&decoded, message.data() + 8, 4);
  const uint8_t codec = message[6];
  Bytes payload(message.begin() + transport::kEnvelopeHeaderBytes, message.end());
  if (codec == 0) return payload;
  Bytes out(decoded);
  const size_t n = ZSTD_decompress(out.data(), out.size(), payload.data(), payload.size());
  if (ZSTD_isError(n) || n != decoded) {
    std::fprintf(stderr, "fuzz_seeds: cannot decompress a message of our own encoder\n");
    std::exit(1);
  }
  return out;
}

// Where the .gwt recordings of the same scenarios go (fuzz_gwt_replay's seeds); empty: not written.
std::string gwt_dir;

// The scenario as `gpuwise run --trace` records it: the sealed messages, framed by GwtWriter.
void writeGwt(const std::string& name, const std::vector<Bytes>& messages) {
  const std::string path = gwt_dir + "/seed-" + name + ".gwt";
  auto writer = transport::GwtWriter::create(path);
  bool ok = writer.has_value();
  for (const auto& m : messages)
    ok = ok && (*writer)->append(m);
  if (!ok || !(*writer)->close()) {
    std::fprintf(stderr, "fuzz_seeds: cannot write %s %s\n", path.c_str(),
                 writer ? "" : writer.error().message.c_str());
    std::exit(1);
  }
}

void write(const std::string& dir, const std::string& name, const std::vector<Bytes>& messages) {
  if (!gwt_dir.empty()) writeGwt(name, messages);
  for (int mode : {0, 1}) {
    std::string out;
    for (size_t i = 0; i < messages.size(); ++i) {
      if (i) out += kSeparator;
      out += char(mode);
      const Bytes body = mode == 0 ? messages[i] : flatbufferOf(messages[i]);
      out.append(reinterpret_cast<const char*>(body.data()), body.size());
    }
    const std::string path = dir + "/seed-" + name + (mode == 0 ? "-sealed" : "-flatbuffer");
    std::ofstream f(path, std::ios::binary);
    f << out;
    if (!f) {
      std::fprintf(stderr, "fuzz_seeds: cannot write %s\n", path.c_str());
      std::exit(1);
    }
  }
}

transport::Hello hello(uint64_t session, int64_t pid) {
  transport::Hello h;
  h.session_id = session;
  h.process.pid = pid;
  h.process.ppid = 1;
  h.process.host = "node-7";
  h.process.command = "python train.py --batch-size 64";
  h.process.rank = 0;
  h.process.local_rank = 0;
  h.process.world_size = 2;
  h.process.pod = "trainer-0";
  h.process.ns = "ml";
  h.process.container = "train";
  model::DeviceInfo d;
  d.index = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  d.memory_total_bytes = 85'899'345'920ull;
  d.compute_major = 9;
  d.mig_profile = "1g.10gb";
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.registers_per_sm = 65536;
  d.shared_memory_per_sm = 233472;
  d.max_shared_memory_per_block = 232448;
  d.warp_size = 32;
  h.devices = {d, d};
  h.devices[1].index = 1;
  h.devices[1].mig_profile.clear();
  h.start_time = 3'600'000'000'000'000;
  return h;
}

// One of each record kind, with names, odd values and unknown (0) times.
void addEveryKind(transport::BatchEncoder& enc, model::NameTable& names, int64_t t) {
  model::KernelExec k;
  k.start = t + 5000, k.end = t + 9000, k.launch_start = t, k.launch_end = t + 3000;
  k.name = names.intern("ampere_sgemm_128x64_tn");
  k.stream = 7, k.thread = 4242, k.grid = {108, 2, 1}, k.block = {256, 1, 1};
  k.registers_per_thread = 128, k.static_shared_bytes = 16384, k.dynamic_shared_bytes = 49152;
  k.graph_id = 3, k.flags = 1, k.achieved_occupancy = 0.5f;
  enc.add(k);
  k.start = k.end = 0; // interposer-only tier: GPU times unknown
  k.name = names.intern(std::string("odd\0name\xff", 9));
  enc.add(k);
  model::Copy c;
  c.start = t + 10000, c.end = t + 30000, c.call_start = t + 9500, c.call_end = t + 31000;
  c.bytes = 64 << 20, c.stream = 7, c.thread = 4242;
  c.direction = model::CopyDirection::HostToDevice, c.src = model::MemoryKind::Pageable;
  c.dst = model::MemoryKind::Device, c.async = true;
  enc.add(c);
  model::Memset m;
  m.start = t + 31000, m.end = t + 32000, m.bytes = 4096, m.dst = model::MemoryKind::Device;
  enc.add(m);
  model::HostSync s;
  s.start = t + 32000, s.end = t + 40000, s.kind = model::SyncKind::Device, s.thread = 4242;
  enc.add(s);
  model::ApiCall a;
  a.start = t + 100, a.end = t + 900, a.name = names.intern("cudaMalloc"), a.thread = 4242;
  enc.add(a);
  model::Allocation al;
  al.time = t + 150, al.address = 0x7f0000000000ull, al.bytes = 1 << 30,
  al.kind = model::MemoryKind::Device;
  enc.add(al);
  al.is_free = true, al.time = t + 50000;
  enc.add(al);
  model::MemorySample ms;
  ms.time = t + 200, ms.allocated_bytes = 1 << 30, ms.reserved_bytes = 2ull << 30;
  enc.add(ms);
  model::Range r;
  r.start = t, r.end = t + 60000, r.name = names.intern("ProfilerStep#3");
  r.kind = model::RangeKind::Step, r.step = 3;
  enc.add(r);
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR [GWT_DIR]\n");
    return 2;
  }
  const std::string dir = argv[1];
  if (argc == 3) gwt_dir = argv[2];
  const uint64_t session = 0x5eed5eed5eed5eedull;
  const int64_t pid = 31337;
  const int64_t t0 = 3'600'000'100'000'000;

  { // A Hello alone.
    write(dir, "hello", {transport::encodeHello(hello(session, pid))});
  }
  { // Hello, a batch of every kind, a second batch reusing the names, a final empty batch.
    model::NameTable names;
    transport::BatchEncoder enc(names, session, pid);
    std::vector<Bytes> msgs{transport::encodeHello(hello(session, pid))};
    addEveryKind(enc, names, t0);
    msgs.push_back(enc.encode(0, false, t0 + 100000));
    addEveryKind(enc, names, t0 + 1'000'000);
    msgs.push_back(enc.encode(7, false, t0 + 1'100000));
    msgs.push_back(enc.encode(0, true, t0 + 1'200000));
    write(dir, "every-kind", msgs);
  }
  { // A steady training loop: interned signatures, delta-coded times, zstd (big enough to
    // compress).
    model::NameTable names;
    transport::testing::SteadyLoop loop(names, 42, 24);
    transport::BatchEncoder enc(names, session, pid);
    std::vector<Bytes> msgs{transport::encodeHello(hello(session, pid))};
    for (int b = 0; b < 3; ++b) {
      std::vector<model::KernelExec> ks;
      loop.next(b == 0 ? 200 : 40, ks);
      for (const auto& k : ks)
        enc.add(k);
      msgs.push_back(enc.encode(0, false, ks.back().end));
    }
    write(dir, "steady-loop", msgs);
  }
  { // A new epoch after a reconnect: names and signatures are sent again.
    model::NameTable names;
    transport::BatchEncoder enc(names, session, pid);
    std::vector<Bytes> msgs{transport::encodeHello(hello(session, pid))};
    addEveryKind(enc, names, t0);
    msgs.push_back(enc.encode(0, false, t0 + 100000));
    enc.confirm(false);
    enc.resetEpoch();
    addEveryKind(enc, names, t0 + 2'000'000);
    msgs.push_back(enc.encode(0, false, t0 + 2'100000));
    write(dir, "new-epoch", msgs);
  }
  std::printf("fuzz_seeds: wrote seeds to %s\n", dir.c_str());
  return 0;
}
