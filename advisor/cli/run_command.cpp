// gpuwise run: profile one command.
//
//   1. without --endpoint, start the ingest server in-process on ipc://<fresh 0700 dir>/ingest;
//      with --endpoint, start nothing and only point the shim there
//   2. spawn CMD with LD_PRELOAD (prepended) and CUDA_INJECTION64_PATH set to the shim,
//      GPUWISE_ENDPOINT, and with --simulate the simulated device first on LD_LIBRARY_PATH
//   3. wait for CMD, forwarding SIGINT/SIGTERM to it
//   4. wait (bounded) for every stream's final batch, analyse, print the summary to stderr, write
//      the reports, and exit with CMD's own status
#include "advisor/cli/child_process.h"
#include "advisor/cli/commands.h"
#include "advisor/cli/locations.h"
#include "advisor/cli/report_output.h"
#include "advisor/ingest/ingest_server.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <unistd.h>

namespace gpuwise::advisor {
namespace {

using Clock = std::chrono::steady_clock;

// After CMD exits: how long the streams may stay silent before we stop waiting for their final
// batches (a process killed by a signal never sends one), and the most we wait in all.
constexpr auto kQuietPeriod = std::chrono::milliseconds(300);
constexpr auto kMaxFinalWait = std::chrono::seconds(5);

// A fresh private directory for the ipc socket. mkdtemp creates it 0700, so no other user can
// connect to the advisor or replace the socket.
std::string makePrivateDir(std::string* error) {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp && *tmp ? tmp : "/tmp";
  // ipc:// paths must fit in sun_path (108 bytes).
  if (base.size() > 60) base = "/tmp";
  std::string templ = base + "/gpuwise-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    *error = "cannot create a private directory in " + base + ": " + std::strerror(errno);
    return "";
  }
  return buf.data();
}

std::string prepend(const std::string& first, const std::optional<std::string>& rest, char sep) {
  if (!rest || rest->empty()) return first;
  return first + sep + *rest;
}

// What CMD's environment gets on top of ours: the endpoint, the shim (prepended to LD_PRELOAD and
// as CUDA_INJECTION64_PATH) when it is there, and with --simulate the simulated device first on
// LD_LIBRARY_PATH.
std::vector<std::string> childVariables(const RunOptions& o, const std::string& endpoint,
                                        const std::string& sim_dir, CliIo io) {
  const auto base = environmentWith({});
  std::vector<std::string> overrides{"GPUWISE_ENDPOINT=" + endpoint};
  std::string shim = shimPath();
  if (fileExists(shim)) {
    overrides.push_back("LD_PRELOAD=" + prepend(shim, findVariable(base, "LD_PRELOAD"), ':'));
    overrides.push_back("CUDA_INJECTION64_PATH=" + shim);
    // NVTX hands its calls to the library this names; CUPTI turns them into marker records. A
    // value already set (Nsight, the user's own) is left alone.
    if (o.nvtx && !findVariable(base, "NVTX_INJECTION64_PATH"))
      overrides.push_back("NVTX_INJECTION64_PATH=libcupti.so.13");
  } else {
    logLine(io.err, "run",
            "the shim was not found at " + shim + " (set GPUWISE_SHIM); running without it");
  }
  if (o.simulate) {
    overrides.push_back("LD_LIBRARY_PATH=" +
                        prepend(sim_dir, findVariable(base, "LD_LIBRARY_PATH"), ':'));
  }
  return overrides;
}

// Whether this machine has an NVIDIA driver a CUDA program could use: a device node
// (/dev/nvidiactl; /dev/dxg under WSL) and a loadable libcuda.so.1. Cheap (a stat and a dlopen),
// and only asked when a run recorded nothing.
bool gpuDriverPresent() {
  std::error_code ec;
  if (!std::filesystem::exists("/dev/nvidiactl", ec) && !std::filesystem::exists("/dev/dxg", ec))
    return false;
  void* cuda = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!cuda) return false;
  ::dlclose(cuda);
  return true;
}

