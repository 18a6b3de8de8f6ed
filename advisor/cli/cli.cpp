#include "advisor/cli/cli.h"

#include "advisor/cli/commands.h"
#include "advisor/cli/webhook_command.h"
#include "advisor/report/report_json.h"
#include "transport/codec.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <sstream>

namespace gpuwise::advisor {
namespace {

std::string oneLine(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  s = model::printableText(s);
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  return s;
}

// --gpu-hour-price on the commands that write reports: a positive number of dollars, which
// replaces the GPU model's row of the price table (advisor/cost/gpu_prices.h).
CLI::Option* addPriceOption(CLI::App* cmd, double& price) {
  return cmd
      ->add_option("--gpu-hour-price", price,
                   "Price of one GPU-hour in USD for the report's cost figures (default: an "
                   "on-demand list-price estimate for the GPU model)")
      ->check(CLI::PositiveNumber);
}

// --energy-price on the commands that write reports: USD per kWh for the report's energy cost
// (advisor/cost/energy_cost.h; default kDefaultEnergyPriceKwh).
void addEnergyPriceOption(CLI::App* cmd, std::optional<double>& price) {
  cmd->add_option_function<double>(
         "--energy-price", [&price](const double& v) { price = v; },
         "Price of one kWh of electricity in USD for the report's energy cost (default: 0.13, "
         "a U.S. commercial-sector average)")
      ->check(CLI::PositiveNumber);
}

// --advice-floor and --verbose on the commands that write reports.
void addAdviceOptions(CLI::App* cmd, AdviceCli& advice) {
  cmd->add_option("--advice-floor", advice.floor,
                  "Expected saving (share of step or GPU time) below which a finding is a note, "
                  "not a recommendation")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--max-gpu-slowdown", advice.gpu_type.max_slowdown,
                  "Predicted step time on a cheaper GPU class, over the measured one, that "
                  "right_size_gpu_type may recommend")
      ->check(CLI::Range(1.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--gpu-price", advice.gpu_prices,
                  "CLASS=USD: the price of one GPU-hour of a GPU class (\"L40S=1.9\"), for "
                  "right_size_gpu_type; repeatable");
  cmd->add_option("--gpu-prices", advice.gpu_prices_file,
                  "A file of GPU-hour prices, one \"CLASS USD\" or \"CLASS=USD\" a line ('#' "
                  "comments)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--verbose", advice.verbose,
                "Show each recommendation's evidence in the terminal summary");
}

// The GPU-type prices of the flags and the file, and --gpu-hour-price as the job's own GPU's.
// False with `error` naming the flag or the file's line.
bool resolveGpuTypeOptions(AdviceCli& advice, std::optional<double> gpu_hour_price,
                           std::string* error) {
  auto& prices = advice.gpu_type.prices;
  prices.current_gpu = gpu_hour_price;
  if (!advice.gpu_prices_file.empty()) {
    std::ifstream in(advice.gpu_prices_file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in || !parsePriceFile(text.str(), prices, error)) {
      *error = "--gpu-prices " + advice.gpu_prices_file + ": " +
               (error->empty() ? std::string("cannot read the file") : *error);
      return false;
    }
  }
  for (const auto& flag : advice.gpu_prices)
    if (!parsePriceOverride(flag, prices, error)) {
      *error = "--gpu-price: " + *error;
      return false;
    }
  return true;
}

// `gpuwise run`'s options, and those whose presence matters after parsing.
struct RunCli {
  RunOptions options;
  double price = 0;
  CLI::App* cmd = nullptr;
  CLI::Option *json = nullptr, *html = nullptr, *price_given = nullptr;
};

void addRunCommand(CLI::App& app, RunCli& run, bool with_options) {
  run.cmd = app.add_subcommand("run", "Profile a command: gpuwise run [options] -- CMD [ARGS...]");
  if (!with_options) return;
  RunOptions& o = run.options;
  run.cmd->add_flag("--simulate", o.simulate, "Run CMD against the simulated device");
  run.cmd->add_flag("--nvtx", o.nvtx,
                    "Route NVTX ranges to CUPTI (NVTX_INJECTION64_PATH=libcupti.so.13 unless set), "
                    "so NVTX step ranges are used; off by default: CUPTI 13.0's NVTX handler can "
                    "crash applications that name threads with NVTX");
  run.cmd->add_option(
      "--endpoint", o.endpoint,
      "Send to an advisor already listening at this endpoint (no in-process advisor)");
  run.json = run.cmd->add_option("--report-json", o.report_json, "JSON report path")
                 ->capture_default_str();
  run.html = run.cmd->add_option("--report-html", o.report_html, "HTML report path")
                 ->capture_default_str();
  run.cmd->add_option("--trace", o.trace, "Record the run into this .gwt file");
  run.price_given = addPriceOption(run.cmd, run.price);
  addEnergyPriceOption(run.cmd, o.energy_price);
  addAdviceOptions(run.cmd, o.advice);
  run.cmd->add_option("CMD", o.command, "The command to profile, after --")->required();
}

struct AdvisorCli {
  AdvisorOptions options;
  double price = 0;
  uint64_t budget = 0;
  CLI::App* cmd = nullptr;
  CLI::Option *price_given = nullptr, *budget_given = nullptr;
};

void addAdvisorCommand(CLI::App& app, AdvisorCli& advisor, bool with_options) {
  advisor.cmd = app.add_subcommand("advisor",
                                   "Serve an endpoint until SIGINT/SIGTERM, then write the report");
  if (!with_options) return;
  AdvisorOptions& o = advisor.options;
  advisor.cmd->add_option("--listen", o.listen, "Endpoint to bind (ipc://PATH, tcp://HOST:PORT)")
      ->required();
  advisor.cmd->add_option("--metrics-addr", o.metrics_addr,
                          "Serve Prometheus metrics at http://ADDR/metrics (:9464 all interfaces, "
                          "127.0.0.1:9464 loopback)");
  advisor.cmd->add_option("--report-dir", o.report_dir, "Directory for the reports")
      ->capture_default_str();
  advisor.price_given = addPriceOption(advisor.cmd, advisor.price);
  addEnergyPriceOption(advisor.cmd, o.energy_price);
  addAdviceOptions(advisor.cmd, o.advice);
  advisor.budget_given =
      advisor.cmd
          ->add_option("--memory-budget-mb", advisor.budget,
                       "Memory the ingest may hold in records, in MiB (default 1024, or "
                       "GPUWISE_MEMORY_BUDGET_MB); past it, detail is shed and counted")
          ->check(CLI::Range(uint64_t{16}, uint64_t{1} << 30));
}

struct ReportCli {
  ReportOptionsCli options;
  double price = 0;
  CLI::App* cmd = nullptr;
  CLI::Option* price_given = nullptr;
};

void addReportCommand(CLI::App& app, ReportCli& report, bool with_options) {
  report.cmd = app.add_subcommand(
      "report", "Report on recorded traces (.gwt, Kineto JSON, Nsight Systems SQLite)");
  if (!with_options) return;
  ReportOptionsCli& o = report.options;
  report.cmd
      ->add_option("INPUT", o.inputs,
                   "Recorded .gwt files, PyTorch profiler (Kineto) traces (.json, .json.gz) or "
                   "Nsight Systems SQLite exports, or folders of them; several are the ranks of "
                   "one job")
      ->required();
  report.cmd->add_option("--json", o.json, "JSON report path");
  report.cmd->add_option("--html", o.html, "HTML report path");
  report.price_given = addPriceOption(report.cmd, report.price);
  addEnergyPriceOption(report.cmd, o.energy_price);
  addAdviceOptions(report.cmd, o.advice);
}

CLI::App* addDiffCommand(CLI::App& app, DiffOptionsCli& diff, bool with_options) {
  auto* diff_cmd = app.add_subcommand(
      "diff", "Compare two JSON reports; exit 1 when step time or GPU busy regressed (CI gate)");
  if (!with_options) return diff_cmd;
  diff_cmd->add_option("BASE", diff.base, "The baseline gpuwise.report/v1 JSON")->required();
  diff_cmd->add_option("NEW", diff.next, "The report to judge against it")->required();
  diff_cmd->add_option("--json", diff.json, "Write the diff as JSON to this file");
  diff_cmd
      ->add_option("--threshold", diff.threshold,
                   "Least relative change that counts as a regression (0.05 = 5%); wider where "
                   "3 standard errors of the two steady medians' difference are")
      ->capture_default_str();
  return diff_cmd;
}

CLI::App* addExportCommand(CLI::App& app, ExportOptions& exp, bool with_options) {
  auto* export_cmd = app.add_subcommand("export", "Write recorded traces in another tool's format");
  if (!with_options) return export_cmd;
  export_cmd
      ->add_option("--format", exp.format, "Output format: chrome (chrome://tracing, Perfetto)")
      ->capture_default_str();
  export_cmd
      ->add_option("INPUT", exp.inputs,
                   "Recorded .gwt files, Kineto traces or Nsight Systems SQLite exports, or "
                   "folders of them")
      ->required();
  export_cmd->add_option("-o,--output", exp.output, "Output file (Chrome trace JSON)")->required();
  return export_cmd;
}

// Whether to declare `command`'s options: CLI11 builds each option (names split, validators,
// std::functions) at a cost of ~10 k instructions, and declaring all of them was a quarter of
// `gpuwise version`'s instructions (docs/performance.md). Every command is still declared, so the
// parse sees the same commands; only the one argv[1] names gets its options, or all of them when
// argv[1] names none (`gpuwise --help`, a typo: the help and the error then read as before).
bool declareOptionsOf(const char* command, int argc, const char* const* argv) {
  static constexpr const char* kCommands[] = {"version", "run",     "advisor", "report",
                                              "diff",    "webhook", "export"};
  if (argc <= 1) return true;
  const std::string_view named = argv[1];
  for (const char* known : kCommands)
    if (named == known) return named == command;
  return true;
}

// CLI11 would only say "A subcommand is required" for a misspelt command: name it. False when
// the first argument names no command (and that was said).
bool knownCommand(CLI::App& app, int argc, const char* const* argv, CliIo io) {
  if (argc <= 1 || argv[1][0] == '-') return true;
  std::string cmd = argv[1];
  bool known = false;
  for (const auto* sub : app.get_subcommands({}))
    known = known || sub->get_name() == cmd;
  if (!known)
    io.err << "gpuwise: unknown command '" << model::printableText(cmd)
           << "' (commands: run, advisor, report, export, diff, webhook, version)\n";
  return known;
}

} // namespace

int versionCommand(CliIo io) {
  io.out << "gpuwise " << gpuwiseVersion() << " (report " << kReportSchema << ", wire protocol "
         << transport::kProtocolVersion << ")\n";
  return 0;
}

int runCli(int argc, const char* const* argv, CliIo io) {
  CLI::App app{"gpuwise: finds where GPU training jobs waste their GPUs and says what to change"};
  app.name("gpuwise");
  app.require_subcommand(1, 1);

  auto* version = app.add_subcommand("version", "Print the version");
  auto wanted = [&](const char* command) { return declareOptionsOf(command, argc, argv); };
  RunCli run;
  addRunCommand(app, run, wanted("run"));
  AdvisorCli advisor;
  addAdvisorCommand(app, advisor, wanted("advisor"));
  ReportCli report;
  addReportCommand(app, report, wanted("report"));
  DiffOptionsCli diff;
  auto* diff_cmd = addDiffCommand(app, diff, wanted("diff"));
  WebhookOptions webhook;
  auto* webhook_cmd = addWebhookCommand(app, webhook, wanted("webhook"));
  ExportOptions exp;
  auto* export_cmd = addExportCommand(app, exp, wanted("export"));

  if (!knownCommand(app, argc, argv, io)) return kExitUsage;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    io.out << app.help(); // NOLINT: help of the subcommand when one was named
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string where = "gpuwise";
    for (const auto* sub : app.get_subcommands())
      where += " " + sub->get_name();
    // `gpuwise run python train.py --lr 1` fails on --lr: the fix is the "--" separator.
    // The help that lists the options of the command that failed: `gpuwise report --help`.
    const std::string hint =
        run.cmd->parsed() ? " (options first, then -- CMD [ARGS...]; see " + where + " --help)"
                          : " (see " + where + " --help)";
    io.err << where << ": " << oneLine(e.what()) << (e.get_exit_code() == 0 ? "" : hint) << '\n';
    return e.get_exit_code() == 0 ? 0 : kExitUsage;
  }

