// The recorded trace file: write, read back, replay through the decoder; damaged files.
#include "tests/transport/record_fixtures.h"
#include "tests/transport/steady_loop.h"
#include "transport/codec.h"
#include "transport/gwt_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace gpuwise;
using namespace gpuwise::transport;
using namespace gpuwise::transport::testing;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("gwt_test_" + std::to_string(getpid()) + "_" + std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

std::vector<uint8_t> fileBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void writeBytes(const fs::path& p, std::span<const uint8_t> bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// A recorded run: Hello, then batches of a steady loop.
std::vector<std::vector<uint8_t>> recordedRun(model::NameTable& names,
                                              std::vector<model::KernelExec>& sent) {
  std::vector<std::vector<uint8_t>> msgs;
  Hello h;
  h.session_id = 21;
  h.process = sampleProcess();
  h.devices = {sampleDevice(0)};
  msgs.push_back(encodeHello(h));
  SteadyLoop loop(names, 5, 30);
  BatchEncoder enc(names, 21, 4242);
  for (int i = 0; i < 4; ++i) {
    std::vector<model::KernelExec> ks;
    loop.next(1000, ks);
    for (const auto& k : ks)
      enc.add(k);
    sent.insert(sent.end(), ks.begin(), ks.end());
    msgs.push_back(enc.encode(0, i == 3, 0));
    enc.confirm(true);
  }
  return msgs;
}

std::unique_ptr<GwtWriter> createWriter(const fs::path& path) {
  auto created = GwtWriter::create(path.string());
  INFO((created ? std::string() : created.error().message));
  REQUIRE(created.has_value());
  return std::move(*created);
}

// The error a read ended with; empty when it succeeded.
std::string errorOf(const Status& status) {
  return status ? std::string() : status.error().message;
}

} // namespace

TEST_CASE(".gwt write, read and replay") {
  TempDir dir;
  const auto file = dir.path / "run.gwt";
  model::NameTable names;
  std::vector<model::KernelExec> sent;
  const auto msgs = recordedRun(names, sent);

  auto writer = createWriter(file);
  for (const auto& m : msgs)
    REQUIRE(writer->append(m));
  REQUIRE(writer->close());
  CHECK(looksLikeGwt(file.string()));

  size_t total = 8;
  for (const auto& m : msgs)
    total += 4 + m.size();
  CHECK(fs::file_size(file) == total);

  std::vector<std::vector<uint8_t>> read;
  REQUIRE(readGwt(file.string(), [&](std::span<const uint8_t> m) {
            read.emplace_back(m.begin(), m.end());
          }).has_value());
  CHECK(read == msgs);

  model::NameTable replay_names;
  MessageDecoder dec(replay_names);
  std::vector<model::KernelExec> got;
  bool final = false;
  REQUIRE(readGwt(file.string(), [&](std::span<const uint8_t> m) {
            auto r = dec.decode(m);
            if (auto* b = r ? std::get_if<Batch>(&*r) : nullptr) {
              got.insert(got.end(), b->kernels.begin(), b->kernels.end());
              final = b->final;
            }
          }).has_value());
  requireSameRecords(sent, got);
  CHECK(final);
}

TEST_CASE(".gwt with only the magic is an empty recording") {
  TempDir dir;
  const auto file = dir.path / "empty.gwt";
  auto writer = createWriter(file);
  REQUIRE(writer->close());
  size_t n = 0;
  CHECK(readGwt(file.string(), [&](std::span<const uint8_t>) { ++n; }).has_value());
  CHECK(n == 0);
}

TEST_CASE("Truncated .gwt files are errors naming the offset, after the intact records") {
  TempDir dir;
  model::NameTable names;
  std::vector<model::KernelExec> sent;
  const auto msgs = recordedRun(names, sent);
  const auto good = dir.path / "good.gwt";
  auto writer = createWriter(good);
  for (const auto& m : msgs)
    REQUIRE(writer->append(m));
  REQUIRE(writer->close());
  const auto bytes = fileBytes(good);
  const auto cut = dir.path / "cut.gwt";

  // Cut inside the second record's length word, then inside its body.
  const size_t second = 8 + 4 + msgs[0].size();
  for (size_t len : {second + 2, second + 4 + msgs[1].size() / 2}) {
    writeBytes(cut, {bytes.data(), len});
    size_t n = 0;
    const std::string error =
        errorOf(readGwt(cut.string(), [&](std::span<const uint8_t>) { ++n; }));
    CHECK_FALSE(error.empty());
    CHECK(n == 1);
    CHECK(error.find("truncated") != std::string::npos);
    CHECK(error.find("offset " + std::to_string(second)) != std::string::npos);
    CHECK(error.find(cut.string()) != std::string::npos);
  }
  // Every cut of the file ends in an error or a clean record boundary, never a crash.
  for (size_t len = 0; len < bytes.size(); len += 97) {
    writeBytes(cut, {bytes.data(), len});
    (void)readGwt(cut.string(), [](std::span<const uint8_t>) {});
  }
}

TEST_CASE("Wrong magic, oversize records and missing files are errors") {
  TempDir dir;
  const auto file = dir.path / "trace.json";
  const std::string json = R"({"traceEvents": []})";
  writeBytes(file, {reinterpret_cast<const uint8_t*>(json.data()), json.size()});
  CHECK_FALSE(looksLikeGwt(file.string()));
  std::string error = errorOf(readGwt(file.string(), [](std::span<const uint8_t>) {}));
  CHECK(error.find("bad magic") != std::string::npos);

  const auto big = dir.path / "big.gwt";
  std::vector<uint8_t> bytes(kGwtMagic, kGwtMagic + 8);
  bytes.insert(bytes.end(), {0xff, 0xff, 0xff, 0x7f}); // a 2 GiB record
  writeBytes(big, bytes);
  error = errorOf(readGwt(big.string(), [](std::span<const uint8_t>) {}));
  CHECK(error.find("exceeds") != std::string::npos);

  error = errorOf(readGwt((dir.path / "missing.gwt").string(), [](std::span<const uint8_t>) {}));
  CHECK(error.find("cannot open") != std::string::npos);
  CHECK_FALSE(looksLikeGwt((dir.path / "missing.gwt").string()));
  auto created = GwtWriter::create((dir.path / "no/such/dir/x.gwt").string());
  REQUIRE_FALSE(created.has_value());
  CHECK(created.error().message.find("cannot create") != std::string::npos);
}
