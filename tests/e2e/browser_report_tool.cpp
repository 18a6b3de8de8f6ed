// browser_report_tool TRACE... --html OUT [--json OUT]: the report of Kineto traces through the
// library (importer, analyzers, rules, report sinks), for the browser test on builds whose
// `gpuwise report` does not read Kineto traces yet. Once it does, the test uses the CLI and this
// tool stays as the reference for what the CLI should produce.
#include "advisor/import/kineto_importer.h"
#include "advisor/report/report_writer.h"
#include "advisor/rules/rule_set.h"

#include <iostream>
#include <string>
#include <vector>

using namespace gpuwise::advisor;

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string html, json;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--html" || a == "--json") && i + 1 < argc) {
      (a == "--html" ? html : json) = argv[++i];
    } else {
      inputs.push_back(a);
    }
  }
  if (inputs.empty() || html.empty()) {
    std::cerr << "usage: browser_report_tool TRACE... --html OUT [--json OUT]\n";
    return 2;
  }
  auto imported = importKineto(inputs);
  if (!imported.ok()) {
    std::cerr << imported.error << '\n';
    return 2;
  }
  auto analysis = analyzeJob(imported.trace);
  auto recommendations = recommend(analysis, &imported.trace);
  ReportInput input{analysis, recommendations};
  std::string error;
  if (!writeHtmlReport(html, input, &error) ||
      (!json.empty() && !writeJsonReport(json, input, &error))) {
    std::cerr << error << '\n';
    return 2;
  }
  return 0;
}
