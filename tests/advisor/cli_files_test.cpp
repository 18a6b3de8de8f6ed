// The gpuwise CLI and the files it is given, end to end (build/bin/gpuwise as a process): output
// paths that are not plain files (a symlink, a FIFO, a device) are written through and never
// replaced; inputs that can be read only once (a FIFO, /dev/stdin on a pipe, `<(zcat ...)`, which
// is a /dev/fd path) are opened once; a .gwt of garbage records is an error; an error line never
// carries a raw control byte from the file.
//
// Nothing here writes to a shared path that a broken build would replace (these tests run as root
// in CI): not /dev/null, not /dev/stdout. The device case uses a private node made with mknod
// where this process may (root), else /dev/full, which any write fails with ENOSPC; the descriptor
// case names /dev/fd/1, under which nothing can be created.
#include "tests/advisor/subprocess.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <zlib.h>

#include <atomic>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

using namespace gpuwise::advisor::test;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string gpuwiseExe() {
  return buildDir() + "/bin/gpuwise";
}
// A small real Kineto trace (HolisticTraceAnalysis's trace_compare/base, cut; see the fuzz README).
std::string kinetoTrace() {
  return readFile(sourceDir() + "/tests/fuzz/corpus/kineto_importer/hta-base.json");
}
std::string gzipped(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, uLong(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = uInt(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}
void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}
size_t lineCount(const std::string& s) {
  return size_t(std::count(s.begin(), s.end(), '\n'));
}
mode_t typeOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

// Reads a FIFO while `p` runs, without ever blocking: opened non-blocking for reading, with a
// writer of our own held open so that the FIFO reports no end of file before gpuwise has written.
// Returns what arrived by the time `p` exited.
std::string drainFifoWhile(const std::string& fifo, Process& p, std::optional<int>* status) {
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(rd >= 0);
  const int keep = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(keep >= 0);
  std::string got;
  auto drain = [&] {
    char buf[65536];
    for (ssize_t n; (n = ::read(rd, buf, sizeof buf)) > 0;)
      got.append(buf, size_t(n));
  };
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!(*status = p.wait(0ms)) && std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{rd, POLLIN, 0};
    ::poll(&pfd, 1, 20);
    drain();
  }
  drain();
  ::close(keep);
  ::close(rd);
  return got;
}

// Runs gpuwise with `content` arriving on a pipe as descriptor `target_fd` (0: stdin; 3: what
// bash's `<(cmd)` hands a program as /dev/fd/3), written by a thread, then waits for it.
struct PipedRun {
  std::optional<int> status;
  std::string err, out;
};
PipedRun runWithPipe(const std::vector<std::string>& args, int target_fd,
                     const std::string& content, const std::string& dir) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  std::vector<std::string> argv{gpuwiseExe()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const std::string out = dir + "/piped.out", err = dir + "/piped.err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[0], target_fd);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[0]);
  // A reader that stops early makes write() fail with EPIPE (SIGPIPE is ignored below).
  std::thread writer([fd = fds[1], &content] {
    size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n <= 0) break;
      done += size_t(n);
    }
    ::close(fd);
  });
  PipedRun r;
  eventually(
      [&] {
        int st = 0;
        if (::waitpid(pid, &st, WNOHANG) != pid) return false;
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return true;
      },
      60s);
  if (!r.status) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  writer.join();
  r.out = readFile(out);
  r.err = readFile(err);
  return r;
}

// A device every write to fails with ENOSPC. Root may make its own /dev/full twin (char 1:7) in
// the temporary folder, so that even a broken build could replace only that one; elsewhere
// /dev/full itself, which nobody but root can replace (and a write to it fails the same way).
std::string fullDevice(const TempDir& dir) {
  const std::string own = dir / "full";
  if (::mknod(own.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) {
    const int fd = ::open(own.c_str(), O_WRONLY | O_CLOEXEC); // a nodev mount refuses
    if (fd >= 0) {
      ::close(fd);
      return own;
    }
  }
  return "/dev/full";
}

struct IgnoreSigpipe {
  IgnoreSigpipe() { std::signal(SIGPIPE, SIG_IGN); }
} ignore_sigpipe;

} // namespace

