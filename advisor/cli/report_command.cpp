// gpuwise report: the report of recorded traces, offline.
//
// Inputs are recognised by content: a .gwt recording (its magic) is replayed through the same
// StreamRouter the live advisor uses. Kineto (PyTorch profiler) JSON, plain or gzipped, is
// recognised but not imported yet: the importer (advisor/import/) plugs in at loadInput().
#include "advisor/cli/commands.h"
#include "advisor/cli/report_output.h"
#include "advisor/ingest/gwt_replay.h"
#include "transport/gwt_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace gpuwise::advisor {
namespace {

enum class InputKind { Gwt, Kineto, Unknown };

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
  bool gzip = n >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
              static_cast<unsigned char>(head[1]) == 0x8b;
  size_t i = 0;
  while (i < n && std::strchr(" \t\r\n", head[i]))
    ++i;
  bool json = (i < n && head[i] == '{') || (n >= 3 && std::memcmp(head, "\xEF\xBB\xBF", 3) == 0);
  *kind = gzip || json ? InputKind::Kineto : InputKind::Unknown;
  return true;
}

struct Loaded {
  model::Trace trace;
  IngestHealth health;
  bool has_health = false;
};

bool loadInput(const std::string& path, InputKind kind, Loaded* out, std::string* error) {
  switch (kind) {
  case InputKind::Gwt: {
    StreamRouter router;
    if (!replayGwt(path, router, error)) return false;
    out->trace = router.take(&out->health);
    out->trace.source.kind = model::SourceKind::Gwt;
    out->has_health = true;
    return true;
  }
  case InputKind::Kineto:
    *error = path + ": Kineto (PyTorch profiler) traces are not supported by this build yet";
    return false;
  case InputKind::Unknown: break;
  }
  *error = path + ": not a gpuwise .gwt recording or a Kineto JSON trace";
  return false;
}

} // namespace

int reportCommand(const ReportOptionsCli& o, CliIo io) {
  auto fail = [&](const std::string& line) {
    io.err << "gpuwise report: " << line << '\n';
    return kExitUsage;
  };
  if (o.inputs.empty()) return fail("at least one INPUT is required");

  model::Trace job;
  IngestHealth health;
  bool any_health = false;
  for (const auto& path : o.inputs) {
    InputKind kind;
    std::string error;
    if (!sniff(path, &kind, &error)) return fail(error);
    Loaded loaded;
    if (!loadInput(path, kind, &loaded, &error)) return fail(error);
    // Processes of several inputs sit side by side; ingest health stays aligned with them.
    if (loaded.has_health) {
      any_health = true;
      health.messages += loaded.health.messages;
      for (const auto& [k, v] : loaded.health.rejected_by_reason)
        health.rejected_by_reason[k] += v;
    }
    for (size_t i = 0; i < loaded.trace.processes.size(); ++i) {
      health.streams.push_back(loaded.has_health && i < loaded.health.streams.size()
                                   ? loaded.health.streams[i]
                                   : std::nullopt);
      job.processes.push_back(std::move(loaded.trace.processes[i]));
    }
    job.source.kind = loaded.trace.source.kind;
    job.source.simulated = job.source.simulated || loaded.trace.source.simulated;
    job.source.files.push_back(path);
  }

  ReportTargets targets;
  targets.json_path = o.json;
  targets.html_path = o.html;
  targets.cost.gpu_hour_price = o.gpu_hour_price;
  if (o.json.empty() && o.html.empty()) {
    targets.json_path = kDefaultJsonReport;
    targets.html_path = kDefaultHtmlReport;
  }
  AnalysisOptions ao;
  ao.ingest = any_health ? &health : nullptr;
  std::string error;
  if (!produceReport(job, ao, targets, io.out, &error)) return fail(error);
  return 0;
}

} // namespace gpuwise::advisor
