#include "advisor/cli/trace_input.h"

#include "advisor/import/kineto_importer.h"
#include "advisor/import/nsys_importer.h"
#include "advisor/ingest/gwt_replay.h"
#include "transport/gwt_file.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace gpuwise::advisor {
namespace {

enum class InputKind { Gwt, Kineto, Nsys, Unknown };

// Reads the first bytes; false with `error` set when the file cannot be read.
bool sniff(const std::string& path, InputKind* kind, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  char head[16] = {};
  in.read(head, sizeof head);
  auto n = static_cast<size_t>(in.gcount());
  if (in.bad()) {
    *error = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  if (n >= sizeof transport::kGwtMagic &&
      std::memcmp(head, transport::kGwtMagic, sizeof transport::kGwtMagic) == 0) {
    *kind = InputKind::Gwt;
    return true;
  }
  if (n == sizeof kSqliteMagic && std::memcmp(head, kSqliteMagic, sizeof kSqliteMagic) == 0) {
    *kind = InputKind::Nsys;
    return true;
  }
  bool gzip = n >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
              static_cast<unsigned char>(head[1]) == 0x8b;
  size_t i = 0;
  while (i < n && std::strchr(" \t\r\n", head[i]))
    ++i;
  bool json = (i < n && (head[i] == '{' || head[i] == '[')) ||
              (n >= 3 && std::memcmp(head, "\xEF\xBB\xBF", 3) == 0);
  *kind = gzip || json ? InputKind::Kineto : InputKind::Unknown;
  return true;
}

// A progress line about every second, once the import has taken a second.
class Progress {
public:
  // `unit`: what a million of done and total is called ("MB", "M rows").
  Progress(const char* command, std::ostream* out, size_t files, const char* unit)
      : command_(command), out_(out), files_(files), unit_(unit), start_(Clock::now()),
        last_(start_) {
    in_place_ = out_ == &std::cerr && isatty(STDERR_FILENO);
  }
  ~Progress() {
    if (printed_ && in_place_) *out_ << '\n' << std::flush;
  }

  void update(uint64_t done, uint64_t total) {
    if (!out_ || total == 0) return;
    auto now = Clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    char line[160];
    std::snprintf(line, sizeof line, "%s: importing %zu trace%s: %.0f%% of %.1f %s", command_,
                  files_, files_ == 1 ? "" : "s", 100.0 * double(done) / double(total),
                  double(total) / 1e6, unit_);
    *out_ << (in_place_ ? "\r" : "") << line << (in_place_ ? "" : "\n") << std::flush;
    printed_ = true;
  }

private:
  using Clock = std::chrono::steady_clock;
  const char* command_;
  std::ostream* out_;
  size_t files_;
  const char* unit_;
  Clock::time_point start_, last_;
  bool in_place_ = false, printed_ = false;
};

} // namespace

bool loadTraceInputs(const std::vector<std::string>& paths, const char* command,
                     std::ostream* progress, LoadedInputs* out, std::string* error) {
  std::vector<InputKind> kinds(paths.size());
  std::vector<std::string> kineto_paths;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!sniff(paths[i], &kinds[i], error)) return false;
    if (kinds[i] == InputKind::Unknown) {
      // An Nsight Systems report itself is a format of NVIDIA's own: its SQLite export is what
      // gpuwise reads.
      const bool nsys_rep = paths[i].ends_with(".nsys-rep") || paths[i].ends_with(".qdrep");
      *error =
          paths[i] +
          (nsys_rep
               ? ": an Nsight Systems report; export it first: nsys export --type sqlite " +
                     paths[i]
               : ": not a gpuwise .gwt recording, a Kineto (PyTorch profiler) JSON trace or an "
                 "Nsight Systems SQLite export");
      return false;
    }
    if (kinds[i] == InputKind::Kineto) kineto_paths.push_back(paths[i]);
  }

  KinetoImportResult kineto;
  if (!kineto_paths.empty()) {
    Progress bar(command, progress, kineto_paths.size(), "MB");
    KinetoImportOptions options;
    options.progress = [&](uint64_t done, uint64_t total) { bar.update(done, total); };
    kineto = importKineto(kineto_paths, options);
    if (!kineto.ok()) {
      *error = kineto.error;
      return false;
    }
  }

  LoadedInputs loaded;
  size_t next_kineto = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (kinds[i] == InputKind::Kineto) {
      // One process per Kineto file, in the order given.
      loaded.trace.processes.push_back(std::move(kineto.trace.processes.at(next_kineto++)));
      loaded.health.streams.push_back(std::nullopt);
      loaded.trace.source.kind = model::SourceKind::Kineto;
      loaded.trace.source.simulated = loaded.trace.source.simulated || kineto.trace.source.simulated;
    } else if (kinds[i] == InputKind::Nsys) {
      // Every process of the export, in pid order (one file at a time: SQLite reads are serial).
      Progress bar(command, progress, 1, "M rows");
      NsysImportOptions options;
      options.progress = [&](uint64_t done, uint64_t total) { bar.update(done, total); };
      auto nsys = importNsys({paths[i]}, options);
      if (!nsys.ok()) {
        *error = nsys.error;
        return false;
      }
      for (auto& p : nsys.trace.processes) {
        loaded.trace.processes.push_back(std::move(p));
        loaded.health.streams.push_back(std::nullopt);
      }
      loaded.trace.source.kind = model::SourceKind::Nsys;
    } else {
      StreamRouter router;
      if (!replayGwt(paths[i], router, error)) return false;
      IngestHealth health;
      auto t = router.take(&health);
      loaded.has_ingest = true;
      loaded.health.messages += health.messages;
      for (const auto& [k, v] : health.rejected_by_reason)
        loaded.health.rejected_by_reason[k] += v;
      for (size_t j = 0; j < t.processes.size(); ++j) {
        loaded.health.streams.push_back(j < health.streams.size() ? health.streams[j] : std::nullopt);
        loaded.trace.processes.push_back(std::move(t.processes[j]));
      }
      loaded.trace.source.kind = model::SourceKind::Gwt;
      loaded.trace.source.simulated = loaded.trace.source.simulated || t.source.simulated;
    }
    loaded.trace.source.files.push_back(paths[i]);
  }
  *out = std::move(loaded);
  return true;
}

} // namespace gpuwise::advisor