TEST_CASE("gpuwise report --json through a symlink writes its target and keeps the link") {
  TempDir dir;
  writeBytes(dir / "trace.json", kinetoTrace());
  writeBytes(dir / "real.json", "old");
  REQUIRE(::symlink("real.json", (dir / "link.json").c_str()) == 0);
  std::filesystem::create_directory(dir / "sub");
  REQUIRE(::symlink((dir / "sub/new.html").c_str(), (dir / "dangling.html").c_str()) == 0);
  Process p({gpuwiseExe(), "report", dir / "trace.json", "--json", dir / "link.json", "--html",
             dir / "dangling.html"},
            {}, dir.path, dir.path, "report");
  REQUIRE(p.wait() == 0);
  INFO(p.err());
  CHECK(typeOf(dir / "link.json") == S_IFLNK);
  CHECK(json::parse(readFile(dir / "real.json"))["schema"] == "gpuwise.report/v1");
  // A dangling link is written through to the file it names, as `>` in a shell does.
  CHECK(typeOf(dir / "dangling.html") == S_IFLNK);
  CHECK(readFile(dir / "sub/new.html").find("<html") != std::string::npos);
  // No temporary file is left beside either.
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path))
    CHECK(e.path().string().find(".tmp.") == std::string::npos);
}

// Runs as advisor_cli_files_root_test, reported Skipped where the test is not root.
TEST_CASE("a stranger's symlink in a sticky world-writable folder is not followed", "[.root]") {
  TempDir dir;
  writeBytes(dir / "trace.json", kinetoTrace());
  std::filesystem::create_directory(dir / "shared");
  REQUIRE(::chmod((dir / "shared").c_str(), 01777) == 0);
  REQUIRE(::symlink((dir / "victim").c_str(), (dir / "shared/report.json").c_str()) == 0);
  // The link must belong to someone else: only root can give it away.
  if (::lchown((dir / "shared/report.json").c_str(), 65534, 65534) != 0)
    gpuwise::test::skipTest("cannot give the link to another user (not root)");
  Process p({gpuwiseExe(), "report", dir / "trace.json", "--json", dir / "shared/report.json"}, {},
            dir.path, dir.path, "sticky");
  REQUIRE(p.wait() == 2);
  INFO(p.err());
  CHECK(p.err().find("shared/report.json: cannot write: Permission denied") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "victim"));
}

TEST_CASE("gpuwise report and export write through a FIFO, which stays a FIFO") {
  TempDir dir;
  writeBytes(dir / "trace.json", kinetoTrace());
  REQUIRE(::mkfifo((dir / "out.fifo").c_str(), 0600) == 0);
  {
    Process p({gpuwiseExe(), "report", dir / "trace.json", "--json", dir / "out.fifo"}, {},
              dir.path, dir.path, "report");
    std::optional<int> status;
    const std::string got = drainFifoWhile(dir / "out.fifo", p, &status);
    INFO(p.err());
    REQUIRE(status == 0);
    CHECK(typeOf(dir / "out.fifo") == S_IFIFO);
    REQUIRE_FALSE(got.empty());
    CHECK(json::parse(got)["schema"] == "gpuwise.report/v1");
  }
  {
    Process p(
        {gpuwiseExe(), "export", "--format", "chrome", dir / "trace.json", "-o", dir / "out.fifo"},
        {}, dir.path, dir.path, "export");
    std::optional<int> status;
    const std::string got = drainFifoWhile(dir / "out.fifo", p, &status);
    INFO(p.err());
    REQUIRE(status == 0);
    CHECK(typeOf(dir / "out.fifo") == S_IFIFO);
    REQUIRE_FALSE(got.empty());
    CHECK(json::parse(got).contains("traceEvents"));
  }
}

