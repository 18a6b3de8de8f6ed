#include "advisor/cli/trace_input.h"

#include "advisor/cli/job_inputs.h"

#include "advisor/import/kineto_importer.h"
#include "advisor/import/nsys_importer.h"
#include "advisor/ingest/gwt_replay.h"
#include "profiler/model/printable_text.h"
#include "transport/gwt_file.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace gpuwise::advisor {
namespace {

enum class InputKind { Gwt, Kineto, Nsys, Unknown };

// What can come from something that is not a regular file (a pipe, `<(zcat t.json.gz)`,
// /dev/stdin) is read whole into memory, since it can be read only once; beyond this it must be
// a file.
constexpr uint64_t kMaxUnseekableInputBytes = uint64_t{2} << 30;

InputKind sniff(const char* head, size_t n) {
  if (n >= sizeof transport::kGwtMagic &&
      std::memcmp(head, transport::kGwtMagic, sizeof transport::kGwtMagic) == 0)
    return InputKind::Gwt;
  if (n >= sizeof kSqliteMagic && std::memcmp(head, kSqliteMagic, sizeof kSqliteMagic) == 0)
    return InputKind::Nsys;
  const bool gzip = n >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
                    static_cast<unsigned char>(head[1]) == 0x8b;
  size_t i = 0;
  while (i < n && std::strchr(" \t\r\n", head[i]))
    ++i;
  const bool json = (i < n && (head[i] == '{' || head[i] == '[')) ||
                    (n >= 3 && std::memcmp(head, "\xEF\xBB\xBF", 3) == 0);
  return gzip || json ? InputKind::Kineto : InputKind::Unknown;
}

// One INPUT, opened once: the format is sniffed from the first bytes read, and those same bytes
// go to the importer. A regular file is then read by the importers by its path (they read it in
// pieces, whatever its size); anything else is read here, whole, once.
struct OpenedInput {
  InputKind kind = InputKind::Unknown;
  bool regular = true;
  bool empty = false;
  std::string bytes; // !regular: the whole content
};

bool openInput(const std::string& path, OpenedInput* in, std::string* error) {
  auto fail = [&](int e) {
    *error = path + ": cannot read: " + std::strerror(e);
    return false;
  };
  // Blocks on a FIFO until a writer opens it, as any reader of a FIFO does.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fail(errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(errno);
  if (S_ISDIR(st.st_mode)) return fail(EISDIR);
  in->regular = S_ISREG(st.st_mode);
  char head[16] = {};
  size_t n = 0;
  if (in->regular) {
    const ssize_t got = ::pread(fd, head, sizeof head, 0);
    if (got < 0) return fail(errno);
    n = size_t(got);
  } else {
    std::vector<char> piece(size_t{1} << 20);
    bool sniffed = false;
    for (;;) {
      const ssize_t got = ::read(fd, piece.data(), piece.size());
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return fail(errno);
      if (got == 0) break;
      if (in->bytes.size() + size_t(got) > kMaxUnseekableInputBytes) {
        *error = path + ": more than " + std::to_string(kMaxUnseekableInputBytes >> 30) +
                 " GiB from a pipe or device; write it to a file and give the file";
        return false;
      }
      in->bytes.append(piece.data(), size_t(got));
      // Not a trace by its first bytes (/dev/zero, /dev/urandom): no point reading on.
      if (!sniffed && in->bytes.size() >= sizeof head) {
        sniffed = true;
        if (sniff(in->bytes.data(), sizeof head) == InputKind::Unknown) break;
      }
    }
    n = std::min(in->bytes.size(), sizeof head);
    std::memcpy(head, in->bytes.data(), n);
  }
  in->empty = n == 0;
  in->kind = sniff(head, n);
  return true;
}

// SQLite reads a database from a file: an export that came through a pipe is spooled to a
// temporary file first, and the errors name the input, not the spool.
NsysImportResult importNsysBytes(const std::string& bytes, const std::string& name,
                                 const NsysImportOptions& options) {
  NsysImportResult failed;
  const char* tmpdir = std::getenv("TMPDIR");
  std::string spool = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/gpuwise-nsys-XXXXXX";
  const int fd = ::mkstemp(spool.data());
  if (fd < 0) {
    failed.error = name +
                   ": an Nsight Systems export from a pipe, and no temporary file to read "
                   "it from (" +
                   spool + ": " + std::strerror(errno) + ")";
    return failed;
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      failed.error = name;
      failed.error += ": an Nsight Systems export from a pipe, and no room to spool it (";
      failed.error += spool + ": " + std::strerror(errno) + ")";
      ::close(fd);
      ::unlink(spool.c_str());
      return failed;
    }
    done += size_t(n);
  }
  ::close(fd);
  auto result = importNsys({spool}, options);
  ::unlink(spool.c_str());
  for (size_t at = 0; (at = result.error.find(spool, at)) != std::string::npos; at += name.size())
    result.error.replace(at, spool.size(), name);
  return result;
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

// A gpuwise recording (.gwt), replayed through the live advisor's router: its processes, their
// stream health, and one line naming the file when the decoder rejected records.
bool addRecording(const std::string& path, const OpenedInput& in, const char* command,
                  std::ostream* progress, LoadedInputs& loaded, std::string* error) {
  // The router's own lines speak for the live advisor ("gpuwise advisor: dropped a
  // message"); here the rejections are summed up in one line naming the file, below.
  StreamRouter router([](std::string_view) {});
  GwtReplayStats replayed;
  const bool ok =
      in.regular
          ? replayGwt(path, router, error, &replayed)
          : replayGwtBytes({reinterpret_cast<const uint8_t*>(in.bytes.data()), in.bytes.size()},
                           path, router, error, &replayed);
  if (!ok) return false;
  if (replayed.rejected > 0 && progress) {
    const std::string line =
        std::string(command) + ": " +
        model::printableText(path + ": " + std::to_string(replayed.rejected) + " of " +
                             std::to_string(replayed.records) +
                             " records rejected by the decoder, as the live advisor did; "
                             "the report counts them") +
        "\n";
    progress->write(line.data(), std::streamsize(line.size()));
    progress->flush();
  }
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
  return true;
}

void stderrLine(const char* command, std::ostream* progress, const std::string& line) {
  if (!progress) return;
  const std::string text = std::string(command) + ": " + model::printableText(line) + "\n";
  progress->write(text.data(), std::streamsize(text.size()));
  progress->flush();
}

// Why an input is not read as a trace.
std::string whyNotATrace(const std::string& path, const OpenedInput& in) {
  if (in.empty) return "empty";
  // An Nsight Systems report itself is a format of NVIDIA's own: its SQLite export is what
  // gpuwise reads.
  if (path.ends_with(".nsys-rep") || path.ends_with(".qdrep"))
    return "an Nsight Systems report; export it first: nsys export --type sqlite " + path;
  return "not a gpuwise .gwt recording, a Kineto (PyTorch profiler) JSON trace or an Nsight "
         "Systems SQLite export";
}

// A gpuwise document (a report or a diff, `{"schema": "gpuwise.report/v1", ...`), which JSON
// sniffing alone takes for a trace: a report written into the folder of its traces is one.
bool isGpuwiseDocument(const std::string& path) {
  char head[256] = {};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  const std::string_view text(head, n);
  const size_t key = text.find("\"schema\"");
  if (key == std::string_view::npos || text.find('"') != key) return false; // the first key
  const size_t value = text.find_first_not_of(" \t\r\n:", key + 8);
  return value != std::string_view::npos && text.substr(value).starts_with("\"gpuwise.");
}

// The traces in folder `dir`, by name: every regular file whose content is a trace. Anything
// else is skipped with one line saying so; a folder without a trace is an error.
bool addFolder(const std::string& dir, const char* command, std::ostream* progress,
               std::vector<std::string>& paths, std::vector<OpenedInput>& inputs,
               std::string* error) {
  namespace fs = std::filesystem;
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    entries.push_back(it->path());
  if (ec) {
    *error = dir + ": cannot read the folder: " + ec.message();
    return false;
  }
  std::sort(entries.begin(), entries.end());
  size_t found = 0;
  for (const auto& entry : entries) {
    const std::string path = entry.string();
    // Only regular files: opening a FIFO or a device found in the folder could block or never end.
    if (!fs::is_regular_file(entry, ec)) {
      stderrLine(command, progress, path + ": skipped: not a regular file");
      continue;
    }
    OpenedInput in;
    if (!openInput(path, &in, error)) return false;
    if (in.kind == InputKind::Unknown) {
      stderrLine(command, progress, path + ": skipped: " + whyNotATrace(path, in));
      continue;
    }
    if (in.kind == InputKind::Kineto && isGpuwiseDocument(path)) {
      stderrLine(command, progress, path + ": skipped: a gpuwise report, not a trace");
      continue;
    }
    paths.push_back(path);
    inputs.push_back(std::move(in));
    ++found;
  }
  if (found == 0) {
    *error = dir + ": no trace in this folder (gpuwise .gwt recordings, Kineto .json or .json.gz "
                   "traces, Nsight Systems .sqlite exports)";
    return false;
  }
  return true;
}

// Every INPUT opened and its format told; a folder stands for the traces in it.
bool openAll(const std::vector<std::string>& given, const char* command, std::ostream* progress,
             std::vector<std::string>& paths, std::vector<OpenedInput>& inputs,
             std::string* error) {
  for (const auto& path : given) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      if (!addFolder(path, command, progress, paths, inputs, error)) return false;
      continue;
    }
    OpenedInput in;
    if (!openInput(path, &in, error)) return false;
    if (in.kind == InputKind::Unknown) {
      *error =
          path + ": " + (in.empty ? std::string("empty: nothing to read") : whyNotATrace(path, in));
      return false;
    }
    paths.push_back(path);
    inputs.push_back(std::move(in));
  }
  return true;
}

