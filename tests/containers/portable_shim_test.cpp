// The portable shim (scripts/build-portable-shim): libgpuwise.so for someone else's image.
//
// The fixture runs the build script (cached under $GPUWISE_BUILD_DIR/portable; the first run
// debootstraps two Debian bullseye roots and takes minutes), then checks the library with readelf
// and objdump (NEEDED only glibc, no RUNPATH, glibc symbol versions <= 2.28, exports only what
// interposer/gpuwise.map names), and preloads it into programs of a clean minbase bullseye root
// (glibc 2.31, nothing installed but python3) through chroot: /bin/true and python3 run with
// no output, the shim's constructor runs, and InitializeInjection without CUDA stays off; with an
// endpoint it reaches a receiver of the ordinary build (its static ZeroMQ speaks to the system's).
// As a control, the host-built shim (bookworm, glibc 2.36) must fail to load in the same root.
//
// Skipped (exit 77, CTest "Skipped") only when the script says this machine cannot build it:
// not root, no debootstrap, no network for the first debootstrap, or chroot not permitted.
#include "transport/codec.h"
#include "transport/zmq/endpoints.h"

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

constexpr int kSkipped = 77;
// The oldest glibc the shim must load with (RHEL 8; Ubuntu 20.04 and bullseye have 2.31).
constexpr std::array<int, 2> kGlibcFloor{2, 28};

struct Run {
  int rc = -1;
  std::string output; // stdout and stderr together
};

// Runs a shell command line; the exit status, or 128+signal when it was killed.
Run sh(const std::string& command) {
  Run r;
  FILE* pipe = ::popen(("exec 2>&1; " + command).c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;)
    r.output.append(buf.data(), n);
  int status = ::pclose(pipe);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) FAIL(name << " is not set (run the test through ctest)");
  return v;
}

struct Portable {
  std::string shim;    // BUILD/portable/lib/libgpuwise.so
  std::string runtime; // the clean bullseye root
  std::string hostShim;
};

// Builds (or finds cached) the portable shim and the clean root once per test run.
const Portable& portable() {
  static const Portable p = [] {
    std::string build = env("GPUWISE_BUILD_DIR");
    Run r = sh(env("GPUWISE_SOURCE_DIR") + "/scripts/build-portable-shim --runtime-root " + build);
    if (r.rc == kSkipped) {
      std::cout << "SKIPPED: " << r.output << std::flush;
      std::exit(kSkipped);
    }
    if (r.rc != 0) FAIL("scripts/build-portable-shim failed (" << r.rc << "):\n" << r.output);
    std::cout << r.output;
    return Portable{build + "/portable/lib/libgpuwise.so", build + "/portable/bullseye-runtime",
                    build + "/lib/libgpuwise.so"};
  }();
  return p;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

// Runs COMMAND inside the clean root with an empty environment but for ENV (chroot as root).
Run inRoot(const std::string& env, const std::string& command) {
  return sh("chroot " + portable().runtime + " /usr/bin/env -i PATH=/usr/bin:/bin " + env + " " +
            command);
}

// Copies a shim into the clean root as /gpuwise/NAME, as the webhook's init container would.
void install(const std::string& from, const std::string& name) {
  fs::create_directories(portable().runtime + "/gpuwise");
  fs::copy_file(from, portable().runtime + "/gpuwise/" + name,
                fs::copy_options::overwrite_existing);
}

std::array<int, 2> version(const std::string& v) {
  std::array<int, 2> out{0, 0};
  std::sscanf(v.c_str(), "%d.%d", &out[0], &out[1]);
  return out;
}

} // namespace

TEST_CASE("the portable shim needs nothing but glibc", "[portable]") {
  Run r = sh("readelf -dW " + portable().shim);
  REQUIRE(r.rc == 0);
  std::set<std::string> needed;
  std::regex neededRe(R"(\(NEEDED\)\s+Shared library: \[(.*)\])");
  for (const auto& l : lines(r.output)) {
    std::smatch m;
    if (std::regex_search(l, m, neededRe)) needed.insert(m[1]);
  }
  INFO("readelf -d:\n" << r.output);
  const std::set<std::string> glibc{"libc.so.6",       "libm.so.6",  "libdl.so.2",
                                    "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2"};
  CHECK(needed.count("libc.so.6") == 1);
  for (const auto& lib : needed) {
    INFO(lib);
    CHECK(glibc.count(lib) == 1);
  }
  // Nothing is looked for beside it or anywhere else: no RPATH/RUNPATH at all.
  CHECK(r.output.find("RPATH") == std::string::npos);
  CHECK(r.output.find("RUNPATH") == std::string::npos);
}