TEST_CASE("an output named /dev/fd/1 goes to the descriptor, a pipe or the file behind it") {
  TempDir dir;
  writeBytes(dir / "trace.json", kinetoTrace());
  // stdout is a file here (Process redirects it): the report lands in it, ahead of the summary.
  // /dev/fd/1, not /dev/stdout: a build that renamed over its output would replace /dev/stdout
  // (as root, for the whole machine), while nothing can be created in /proc/self/fd.
  Process p({gpuwiseExe(), "report", dir / "trace.json", "--json", "/dev/fd/1"}, {}, dir.path,
            dir.path, "stdout");
  REQUIRE(p.wait() == 0);
  INFO(p.err());
  const std::string out = p.out();
  CHECK(out.rfind("{", 0) == 0);
  CHECK(out.find("\"gpuwise.report/v1\"") != std::string::npos);
  CHECK(out.find("gpuwise: GPU busy") != std::string::npos); // the summary after it
}

TEST_CASE("a full device as the output: exit 2, one line, the device still a device") {
  TempDir dir;
  writeBytes(dir / "trace.json", kinetoTrace());
  const std::string device = fullDevice(dir);
  INFO("device: " << device);
  const std::vector<std::vector<std::string>> commands = {
      {"report", dir / "trace.json", "--json", device},
      {"report", dir / "trace.json", "--html", device},
      {"export", "--format", "chrome", dir / "trace.json", "-o", device},
  };
  int i = 0;
  for (const auto& args : commands) {
    std::vector<std::string> argv{gpuwiseExe()};
    argv.insert(argv.end(), args.begin(), args.end());
    Process p(argv, {}, dir.path, dir.path, "full" + std::to_string(i++));
    REQUIRE(p.wait() == 2);
    const std::string err = p.err();
    INFO(err);
    // The terminal summary goes to stdout; stderr has the one error line.
    CHECK(lineCount(err) == 1);
    CHECK(err.find(device + ": cannot write: No space left on device") != std::string::npos);
    CHECK(typeOf(device) == S_IFCHR);
  }
}

TEST_CASE("gpuwise run --report-json on a full device says so and leaves the device") {
  TempDir dir;
  const std::string device = fullDevice(dir);
  // Without a shim (none at GPUWISE_SHIM): the command runs, the in-process advisor reports.
  Process p({gpuwiseExe(), "run", "--report-json", device, "--report-html", dir / "r.html", "--",
             "/bin/true"},
            {"GPUWISE_SHIM=" + (dir / "no-shim.so")}, dir.path, dir.path, "run");
  // `run` exits with the command's status (DESIGN.md); the failed report is one line naming it.
  REQUIRE(p.wait() == 0);
  INFO(p.err());
  CHECK(p.err().find("gpuwise run: " + device + ": cannot write: No space left on device\n") !=
        std::string::npos);
  CHECK(typeOf(device) == S_IFCHR);
  CHECK(std::filesystem::exists(dir / "r.html"));
}

TEST_CASE("a regular output file is still replaced atomically") {
  TempDir dir;
  writeBytes(dir / "trace.json", kinetoTrace());
  writeBytes(dir / "report.json", "old");
  struct stat before {};
  REQUIRE(::stat((dir / "report.json").c_str(), &before) == 0);
  Process p({gpuwiseExe(), "report", dir / "trace.json", "--json", dir / "report.json"}, {},
            dir.path, dir.path, "report");
  REQUIRE(p.wait() == 0);
  struct stat after {};
  REQUIRE(::stat((dir / "report.json").c_str(), &after) == 0);
  CHECK(S_ISREG(after.st_mode));
  CHECK(after.st_ino != before.st_ino); // a new file renamed into place, not the old one rewritten
  CHECK(json::parse(readFile(dir / "report.json"))["schema"] == "gpuwise.report/v1");
  // A directory that does not exist: one line, and nothing is left behind.
  Process q({gpuwiseExe(), "report", dir / "trace.json", "--json", dir / "no/such/dir/r.json"}, {},
            dir.path, dir.path, "missing");
  REQUIRE(q.wait() == 2);
  CHECK(lineCount(q.err()) == 1);
  CHECK(q.err().find("no/such/dir/r.json: cannot write") != std::string::npos);
}

