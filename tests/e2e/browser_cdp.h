// A tiny Chrome DevTools Protocol client for the browser test: starts a real headless Chromium
// with --remote-debugging-pipe (commands on fd 3, replies and events on fd 4, each message a JSON
// text ended by a NUL byte), opens a page, and reports what a person would see go wrong: console
// errors, uncaught exceptions, log entries at error level (CSP violations, failed loads), every
// network request the page made, and a PNG screenshot of the whole page.
//
// Chromium runs in its own process group with a fresh, empty profile directory and the flags the
// project uses everywhere (headless, no sandbox, no GPU, no QUIC, no first-run, no background
// networking, no component update, no sync). The destructor closes the browser, and kills its
// process group if it does not exit in time.
//
// Test code: one thread; calls block until the reply arrives or the deadline passes, and throw
// std::runtime_error with what was expected and what the browser logged.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gpuwise::advisor::test {

class Chromium {
public:
  using json = nlohmann::json;

  // The browser binary: $GPUWISE_CHROMIUM, else chromium, chromium-browser or google-chrome on
  // PATH; nullopt when none is installed.
  static std::optional<std::string> findBinary();
  // True when `binary --version` runs and says it is Chromium or Chrome (`version` set).
  static bool runs(const std::string& binary, std::string* version);

  // Starts the browser with a new profile in `work_dir`/profile and its output in
  // `work_dir`/chromium.log. Throws when it does not start or does not answer.
  Chromium(const std::string& binary, const std::string& work_dir);
  ~Chromium();
  Chromium(const Chromium&) = delete;
  Chromium& operator=(const Chromium&) = delete;

  // Sends a command (on a page session when `session` is not empty) and returns its result.
  json call(const std::string& method, const json& params = json::object(),
            const std::string& session = "",
            std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Waits until an event `method` arrived on `session` (including ones already received).
  void waitEvent(const std::string& method, const std::string& session,
                 std::chrono::milliseconds timeout = std::chrono::seconds(30));
  const std::vector<json>& events() const { return events_; }
  // The browser's own log, for failure messages.
  std::string log() const;

private:
  std::optional<json> readMessage(std::chrono::steady_clock::time_point deadline);

  pid_t pid_ = -1;
  int to_browser_ = -1, from_browser_ = -1;
  std::string log_path_;
  std::string buffer_;
  std::vector<json> events_;
  int next_id_ = 1;
};

struct PageReport {
  std::vector<std::string> errors;   // console errors, exceptions, error-level log entries
  std::vector<std::string> requests; // URLs of every request, the page itself included
  std::string png;                   // screenshot bytes (PNG) of the whole page
  int width = 0, height = 0;         // the page's size in CSS pixels
};

// Opens `url` in a new tab `width` CSS pixels wide, waits for the load event, and captures the
// whole page (at most `max_height` pixels tall).
PageReport loadPage(Chromium& browser, const std::string& url, int width = 1200,
                    int max_height = 16000);

} // namespace gpuwise::advisor::test
