#include "tests/e2e/browser_cdp.h"

#include "tests/advisor/subprocess.h"
#include "tests/base64.h"
#include "tests/e2e/browser_png.h"
#include "tests/sanitizer_env.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace gpuwise::advisor::test {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

// A pipe end moved above the low descriptors and closed on exec, so it cannot collide with the
// fds 3 and 4 the child gets.
int highFd(int fd) {
  int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 64);
  ::close(fd);
  return high;
}

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The environment the browser `binary` runs in: this process's, as the sanitizer lanes' rule has it
// for a program we do not build (tests/sanitizer_env.h: libasan preloaded into Chromium hangs its
// start). Kept alive with the pointers into it.
struct BrowserEnvironment {
  std::vector<std::string> entries;
  std::vector<char*> pointers;
  explicit BrowserEnvironment(const std::string& binary) {
    for (char** e = environ; *e; ++e)
      entries.emplace_back(*e);
    gpuwise::test::forProgram(binary, "", entries);
    for (auto& e : entries)
      pointers.push_back(e.data());
    pointers.push_back(nullptr);
  }
};

// The captured output of a short command, and whether it exited 0.
bool capture(const std::vector<std::string>& argv, std::string* out) {
  std::string path =
      std::filesystem::temp_directory_path() / ("gw-browser-version-" + std::to_string(::getpid()));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  BrowserEnvironment env(argv[0]);
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), env.pointers.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return false;
  int status = 0;
  auto deadline = Clock::now() + std::chrono::seconds(60);
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  *out = readAll(path);
  std::filesystem::remove(path);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace

std::optional<std::string> Chromium::findBinary() {
  if (const char* env = std::getenv("GPUWISE_CHROMIUM"); env && *env) return std::string(env);
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
    if (std::string found = which(name); !found.empty()) return found;
  return std::nullopt;
}

bool Chromium::runs(const std::string& binary, std::string* version) {
  std::string out;
  if (!capture({binary, "--version"}, &out)) return false;
  if (out.find("Chromium") == std::string::npos && out.find("Chrome") == std::string::npos)
    return false;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
    out.pop_back();
  *version = out;
  return true;
}

Chromium::Chromium(const std::string& binary, const std::string& work_dir)
    : log_path_(work_dir + "/chromium.log") {
  int to[2], from[2];
  if (::pipe(to) != 0 || ::pipe(from) != 0) throw std::runtime_error("pipe failed");
  int child_in = highFd(to[0]), child_out = highFd(from[1]);
  to_browser_ = highFd(to[1]);
  from_browser_ = highFd(from[0]);

  std::vector<std::string> argv = {binary,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--disable-dev-shm-usage",
                                   "--hide-scrollbars",
                                   "--user-data-dir=" + work_dir + "/profile",
                                   "--remote-debugging-pipe",
                                   "about:blank"};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_adddup2(&fa, child_in, 3);
  posix_spawn_file_actions_adddup2(&fa, child_out, 4);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0); // its own group: the cleanup can reach its helpers
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  BrowserEnvironment env(binary);
  int rc = posix_spawn(&pid_, binary.c_str(), &fa, &attr, args.data(), env.pointers.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(child_in);
  ::close(child_out);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error(binary + ": cannot start: " + std::strerror(rc));
  }
  // The first answer proves the pipe protocol works.
  call("Browser.getVersion", json::object(), "", std::chrono::seconds(60));
}

