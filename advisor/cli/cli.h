// The gpuwise command line (DESIGN.md's CLI contract):
//
//   gpuwise version
//   gpuwise run [--simulate] [--endpoint EP] [--report-json F] [--report-html F] [--trace F]
//               [--gpu-hour-price USD] -- CMD [ARGS...]
//   gpuwise advisor --listen EP [--report-dir DIR] [--gpu-hour-price USD]
//   gpuwise report INPUT... [--json F] [--html F] [--gpu-hour-price USD]
//   gpuwise diff BASE.json NEW.json [--json F] [--threshold R]
//
// `run` exits with CMD's own status (128 + signal when a signal killed it; 127 when CMD cannot be
// executed); `diff` exits 1 when the new report regressed. Everything else exits 0 on success and
// 2 on bad usage or bad input, with one line on stderr naming the problem.
// main.cpp is only `return runCli(argc, argv)`, so tests link all of it.
//
// Called on the main thread. `run` and `advisor` block until their job ends.
#pragma once

#include <iostream>
#include <ostream>

namespace gpuwise::advisor {

struct CliIo {
  std::ostream& out = std::cout;
  std::ostream& err = std::cerr;
};

int runCli(int argc, const char* const* argv, CliIo io = {});

} // namespace gpuwise::advisor