TEST_CASE("the portable shim needs glibc 2.28 at most", "[portable]") {
  Run r = sh("objdump -T " + portable().shim);
  REQUIRE(r.rc == 0);
  std::array<int, 2> newest{0, 0};
  std::set<std::string> libs; // every versioned reference must be to glibc's own nodes
  // objdump writes a reference's version as "(GLIBC_2.2.5)".
  std::regex ver(R"([\s(]([A-Z]+)_(\d+\.\d+(\.\d+)?)\)?\s)");
  for (const auto& l : lines(r.output)) {
    if (l.find("*UND*") == std::string::npos) continue;
    std::smatch m;
    if (!std::regex_search(l, m, ver)) continue;
    libs.insert(m[1]);
    if (m[1] == "GLIBC") newest = std::max(newest, version(m[2]));
  }
  std::cout << "portable shim: newest glibc symbol version GLIBC_" << newest[0] << "." << newest[1]
            << "\n";
  CHECK(libs == std::set<std::string>{"GLIBC"}); // no GLIBCXX_/CXXABI_/GCC_: those are linked in
  CHECK(newest >= std::array<int, 2>{2, 2});
  CHECK(newest <= kGlibcFloor);
  std::ifstream required(fs::path(portable().shim).parent_path() / "REQUIRED_GLIBC");
  std::string written;
  required >> written;
  CHECK(version(written) == newest);
}

TEST_CASE("the portable shim exports only the hooks and InitializeInjection", "[portable]") {
  // The names the version scripts make global: gpuwise.map (its two version nodes) and the exec
  // hooks' map for this architecture (glibc's own version nodes, so execve@GLIBC_2.2.5 binds).
  std::stringstream text;
  for (const char* file : {"gpuwise.map", "exec_x86_64.map", "exec_aarch64.map"}) {
    std::ifstream map(env("GPUWISE_SOURCE_DIR") + "/interposer/" + file);
    text << map.rdbuf() << "\n";
  }
  std::string script = std::regex_replace(text.str(), std::regex(R"(/\*[\s\S]*?\*/)"), "");
  std::set<std::string> allowed{"libcudart.so.13", "GPUWISE_1"};
  std::regex node(R"(^\s*([A-Za-z_][\w.]*)\s*\{)");
  for (const auto& l : lines(script)) {
    std::smatch m;
    if (std::regex_search(l, m, node)) allowed.insert(m[1]);
  }
  std::regex name(R"(^\s*([A-Za-z_]\w*)\s*;)");
  for (const auto& l : lines(script)) {
    std::smatch m;
    if (std::regex_search(l, m, name)) allowed.insert(m[1]);
  }
  REQUIRE(allowed.size() > 20);

  Run r = sh("objdump -T " + portable().shim);
  REQUIRE(r.rc == 0);
  std::set<std::string> exported;
  for (const auto& l : lines(r.output)) {
    if (l.find("*UND*") != std::string::npos || l.find(" DF ") == std::string::npos &&
                                                    l.find(" DO ") == std::string::npos &&
                                                    l.find("*ABS*") == std::string::npos)
      continue;
    std::istringstream fields(l);
    std::string last;
    for (std::string f; fields >> f;)
      last = f;
    exported.insert(last);
  }
  for (const auto& sym : exported) {
    INFO("exported: " << sym);
    CHECK(allowed.count(sym) == 1);
  }
  for (const char* sym : {"InitializeInjection", "cudaLaunchKernel", "cuLaunchKernel", "cudaMalloc",
                          "__cudaRegisterFunction", "cuGetProcAddress_v2"}) {
    INFO("missing: " << sym);
    CHECK(exported.count(sym) == 1);
  }
  // The same interface as the shim of the ordinary build, where that was built too.
  if (fs::exists(portable().hostShim)) {
    Run host =
        sh("objdump -T " + portable().hostShim + " | grep -v '\\*UND\\*' | awk 'NF>=6{print $NF}'");
    std::set<std::string> hostExported;
    for (const auto& l : lines(host.output))
      if (allowed.count(l)) hostExported.insert(l);
    CHECK(hostExported == exported);
  }
}

