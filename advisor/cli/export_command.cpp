// gpuwise export --format chrome INPUT... -o OUT.json: the event model of recorded traces as a
// Chrome trace (chrome://tracing, Perfetto), through advisor/export. Inputs as for `report`
// (trace_input.h); several are written into one file, a process group each.
#include "advisor/cli/commands.h"
#include "advisor/cli/trace_input.h"
#include "advisor/export/chrome_trace.h"
#include "advisor/report/output_file.h"

namespace gpuwise::advisor {

int exportCommand(const ExportOptions& o, CliIo io) {
  auto fail = [&](const std::string& line) {
    logLine(io.err, "export", line);
    return kExitUsage;
  };
  if (o.format != "chrome") return fail("unknown --format '" + o.format + "' (formats: chrome)");
  if (o.inputs.empty()) return fail("at least one INPUT is required");
  if (o.output.empty()) return fail("-o OUT.json is required");

  LoadedInputs loaded;
  std::string error;
  // The CPU operators too: a viewer shows them, though no analyzer needs them.
  if (!loadTraceInputs(o.inputs, "gpuwise export", &io.err, &loaded, &error,
                       {.include_operators = true}))
    return fail(error);
  // Through OutputFile, like the reports: a regular file replaced atomically, a FIFO or a device
  // written through, never replaced.
  auto out = OutputFile::open(o.output, &error);
  if (!out) return fail(error);
  std::string why;
  ChromeTraceStats stats;
  const bool streamed = writeChromeTrace(loaded.trace, out->stream(), &why, {}, &stats);
  if (!out->commit(&error)) return fail(error); // a write error: the stream's own words are vaguer
  if (!streamed) return fail(o.output + ": " + why);
  io.out << "gpuwise export: wrote " << o.output << " (" << loaded.trace.processes.size()
         << (loaded.trace.processes.size() == 1 ? " process, " : " processes, ") << stats.events
         << " events: " << stats.api_spans << " API calls, " << stats.flows << " flows)\n";
  return 0;
}

} // namespace gpuwise::advisor