// One Kineto input that is not a regular file, read from memory.
bool addKinetoBuffer(const std::string& path, const OpenedInput& in, const char* command,
                     std::ostream* progress, LoadedInputs& loaded, std::string* error,
                     const TraceInputOptions& given) {
  Progress bar(command, progress, 1, "MB");
  KinetoImportOptions options;
  options.include_operators = given.include_operators;
  options.progress = [&](uint64_t done, uint64_t total) { bar.update(done, total); };
  auto one = importKinetoBuffer(in.bytes, path, options);
  if (!one.ok()) {
    *error = one.error;
    return false;
  }
  loaded.trace.processes.push_back(std::move(one.trace.processes.at(0)));
  loaded.trace.source.simulated = loaded.trace.source.simulated || one.trace.source.simulated;
  return true;
}

// Every process of an Nsight Systems export, in pid order (one file at a time: SQLite reads are
// serial).
bool addNsys(const std::string& path, const OpenedInput& in, const char* command,
             std::ostream* progress, LoadedInputs& loaded, std::string* error,
             const TraceInputOptions& given) {
  Progress bar(command, progress, 1, "M rows");
  NsysImportOptions options;
  options.include_operators = given.include_operators;
  options.progress = [&](uint64_t done, uint64_t total) { bar.update(done, total); };
  auto nsys = in.regular ? importNsys({path}, options) : importNsysBytes(in.bytes, path, options);
  if (!nsys.ok()) {
    *error = nsys.error;
    return false;
  }
  for (auto& p : nsys.trace.processes) {
    loaded.trace.processes.push_back(std::move(p));
    loaded.health.streams.push_back(std::nullopt);
  }
  loaded.trace.source.kind = model::SourceKind::Nsys;
  return true;
}

} // namespace