Chromium::~Chromium() {
  if (pid_ > 0) {
    try {
      call("Browser.close", json::object(), "", std::chrono::seconds(5));
    } catch (const std::exception&) {
      // Killed below.
    }
    int status = 0;
    auto deadline = Clock::now() + std::chrono::seconds(10);
    while (::waitpid(pid_, &status, WNOHANG) == 0 && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ::kill(-pid_, SIGKILL); // whatever is left of the group we created
    ::waitpid(pid_, &status, WNOHANG);
  }
  if (to_browser_ >= 0) ::close(to_browser_);
  if (from_browser_ >= 0) ::close(from_browser_);
}

std::string Chromium::log() const {
  std::string text = readAll(log_path_);
  return text.size() > 4000 ? text.substr(text.size() - 4000) : text;
}

std::optional<json> Chromium::readMessage(Clock::time_point deadline) {
  for (;;) {
    if (auto end = buffer_.find('\0'); end != std::string::npos) {
      std::string text = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return json::parse(text);
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{from_browser_, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    char chunk[65536];
    ssize_t n = ::read(from_browser_, chunk, sizeof chunk);
    if (n == 0) throw std::runtime_error("the browser closed the pipe; its log:\n" + log());
    if (n < 0 && errno != EINTR && errno != EAGAIN)
      throw std::runtime_error(std::string("read from the browser: ") + std::strerror(errno));
    if (n > 0) buffer_.append(chunk, static_cast<size_t>(n));
  }
}

json Chromium::call(const std::string& method, const json& params, const std::string& session,
                    std::chrono::milliseconds timeout) {
  int id = next_id_++;
  json msg = {{"id", id}, {"method", method}, {"params", params}};
  if (!session.empty()) msg["sessionId"] = session;
  std::string text = msg.dump();
  text.push_back('\0');
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(to_browser_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(method + ": write to the browser failed; its log:\n" + log());
    done += static_cast<size_t>(n);
  }
  auto deadline = Clock::now() + timeout;
  for (;;) {
    auto m = readMessage(deadline);
    if (!m) throw std::runtime_error(method + ": no answer in time; browser log:\n" + log());
    if (m->contains("id") && (*m)["id"] == id) {
      if (m->contains("error"))
        throw std::runtime_error(method + " failed: " + (*m)["error"].dump());
      return m->value("result", json::object());
    }
    if (m->contains("method")) events_.push_back(std::move(*m));
  }
}

void Chromium::waitEvent(const std::string& method, const std::string& session,
                         std::chrono::milliseconds timeout) {
  auto matches = [&](const json& e) {
    return e.value("method", "") == method && e.value("sessionId", "") == session;
  };
  for (const auto& e : events_)
    if (matches(e)) return;
  auto deadline = Clock::now() + timeout;
  for (;;) {
    auto m = readMessage(deadline);
    if (!m) throw std::runtime_error("no " + method + " event in time; browser log:\n" + log());
    if (!m->contains("method")) continue;
    events_.push_back(std::move(*m));
    if (matches(events_.back())) return;
  }
}

PageReport loadPage(Chromium& b, const std::string& url, int width, int max_height) {
  PageReport page;
  auto target = b.call("Target.createTarget", {{"url", "about:blank"}});
  auto attached =
      b.call("Target.attachToTarget", {{"targetId", target["targetId"]}, {"flatten", true}});
  std::string s = attached["sessionId"];
  for (const char* domain : {"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"})
    b.call(domain, json::object(), s);
  json metrics = {{"width", width}, {"height", 900}, {"deviceScaleFactor", 1}, {"mobile", false}};
  b.call("Emulation.setDeviceMetricsOverride", metrics, s);
  size_t first_event = b.events().size();
  auto nav = b.call("Page.navigate", {{"url", url}}, s);
  if (nav.contains("errorText")) throw std::runtime_error(url + ": " + nav["errorText"].dump());
  b.waitEvent("Page.loadEventFired", s);

  auto layout = b.call("Page.getLayoutMetrics", json::object(), s);
  const auto& size =
      layout.contains("cssContentSize") ? layout["cssContentSize"] : layout["contentSize"];
  page.width = width;
  page.height = std::min(max_height, static_cast<int>(size.value("height", 900.0) + 0.5));
  metrics["height"] = page.height;
  b.call("Emulation.setDeviceMetricsOverride", metrics, s);
  auto shot = b.call("Page.captureScreenshot", {{"format", "png"}}, s, std::chrono::seconds(60));
  page.png = gpuwise::test::decodeBase64(shot.value("data", ""));

  for (size_t i = first_event; i < b.events().size(); ++i) {
    const auto& e = b.events()[i];
    if (e.value("sessionId", "") != s) continue;
    std::string method = e.value("method", "");
    const auto& p = e["params"];
    if (method == "Runtime.exceptionThrown") {
      page.errors.push_back("exception: " + p["exceptionDetails"].dump());
    } else if (method == "Runtime.consoleAPICalled") {
      std::string type = p.value("type", "");
      if (type == "error" || type == "assert")
        page.errors.push_back("console." + type + ": " + p["args"].dump());
    } else if (method == "Log.entryAdded") {
      if (p["entry"].value("level", "") == "error")
        page.errors.push_back("log: " + p["entry"].dump());
    } else if (method == "Network.requestWillBeSent") {
      page.requests.push_back(p["request"].value("url", ""));
    } else if (method == "Network.loadingFailed") {
      page.errors.push_back("loading failed: " + p.dump());
    }
  }
  b.call("Target.closeTarget", {{"targetId", target["targetId"]}});
  return page;
}

} // namespace gpuwise::advisor::test