TEST_CASE("a named FIFO as the input is read once, plain or gzipped") {
  TempDir dir;
  const std::string text = kinetoTrace();
  for (const std::string& content : {text, gzipped(text)}) {
    const std::string fifo = dir / "in.fifo";
    std::filesystem::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    Process p({gpuwiseExe(), "report", fifo, "--json", dir / "r.json"}, {}, dir.path, dir.path,
              "fifo");
    // The writer: waits (without blocking for good) for gpuwise to open the FIFO, then writes.
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      int fd = -1;
      while (!stop && (fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
        std::this_thread::sleep_for(5ms);
      if (fd < 0) return;
      ::fcntl(fd, F_SETFL, 0); // blocking from here: the reader is there
      size_t done = 0;
      while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n <= 0) break;
        done += size_t(n);
      }
      ::close(fd);
    });
    const auto status = p.wait(60s);
    stop = true;
    writer.join();
    INFO((content == text ? "plain" : "gzip") << "\nstderr: " << p.err());
    REQUIRE(status == 0);
    const auto r = json::parse(readFile(dir / "r.json"));
    CHECK(r["source"]["kind"] == "kineto");
    CHECK(r["summary"]["kernel_count"].get<int>() > 0);
  }
}

TEST_CASE("/dev/stdin on a pipe and a <(...) /dev/fd path are read once") {
  TempDir dir;
  const std::string text = kinetoTrace();
  writeBytes(dir / "trace.json", text);
  Process file({gpuwiseExe(), "report", dir / "trace.json", "--json", dir / "file.json"}, {},
               dir.path, dir.path, "file");
  REQUIRE(file.wait() == 0);
  const auto expected = json::parse(readFile(dir / "file.json"))["summary"];

  struct Case {
    const char* what;
    int fd;
    std::string path, content;
  };
  const std::vector<Case> cases = {
      {"cat t.json | gpuwise report /dev/stdin", 0, "/dev/stdin", text},
      {"gpuwise report <(zcat t.json.gz)", 3, "/dev/fd/3", text},
      {"gpuwise report <(cat t.json.gz)", 3, "/dev/fd/3", gzipped(text)},
  };
  for (const auto& c : cases) {
    auto r =
        runWithPipe({"report", c.path, "--json", dir / "piped.json"}, c.fd, c.content, dir.path);
    INFO(c.what << "\nstderr: " << r.err);
    REQUIRE(r.status == 0);
    const auto got = json::parse(readFile(dir / "piped.json"));
    CHECK(got["summary"]["kernel_count"] == expected["kernel_count"]);
    CHECK(got["summary"]["gpu_busy_seconds"] == expected["gpu_busy_seconds"]);
    CHECK(got["source"]["files"] == json::array({c.path}));
  }
}

TEST_CASE("a .gwt recording and an Nsight export arrive through a pipe") {
  TempDir dir;
  const std::string gwt =
      readFile(sourceDir() + "/tests/fuzz/corpus/gwt_replay/seed-every-kind.gwt");
  const std::string nsys =
      readFile(sourceDir() + "/tests/fuzz/corpus/nsys_importer/built-every-table.sqlite");
  REQUIRE_FALSE(gwt.empty());
  REQUIRE_FALSE(nsys.empty());
  {
    auto r = runWithPipe({"report", "/dev/stdin", "--json", dir / "gwt.json"}, 0, gwt, dir.path);
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(json::parse(readFile(dir / "gwt.json"))["source"]["kind"] == "gwt");
  }
  {
    auto r = runWithPipe({"report", "/dev/fd/3", "--json", dir / "nsys.json"}, 3, nsys, dir.path);
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto got = json::parse(readFile(dir / "nsys.json"));
    CHECK(got["summary"]["kernel_count"] == 1);
  }
  {
    // Garbage after SQLite's magic, through a pipe: the error names the input, not the spool.
    auto r = runWithPipe({"report", "/dev/fd/3"}, 3,
                         std::string("SQLite format 3\0", 16) + std::string(600, 'x'), dir.path);
    INFO(r.err);
    REQUIRE(r.status == 2);
    CHECK(lineCount(r.err) == 1);
    CHECK(r.err.find("/dev/fd/3: not a readable SQLite database") != std::string::npos);
    CHECK(r.err.find("gpuwise-nsys-") == std::string::npos);
  }
  {
    auto r = runWithPipe({"report", "/dev/stdin"}, 0, "", dir.path);
    INFO(r.err);
    REQUIRE(r.status == 2);
    CHECK(lineCount(r.err) == 1);
    CHECK(r.err.find("/dev/stdin: empty") != std::string::npos);
  }
  {
    // A device that never ends is told apart by its first bytes, not read to its end.
    Process p({gpuwiseExe(), "report", "/dev/zero"}, {}, dir.path, dir.path, "zero");
    REQUIRE(p.wait(30s) == 2);
    CHECK(lineCount(p.err()) == 1);
    CHECK(p.err().find("/dev/zero: not a gpuwise .gwt recording") != std::string::npos);
  }
}