TEST_CASE("the portable shim loads in a clean bullseye root and stays quiet", "[portable]") {
  const Portable& p = portable();
  Run libc = sh("chroot " + p.runtime + " /usr/bin/ldd --version");
  REQUIRE(libc.rc == 0);
  INFO(libc.output);
  REQUIRE(libc.output.find("2.31") != std::string::npos); // the root really is an older glibc
  install(p.shim, "libgpuwise.so");
  const std::string preload = "LD_PRELOAD=/gpuwise/libgpuwise.so";

  SECTION("ldd finds everything it needs in the root") {
    Run r = inRoot("", "ldd /gpuwise/libgpuwise.so");
    INFO(r.output);
    CHECK(r.rc == 0);
    CHECK(r.output.find("not found") == std::string::npos);
    CHECK(r.output.find("libstdc++") == std::string::npos);
  }
  SECTION("/bin/true and python3 run with it preloaded, exit 0, print nothing") {
    for (const char* program : {"/bin/true", "python3 -c pass"}) {
      Run r = inRoot(preload, program);
      INFO(program << ": " << r.output);
      CHECK(r.rc == 0);
      CHECK(r.output.empty());
    }
  }
  SECTION("the dynamic loader really runs its constructor") {
    Run r = inRoot(preload + " LD_DEBUG=files", "/bin/true");
    INFO(r.output);
    CHECK(r.rc == 0);
    CHECK(r.output.find("calling init: /gpuwise/libgpuwise.so") != std::string::npos);
    CHECK(r.output.find("cannot be preloaded") == std::string::npos);
  }
  SECTION("with an endpoint and debug logging but no CUDA, it loads and stays off") {
    const std::string env =
        preload + " GPUWISE_ENDPOINT=ipc:///tmp/gpuwise-portable-test.sock GPUWISE_LOG=debug";
    Run r = inRoot(env, "/bin/true");
    INFO(r.output);
    CHECK(r.rc == 0);
    CHECK(r.output.empty()); // no CUDA call, so nothing starts and nothing is said
    // The driver's entry point called by hand: there is no libcupti in the root, so the shim must
    // turn itself off, return success, and let the process exit normally.
    Run inject =
        inRoot(env, "python3 -c \"import ctypes; "
                    "print('rc', ctypes.CDLL('/gpuwise/libgpuwise.so').InitializeInjection())\"");
    INFO(inject.output);
    CHECK(inject.rc == 0);
    CHECK(inject.output.find("rc 1") != std::string::npos);
  }
  SECTION("control: the shim of the ordinary (bookworm) build does not load there") {
    if (!fs::exists(p.hostShim)) return;
    install(p.hostShim, "libgpuwise-host.so");
    Run r = inRoot("LD_PRELOAD=/gpuwise/libgpuwise-host.so", "/bin/true");
    INFO(r.output);
    // Either ld.so refuses the preload (glibc too old) or the program cannot start (libzmq.so.5
    // is not in the image); both are what the portable build exists to avoid.
    CHECK((r.rc != 0 || r.output.find("cannot be preloaded") != std::string::npos));
    CHECK(!r.output.empty());
  }
}

TEST_CASE("the portable shim in the old root talks to a receiver of the ordinary build",
          "[portable]") {
  // InitializeInjection with no libcupti in the root starts the interposer tier: drain thread,
  // ZeroMQ connection, a Hello, and at exit the final batch. The receiver binds a socket inside
  // the root, so the chrooted process connects to it by its path there.
  const Portable& p = portable();
  install(p.shim, "libgpuwise.so");
  const std::string inside = "/tmp/gpuwise-portable-test/advisor";
  fs::remove_all(p.runtime + "/tmp/gpuwise-portable-test");
  auto bound = gpuwise::transport::PullReceiver::bind("ipc://" + p.runtime + inside, {});
  REQUIRE(bound.has_value());
  auto receiver = std::move(*bound);
  auto program = std::async(std::launch::async, [&] {
    return inRoot(
        "LD_PRELOAD=/gpuwise/libgpuwise.so GPUWISE_ENDPOINT=ipc://" + inside + " GPUWISE_LOG=quiet",
        "python3 -c \"import ctypes, os; "
        "print('pid', os.getpid(), ctypes.CDLL('/gpuwise/libgpuwise.so').InitializeInjection())\"");
  });
  gpuwise::model::NameTable names;
  gpuwise::transport::MessageDecoder decoder(names);
  std::optional<gpuwise::transport::Hello> hello;
  bool final = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!final && std::chrono::steady_clock::now() < deadline) {
    auto message = receiver->receive(std::chrono::milliseconds(200));
    if (!message) continue;
    auto result = decoder.decode(*message);
    if (!result) FAIL("decode: " << result.error().detail);
    if (auto* h = std::get_if<gpuwise::transport::Hello>(&*result)) hello = *h;
    if (auto* b = std::get_if<gpuwise::transport::Batch>(&*result)) final = final || b->final;
  }
  Run r = program.get();
  INFO(r.output);
  CHECK(r.rc == 0);
  REQUIRE(hello);
  // The Hello names the chrooted python process.
  CHECK(r.output.find("pid " + std::to_string(hello->process.pid) + " 1") != std::string::npos);
  CHECK(final); // the exit path delivered its final batch
  receiver->close();
}