// A shell-readable rendering of CMD for the hint: words with anything but [A-Za-z0-9_./=:,+-]
// single-quoted.
std::string shellWords(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    bool plain = !w.empty() && w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
                                                   "vwxyz0123456789_./=:,+-") == std::string::npos;
    if (!out.empty()) out += ' ';
    if (plain) {
      out += w;
      continue;
    }
    out += '\'';
    for (char c : w)
      out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

// A run without --simulate that recorded no GPU activity on a machine without a GPU driver: say
// that the simulated device exists (the CUDA error the program printed does not).
void hintSimulate(const RunOptions& o, const JobAnalysis& a, CliIo io) {
  if (o.simulate || a.timeline.known() || a.kernels.count + a.copies.total.count > 0) return;
  if (gpuDriverPresent()) return;
  logLine(io.err, "run",
          "no GPU driver on this machine (no /dev/nvidiactl or libcuda.so.1); try the simulated "
          "device: gpuwise run --simulate -- " +
              shellWords(o.command));
}

} // namespace

int runCommand(const RunOptions& o, CliIo io) {
  auto fail = [&](const std::string& line) {
    logLine(io.err, "run", line);
    return kExitUsage;
  };
  if (o.command.empty()) return fail("no command given: gpuwise run [options] -- CMD [ARGS...]");
  if (!o.endpoint.empty() && (o.report_paths_given || !o.trace.empty()))
    return fail("--report-json, --report-html and --trace need the in-process advisor; they "
                "cannot be used with --endpoint (the advisor there writes the report)");

  std::string sim_dir;
  if (o.simulate) {
    sim_dir = simdeviceDir();
    if (!directoryExists(sim_dir))
      return fail("the simulated device was not found at " + sim_dir +
                  " (set GPUWISE_SIMDEVICE_DIR)");
  }

  std::string private_dir;
  std::unique_ptr<IngestServer> server;
  std::string endpoint = o.endpoint;
  if (endpoint.empty()) {
    std::string error;
    private_dir = makePrivateDir(&error);
    if (private_dir.empty()) return fail(error);
    IngestServer::Options so;
    so.endpoint = "ipc://" + private_dir + "/ingest";
    so.tee_path = o.trace;
    server = IngestServer::start(so, &error);
    if (!server) {
      std::filesystem::remove_all(private_dir);
      return fail(error);
    }
    endpoint = server->endpoint();
  }
  auto cleanup = [&] {
    if (server) server->stop();
    if (!private_dir.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(private_dir, ec);
    }
  };

  const std::vector<std::string> overrides = childVariables(o, endpoint, sim_dir, io);

  std::string error;
  auto started = Clock::now();
  auto child = ChildProcess::spawn(o.command, environmentWith(overrides), &error);
  if (!child) {
    cleanup();
    io.err << "gpuwise: " << error << '\n';
    return kExitCannotExecute;
  }
  int status = child->wait();
  auto exited = Clock::now();
  if (!server) return status;

  // A process killed by a signal sends no final batch: stop at the first quiet period.
  server->waitFor(
      [&](const IngestProgress& p) {
        if (p.allFinal()) return true;
        return Clock::now() - std::max(p.last_message, exited) >= kQuietPeriod;
      },
      exited + kMaxFinalWait);
  // The ingest analysed the run window by window as it went (bounded memory, however long the
  // run); what is left is its open window. The --trace recording holds every message.
  server->stop();
  JobAnalysis analysis = server->analysis();
  bool tee_failed = server->progress().tee_failed;
  cleanup();

  analysis.source.kind = model::SourceKind::Live;
  analysis.source.simulated = analysis.source.simulated || o.simulate;
  if (!o.trace.empty()) analysis.source.files.push_back(o.trace);
  if (tee_failed) logLine(io.err, "run", o.trace + ": write failed; the recording is incomplete");
  analysis.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(exited - started).count();
  ReportTargets targets{o.report_json, o.report_html, {o.gpu_hour_price, o.energy_price}};
  targets.advice_floor = o.advice.floor;
  targets.gpu_type = o.advice.gpu_type;
  targets.verbose = o.advice.verbose;
  if (!produceReport(analysis, targets, io.err, &error)) logLine(io.err, "run", error);
  hintSimulate(o, analysis, io);
  return status;
}

} // namespace gpuwise::advisor