std::string gwtRecord(const std::string& body) {
  const auto n = uint32_t(body.size());
  const char len[4] = {char(n), char(n >> 8), char(n >> 16), char(n >> 24)};
  return std::string(len, 4) + body;
}

TEST_CASE("a well-framed .gwt of garbage records is one line and exit 2") {
  TempDir dir;
  // The magic, then three records whose framing is right and whose bytes are not messages.
  const std::string magic = "GWTRACE1";
  writeBytes(dir / "garbage.gwt", magic + gwtRecord("this is not a message") +
                                      gwtRecord(std::string(64, '\xee')) +
                                      gwtRecord("GWMS and then nothing useful"));
  Process p({gpuwiseExe(), "report", dir / "garbage.gwt", "--json", dir / "r.json"}, {}, dir.path,
            dir.path, "garbage");
  REQUIRE(p.wait() == 2);
  INFO(p.err());
  CHECK(lineCount(p.err()) == 1);
  CHECK(p.err().rfind("gpuwise report: " + (dir / "garbage.gwt") + ": not a gpuwise recording",
                      0) == 0);
  CHECK(p.err().find("offset 8") != std::string::npos);
  CHECK(p.err().find("dropped a message") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "r.json"));

  // A real recording with a garbage record among its own (a forged message on the socket, which
  // the live advisor dropped too): reported, the rejection counted, one line saying so.
  const std::string seed =
      readFile(sourceDir() + "/tests/fuzz/corpus/gwt_replay/seed-every-kind.gwt");
  REQUIRE(seed.size() > magic.size());
  writeBytes(dir / "mixed.gwt", seed + gwtRecord("forged"));
  Process q({gpuwiseExe(), "report", dir / "mixed.gwt", "--json", dir / "m.json"}, {}, dir.path,
            dir.path, "mixed");
  REQUIRE(q.wait() == 0);
  INFO(q.err());
  CHECK(lineCount(q.err()) == 1);
  CHECK(q.err().find("mixed.gwt: 1 of 5 records rejected") != std::string::npos);
  CHECK(json::parse(readFile(dir / "m.json"))["processes"].size() == 1);

  // The magic alone (a run that sent nothing) is an empty recording, not an error.
  writeBytes(dir / "empty.gwt", magic);
  Process e({gpuwiseExe(), "report", dir / "empty.gwt", "--json", dir / "e.json"}, {}, dir.path,
            dir.path, "empty");
  CHECK(e.wait() == 0);
}

TEST_CASE("an error line escapes the control bytes a file puts in it") {
  TempDir dir;
  // An SQLite database whose schema names a table with an ESC sequence and holds broken SQL:
  // SQLite's "malformed database schema (NAME)" quotes the name.
  const std::string db_path = dir / "evil.sqlite";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  const char* sql = "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                    "PRAGMA writable_schema = ON;"
                    "INSERT INTO sqlite_master VALUES ('table', char(27) || '[31mevil', "
                    "char(27) || '[31mevil', 0, 'CREATE TABLE oops(');";
  REQUIRE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  // A file name with an ESC of its own, in a path that does not exist.
  const std::string missing = dir / "gone\x1b[2J.json";
  for (const auto& [input, expect] :
       {std::pair{db_path, std::string("\\x1b[31mevil")},
        std::pair{missing, std::string("gone\\x1b[2J.json: cannot read")}}) {
    Process p({gpuwiseExe(), "report", input}, {}, dir.path, dir.path, "evil");
    REQUIRE(p.wait() == 2);
    const std::string err = p.err();
    INFO(err);
    CHECK(lineCount(err) == 1);
    CHECK(err.find('\x1b') == std::string::npos);
    CHECK(err.find(expect) != std::string::npos);
  }
}
