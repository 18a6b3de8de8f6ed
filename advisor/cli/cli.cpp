#include "advisor/cli/cli.h"

#include "advisor/cli/commands.h"
#include "advisor/cli/webhook_command.h"
#include "advisor/report/report_json.h"
#include "transport/codec.h"

#include <CLI/CLI.hpp>

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

// --advice-floor and --verbose on the commands that write reports.
void addAdviceOptions(CLI::App* cmd, AdviceCli& advice) {
  cmd->add_option("--advice-floor", advice.floor,
                  "Expected saving (share of step or GPU time) below which a finding is a note, "
                  "not a recommendation")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--verbose", advice.verbose,
                "Show each recommendation's evidence in the terminal summary");
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

  RunOptions run;
  auto* run_cmd =
      app.add_subcommand("run", "Profile a command: gpuwise run [options] -- CMD [ARGS...]");
  run_cmd->add_flag("--simulate", run.simulate, "Run CMD against the simulated device");
  run_cmd->add_flag("--nvtx", run.nvtx,
                    "Route NVTX ranges to CUPTI (NVTX_INJECTION64_PATH=libcupti.so.13 unless set), "
                    "so NVTX step ranges are used; off by default: CUPTI 13.0's NVTX handler can "
                    "crash applications that name threads with NVTX");
  run_cmd->add_option(
      "--endpoint", run.endpoint,
      "Send to an advisor already listening at this endpoint (no in-process advisor)");
  auto* json_opt = run_cmd->add_option("--report-json", run.report_json, "JSON report path")
                       ->capture_default_str();
  auto* html_opt = run_cmd->add_option("--report-html", run.report_html, "HTML report path")
                       ->capture_default_str();
  run_cmd->add_option("--trace", run.trace, "Record the run into this .gwt file");
  double run_price = 0;
  auto* run_price_opt = addPriceOption(run_cmd, run_price);
  addAdviceOptions(run_cmd, run.advice);
  run_cmd->add_option("CMD", run.command, "The command to profile, after --")->required();

  AdvisorOptions advisor;
  auto* advisor_cmd = app.add_subcommand(
      "advisor", "Serve an endpoint until SIGINT/SIGTERM, then write the report");
  advisor_cmd
      ->add_option("--listen", advisor.listen, "Endpoint to bind (ipc://PATH, tcp://HOST:PORT)")
      ->required();
  advisor_cmd->add_option("--metrics-addr", advisor.metrics_addr,
                          "Serve Prometheus metrics at http://ADDR/metrics (:9464 all interfaces, "
                          "127.0.0.1:9464 loopback)");
  advisor_cmd->add_option("--report-dir", advisor.report_dir, "Directory for the reports")
      ->capture_default_str();
  double advisor_price = 0;
  auto* advisor_price_opt = addPriceOption(advisor_cmd, advisor_price);
  addAdviceOptions(advisor_cmd, advisor.advice);
  uint64_t advisor_budget = 0;
  auto* advisor_budget_opt =
      advisor_cmd
          ->add_option("--memory-budget-mb", advisor_budget,
                       "Memory the ingest may hold in records, in MiB (default 1024, or "
                       "GPUWISE_MEMORY_BUDGET_MB); past it, detail is shed and counted")
          ->check(CLI::Range(uint64_t{16}, uint64_t{1} << 30));

  ReportOptionsCli report;
  auto* report_cmd = app.add_subcommand(
      "report", "Report on recorded traces (.gwt, Kineto JSON, Nsight Systems SQLite)");
  report_cmd
      ->add_option("INPUT", report.inputs,
                   "Recorded .gwt files, PyTorch profiler (Kineto) traces (.json, .json.gz) or "
                   "Nsight Systems SQLite exports")
      ->required();
  report_cmd->add_option("--json", report.json, "JSON report path");
  report_cmd->add_option("--html", report.html, "HTML report path");
  double report_price = 0;
  auto* report_price_opt = addPriceOption(report_cmd, report_price);
  addAdviceOptions(report_cmd, report.advice);

  DiffOptionsCli diff;
  auto* diff_cmd = app.add_subcommand(
      "diff", "Compare two JSON reports; exit 1 when step time or GPU busy regressed (CI gate)");
  diff_cmd->add_option("BASE", diff.base, "The baseline gpuwise.report/v1 JSON")->required();
  diff_cmd->add_option("NEW", diff.next, "The report to judge against it")->required();
  diff_cmd->add_option("--json", diff.json, "Write the diff as JSON to this file");
  diff_cmd
      ->add_option("--threshold", diff.threshold,
                   "Least relative change that counts as a regression (0.05 = 5%); wider where "
                   "3 standard errors of the two steady medians' difference are")
      ->capture_default_str();

  WebhookOptions webhook;
  auto* webhook_cmd = addWebhookCommand(app, webhook);

  ExportOptions exp;
  auto* export_cmd =
      app.add_subcommand("export", "Write recorded traces in another tool's format");
  export_cmd->add_option("--format", exp.format, "Output format: chrome (chrome://tracing, Perfetto)")
      ->capture_default_str();
  export_cmd
      ->add_option("INPUT", exp.inputs,
                   "Recorded .gwt files, Kineto traces or Nsight Systems SQLite exports")
      ->required();
  export_cmd->add_option("-o,--output", exp.output, "Output file (Chrome trace JSON)")->required();

  // CLI11 would only say "A subcommand is required" for a misspelt command: name it.
  if (argc > 1 && argv[1][0] != '-') {
    std::string cmd = argv[1];
    bool known = false;
    for (const auto* sub : app.get_subcommands({}))
      known = known || sub->get_name() == cmd;
    if (!known) {
      io.err << "gpuwise: unknown command '" << model::printableText(cmd)
             << "' (commands: run, advisor, report, export, diff, webhook, version)\n";
      return kExitUsage;
    }
  }
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
    const char* hint =
        run_cmd->parsed() ? " (options first, then -- CMD [ARGS...])" : " (see gpuwise --help)";
    io.err << where << ": " << oneLine(e.what()) << (e.get_exit_code() == 0 ? "" : hint) << '\n';
    return e.get_exit_code() == 0 ? 0 : kExitUsage;
  }

  if (version->parsed()) return versionCommand(io);
  if (run_cmd->parsed()) {
    run.report_paths_given = json_opt->count() > 0 || html_opt->count() > 0;
    if (run_price_opt->count() > 0) run.gpu_hour_price = run_price;
    return runCommand(run, io);
  }
  if (advisor_cmd->parsed()) {
    if (advisor_price_opt->count() > 0) advisor.gpu_hour_price = advisor_price;
    if (advisor_budget_opt->count() > 0) advisor.memory_budget_mb = advisor_budget;
    return advisorCommand(advisor, io);
  }
  if (report_cmd->parsed()) {
    if (report_price_opt->count() > 0) report.gpu_hour_price = report_price;
    return reportCommand(report, io);
  }
  if (export_cmd->parsed()) return exportCommand(exp, io);
  if (diff_cmd->parsed()) return diffCommand(diff, io);
  if (webhook_cmd->parsed()) return webhookCommand(webhook, io);
  io.err << "gpuwise: a command is required: run, advisor, report, export, diff, webhook or version\n";
  return kExitUsage;
}

} // namespace gpuwise::advisor