bool loadTraceInputs(const std::vector<std::string>& given, const char* command,
                     std::ostream* progress, LoadedInputs* out, std::string* error,
                     const TraceInputOptions& input_options) {
  std::vector<std::string> paths;
  std::vector<OpenedInput> inputs;
  if (!openAll(given, command, progress, paths, inputs, error)) return false;
  std::vector<std::string> kineto_paths; // regular files, imported together
  for (size_t i = 0; i < paths.size(); ++i)
    if (inputs[i].kind == InputKind::Kineto && inputs[i].regular) kineto_paths.push_back(paths[i]);

  KinetoImportResult kineto;
  if (!kineto_paths.empty()) {
    Progress bar(command, progress, kineto_paths.size(), "MB");
    KinetoImportOptions options;
    options.include_operators = input_options.include_operators;
    options.progress = [&](uint64_t done, uint64_t total) { bar.update(done, total); };
    kineto = importKineto(kineto_paths, options);
    if (!kineto.ok()) {
      *error = kineto.error;
      return false;
    }
  }

  LoadedInputs loaded;
  std::vector<InputProcesses> spans;
  size_t next_kineto = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    OpenedInput& in = inputs[i];
    const size_t first = loaded.trace.processes.size();
    if (in.kind == InputKind::Kineto) {
      // One process per Kineto file, in the order given.
      if (in.regular) {
        loaded.trace.processes.push_back(std::move(kineto.trace.processes.at(next_kineto++)));
        loaded.trace.source.simulated =
            loaded.trace.source.simulated || kineto.trace.source.simulated;
      } else if (!addKinetoBuffer(paths[i], in, command, progress, loaded, error, input_options)) {
        return false;
      }
      loaded.health.streams.push_back(std::nullopt);
      loaded.trace.source.kind = model::SourceKind::Kineto;
    } else if (in.kind == InputKind::Nsys) {
      if (!addNsys(paths[i], in, command, progress, loaded, error, input_options)) return false;
    } else {
      if (!addRecording(paths[i], in, command, progress, loaded, error)) return false;
    }
    in.bytes = std::string(); // an unseekable input's copy is not needed any more
    loaded.trace.source.files.push_back(paths[i]);
    spans.push_back({paths[i], first, loaded.trace.processes.size() - first});
  }
  if (!arrangeAsJob(spans, &loaded, error)) return false;
  *out = std::move(loaded);
  return true;
}

} // namespace gpuwise::advisor