  if (version->parsed()) return versionCommand(io);
  std::string price_error;
  auto badPrices = [&](const char* command) {
    io.err << "gpuwise " << command << ": " << oneLine(price_error) << '\n';
    return kExitUsage;
  };
  if (run.cmd->parsed()) {
    run.options.report_paths_given = run.json->count() > 0 || run.html->count() > 0;
    if (run.price_given->count() > 0) run.options.gpu_hour_price = run.price;
    if (!resolveGpuTypeOptions(run.options.advice, run.options.gpu_hour_price, &price_error))
      return badPrices("run");
    return runCommand(run.options, io);
  }
  if (advisor.cmd->parsed()) {
    if (advisor.price_given->count() > 0) advisor.options.gpu_hour_price = advisor.price;
    if (advisor.budget_given->count() > 0) advisor.options.memory_budget_mb = advisor.budget;
    if (!resolveGpuTypeOptions(advisor.options.advice, advisor.options.gpu_hour_price,
                               &price_error))
      return badPrices("advisor");
    return advisorCommand(advisor.options, io);
  }
  if (report.cmd->parsed()) {
    if (report.price_given->count() > 0) report.options.gpu_hour_price = report.price;
    if (!resolveGpuTypeOptions(report.options.advice, report.options.gpu_hour_price, &price_error))
      return badPrices("report");
    return reportCommand(report.options, io);
  }
  if (export_cmd->parsed()) return exportCommand(exp, io);
  if (diff_cmd->parsed()) return diffCommand(diff, io);
  if (webhook_cmd->parsed()) return webhookCommand(webhook, io);
  io.err
      << "gpuwise: a command is required: run, advisor, report, export, diff, webhook or version\n";
  return kExitUsage;
}

} // namespace gpuwise::advisor
