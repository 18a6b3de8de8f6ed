// The terminal (issue 18): colour only on a terminal (NO_COLOR, TERM=dumb), the summary wrapped at
// the terminal's width (TIOCGWINSZ, COLUMNS), and `gpuwise report` under a pseudo-terminal.
#include "advisor/cli/terminal_style.h"
#include "advisor/report/terminal_summary.h"
#include "tests/advisor/subprocess.h"

#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <pty.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;

namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

std::string withoutSgr(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && s[i] != 'm')
        ++i;
      continue;
    }
    out += s[i];
  }
  return out;
}

// A job with one recommendation whose title is 14 words of 7 characters: wraps at any width.
ReportInput jobWithLongTitle(JobAnalysis& a, std::vector<Recommendation>& recs) {
  Recommendation r;
  r.id = "use_pinned_memory";
  r.expected_saving_ratio = 0.25;
  r.confidence = Confidence::High;
  for (int i = 10; i < 24; ++i)
    r.title += (r.title.empty() ? "" : " ") + std::string("word") + std::to_string(i) + "x";
  r.action = "Pin the host memory of the batches:\nDataLoader(dataset, pin_memory=True)";
  recs = {r};
  return ReportInput{a, recs};
}

std::string firstWord(const std::string& line) {
  size_t s = line.find_first_not_of(' ');
  return line.substr(s, line.find(' ', s) - s);
}

} // namespace

TEST_CASE("terminal: colour only on a terminal, never with NO_COLOR or TERM=dumb") {
  CHECK(colourWanted(true, nullptr, "xterm-256color"));
  CHECK(colourWanted(true, "", "xterm")); // NO_COLOR set but empty: no-color.org says ignore it
  CHECK_FALSE(colourWanted(false, nullptr, "xterm-256color"));
  CHECK_FALSE(colourWanted(true, "1", "xterm"));
  CHECK_FALSE(colourWanted(true, "0", "xterm")); // any non-empty value
  CHECK_FALSE(colourWanted(true, nullptr, "dumb"));
  CHECK_FALSE(colourWanted(true, nullptr, nullptr));
  CHECK_FALSE(colourWanted(true, nullptr, ""));
}

TEST_CASE("terminal: the width from the terminal, COLUMNS overriding it, clamped") {
  CHECK(wrapWidth(std::nullopt, nullptr) == kDefaultColumns); // a file or a pipe
  CHECK(wrapWidth(size_t{0}, nullptr) == kDefaultColumns);    // a terminal that says nothing
  CHECK(wrapWidth(size_t{132}, nullptr) == 132);
  CHECK(wrapWidth(size_t{80}, "120") == 120);
  CHECK(wrapWidth(std::nullopt, "90") == 90);
  CHECK(wrapWidth(size_t{80}, "wide") == 80); // not a number: ignored
  CHECK(wrapWidth(size_t{80}, "-5") == 80);
  CHECK(wrapWidth(size_t{80}, "0") == 80);
  CHECK(wrapWidth(size_t{20}, nullptr) == kMinColumns);
  CHECK(wrapWidth(size_t{1000}, nullptr) == kMaxColumns);
  CHECK(wrapWidth(std::nullopt, "99999999999999999999") == kMaxColumns);
  // Not a terminal: the fixed style whatever the environment's TERM.
  TerminalStyle none = terminalStyleFor(-1);
  CHECK_FALSE(none.colour);
}

