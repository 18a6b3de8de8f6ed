// The gpuwise command line (DESIGN.md's CLI contract):
//
//   gpuwise version
//   gpuwise run [--simulate] [--endpoint EP] [--report-json F] [--report-html F] [--trace F]
//               [--gpu-hour-price USD] -- CMD [ARGS...]
//   gpuwise advisor --listen EP [--report-dir DIR] [--gpu-hour-price USD]
//   gpuwise report INPUT... [--json F] [--html F] [--gpu-hour-price USD]
//                                               INPUT: .gwt, or Kineto .json / .json.gz
//   (run, advisor and report also take --advice-floor RATIO, --verbose and --energy-price USD)
//   gpuwise export --format chrome INPUT... -o OUT.json
//   gpuwise diff BASE.json NEW.json [--json F] [--threshold R]
//   gpuwise webhook --tls-cert F --tls-key F [--listen ADDR] [--image IMG] ...
//
// `run` exits with CMD's own status (128 + signal when a signal killed it; 127 when CMD cannot be
// executed); `diff` exits 1 when the new report regressed. Everything else exits 0 on success and
// 2 on bad usage or bad input, with one line on stderr naming the problem.
// main.cpp is only `return runCli(argc, argv)`, so tests link all of it.
//
// Called on the main thread. `run` and `advisor` block until their job ends.
#pragma once

#include "profiler/model/printable_text.h"

#include <iostream>
#include <ostream>
#include <string>
#include <string_view>

namespace gpuwise::advisor {

struct CliIo {
  std::ostream& out = std::cout;
  std::ostream& err = std::cerr;
};

int runCli(int argc, const char* const* argv, CliIo io = {});

// Writes "gpuwise COMMAND: LINE\n" with one write and flushes it. std::cerr writes each << on its
// own, and `advisor` and `webhook` log from several threads (the metrics refresh, the webhook's
// HTTP threads) while scripts and the e2e tests watch stderr: a line built with << could be split
// by another thread's line, or read half-written ("listening on " without its endpoint).
// The line often quotes a file's bytes (a table name, a kernel name): control bytes and invalid
// UTF-8 are escaped (model::printableText), so a file cannot drive the terminal or split the line.
inline void logLine(std::ostream& os, std::string_view command, std::string_view line) {
  const std::string printable = model::printableText(line);
  std::string whole;
  whole.reserve(command.size() + printable.size() + 11);
  whole.append("gpuwise ").append(command).append(": ").append(printable).push_back('\n');
  os.write(whole.data(), std::streamsize(whole.size()));
  os.flush();
}

} // namespace gpuwise::advisor