TEST_CASE("terminal summary: wraps at the width it is given, each line as full as it can be") {
  JobAnalysis a;
  std::vector<Recommendation> recs;
  for (size_t width : {60, 80, 120, 200}) {
    TerminalOptions o;
    o.width = width;
    auto text = renderTerminalSummary(jobWithLongTitle(a, recs), o);
    auto ls = lines(text);
    INFO("width " << width << ":\n" << text);
    // The recommendation's lines: from "  1. [" up to its action ("     -> ").
    size_t first = 0;
    while (first < ls.size() && ls[first].rfind("  1. [", 0) != 0)
      ++first;
    REQUIRE(first < ls.size());
    size_t last = first;
    while (last + 1 < ls.size() && ls[last + 1].rfind("     -> ", 0) != 0)
      ++last;
    std::string joined;
    for (size_t i = first; i <= last; ++i) {
      CHECK(ls[i].size() <= width);
      if (i > first) CHECK(ls[i].rfind("      ", 0) == 0); // continuation: indent 2 + 4
      if (i < last) CHECK(ls[i].size() + 1 + firstWord(ls[i + 1]).size() > width); // full
      joined += (i > first ? " " : "") + ls[i].substr(ls[i].find_first_not_of(' '));
    }
    CHECK(joined == "1. [saves ~25.0%, high confidence] " + recs[0].title);
    CHECK((last == first) == (2 + joined.size() <= width)); // 148 columns: one line at 200 only
    for (const auto& l : ls)
      if (l.rfind("gpuwise", 0) != 0) CHECK(l.size() <= width); // the verdict is never wrapped
  }
  // The exact break points at 60 columns.
  TerminalOptions o;
  o.width = 60;
  auto ls = lines(renderTerminalSummary(jobWithLongTitle(a, recs), o));
  auto it =
      std::find_if(ls.begin(), ls.end(), [](const auto& l) { return l.rfind("  1.", 0) == 0; });
  REQUIRE(ls.end() - it >= 3);
  CHECK(it[0] == "  1. [saves ~25.0%, high confidence] word10x word11x word12x");
  CHECK(it[1] == "      word13x word14x word15x word16x word17x word18x");
  CHECK(it[2] == "      word19x word20x word21x word22x word23x");
}

TEST_CASE("terminal summary: colour marks the lines and leaves the text and widths as they were") {
  JobAnalysis a;
  std::vector<Recommendation> recs;
  TerminalOptions plain;
  plain.width = 70;
  TerminalOptions colour = plain;
  colour.colour = true;
  const auto p = renderTerminalSummary(jobWithLongTitle(a, recs), plain);
  const auto c = renderTerminalSummary(jobWithLongTitle(a, recs), colour);
  CHECK(p.find('\x1b') == std::string::npos);
  CHECK(c.rfind("\x1b[1mgpuwise: ", 0) == 0);                        // the verdict, bold
  CHECK(c.find("\x1b[32msaves ~25.0%\x1b[0m") != std::string::npos); // the saving, green
  CHECK(c.find("\x1b[36m     -> DataLoader") != std::string::npos);  // the change, cyan
  CHECK(withoutSgr(c) == p);
  // Every code is closed on its own line: a line never ends inside a colour.
  for (const auto& l : lines(c))
    if (l.find("\x1b[") != std::string::npos) CHECK(l.substr(l.size() - 4) == "\x1b[0m");
}

TEST_CASE("terminal: a pseudo-terminal's width and colour, read from its descriptor") {
  int master = -1, slave = -1;
  winsize ws{};
  ws.ws_row = 40;
  ws.ws_col = 77;
  REQUIRE(::openpty(&master, &slave, nullptr, nullptr, &ws) == 0);
  const char* columns = std::getenv("COLUMNS");
  const std::string saved_columns = columns ? columns : "";
  const char* term = std::getenv("TERM");
  const std::string saved_term = term ? term : "";
  ::unsetenv("COLUMNS");
  ::unsetenv("NO_COLOR");
  ::setenv("TERM", "xterm", 1);
  TerminalStyle tty = terminalStyleFor(slave);
  ::setenv("COLUMNS", "150", 1);
  TerminalStyle wide = terminalStyleFor(slave);
  ::setenv("NO_COLOR", "1", 1);
  TerminalStyle no_color = terminalStyleFor(slave);
  ::unsetenv("NO_COLOR");
  if (columns)
    ::setenv("COLUMNS", saved_columns.c_str(), 1);
  else
    ::unsetenv("COLUMNS");
  if (term)
    ::setenv("TERM", saved_term.c_str(), 1);
  else
    ::unsetenv("TERM");
  ::close(slave);
  ::close(master);
  CHECK(tty.width == 77);
  CHECK(tty.colour);
  CHECK(wide.width == 150);
  CHECK_FALSE(no_color.colour);
}

namespace {

struct PtyRun {
  int status = -1;
  std::string output; // \r\n turned into \n
};

// `argv` under a pseudo-terminal of `columns` columns, in `cwd`, with `env` added.
PtyRun runUnderPty(const std::vector<std::string>& argv, std::vector<std::string> env,
                   const std::string& cwd, unsigned short columns) {
  std::vector<std::string> all;
  auto nameOf = [](const std::string& e) { return e.substr(0, e.find('=')); };
  for (char** e = environ; *e; ++e) {
    bool overridden = nameOf(*e) == "COLUMNS" || nameOf(*e) == "NO_COLOR";
    for (const auto& o : env)
      overridden = overridden || nameOf(o) == nameOf(*e);
    if (!overridden) all.emplace_back(*e);
  }
  all.insert(all.end(), env.begin(), env.end());
  gpuwise::test::keepSanitizerPreload(all);
  gpuwise::test::forProgram(argv[0], buildDir(), all);
  std::vector<char*> args, envp;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : all)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  winsize ws{};
  ws.ws_row = 50;
  ws.ws_col = columns;
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, &ws);
  if (pid < 0) throw std::runtime_error("forkpty failed");
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) _exit(126);
    ::execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  PtyRun r;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0) {
      r.output.append(buf, size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break; // EIO once the child side is closed
  }
  ::close(master);
  ::waitpid(pid, &r.status, 0);
  std::string clean;
  for (char ch : r.output)
    if (ch != '\r') clean += ch;
  r.output = clean;
  return r;
}

} // namespace

TEST_CASE("gpuwise report under a terminal: colour and its width; NO_COLOR and pipes plain") {
  TempDir dir;
  // A Chrome trace without GPU activity is a valid trace: it gets a report and a verdict.
  const std::string trace = dir / "empty.json";
  std::ofstream(trace) << "{\"traceEvents\": []}";
  const std::vector<std::string> argv{buildDir() + "/bin/gpuwise", "report", trace};

  auto coloured = runUnderPty(argv, {"TERM=xterm-256color"}, dir.path, 70);
  INFO(coloured.output);
  REQUIRE(WIFEXITED(coloured.status));
  REQUIRE(WEXITSTATUS(coloured.status) == 0);
  CHECK(coloured.output.find("\x1b[1mgpuwise: no GPU activity recorded") != std::string::npos);
  for (const auto& l : lines(withoutSgr(coloured.output)))
    if (l.rfind("gpuwise", 0) != 0) CHECK(l.size() <= 70);

  auto no_color = runUnderPty(argv, {"TERM=xterm-256color", "NO_COLOR=1"}, dir.path, 70);
  INFO(no_color.output);
  REQUIRE(WIFEXITED(no_color.status));
  CHECK(WEXITSTATUS(no_color.status) == 0);
  CHECK(no_color.output.find("gpuwise: no GPU activity recorded") != std::string::npos);
  CHECK(no_color.output.find('\x1b') == std::string::npos);

  auto dumb = runUnderPty(argv, {"TERM=dumb"}, dir.path, 70);
  CHECK(dumb.output.find("gpuwise: no GPU activity recorded") != std::string::npos);
  CHECK(dumb.output.find('\x1b') == std::string::npos);

  // Not a terminal (a file), even with TERM set: plain.
  Process piped(argv, {"TERM=xterm-256color"}, dir.path, dir.path, "piped");
  REQUIRE(piped.wait() == 0);
  CHECK(piped.out().find("gpuwise: no GPU activity recorded") != std::string::npos);
  CHECK(piped.out().find('\x1b') == std::string::npos);
}
