// The HTML report's "GPU classes" section (html_sections.h): every class of the GPU class table
// with the job's predicted step, its price per step and why it does or does not qualify for
// right_size_gpu_type, from the report JSON's gpu_types section.
#include "advisor/report/format.h"
#include "advisor/report/html_report.h"
#include "advisor/report/html_sections.h"

namespace gpuwise::advisor {
namespace {

using json = ReportJson;

std::string numberCell(const json& j, std::string_view key, const std::string& text) {
  auto v = jsonNumber(j, {key});
  return std::string("<td class=\"num\">") + (v ? htmlEscape(text) : "not known") + "</td>";
}

std::string verdict(const json& c, const std::string& chosen) {
  const std::string gpu = jsonString(c, {"gpu"});
  if (jsonAt(c, {"current"}) && jsonAt(c, {"current"})->is_boolean() &&
      jsonAt(c, {"current"})->get<bool>())
    return "the job's GPU";
  if (gpu == chosen) return "recommended";
  std::string reason = jsonString(c, {"reason"});
  return reason.empty() ? "qualifies, not cheaper per step" : reason;
}

} // namespace

void htmlGpuTypesSection(std::ostream& o, const ReportJson& r) {
  const json* classes = jsonAt(r, {"gpu_types", "classes"});
  o << "<section aria-labelledby=\"gpu-types-h\">\n<h2 id=\"gpu-types-h\">GPU classes</h2>\n";
  if (!classes || !classes->is_array() || classes->empty()) {
    std::string why = jsonString(r, {"gpu_types", "skipped"});
    o << "<p class=\"muted\">Not compared" << (why.empty() ? "" : ": " + htmlEscape(why))
      << ".</p>\n</section>\n";
    return;
  }
  const std::string chosen = jsonString(r, {"gpu_types", "chosen"});
  const bool per_step = jsonString(r, {"gpu_types", "step_basis"}) != "gpu_span";
  auto slowdown = jsonNumber(r, {"gpu_types", "max_slowdown"});
  o << "<p>The job's " << (per_step ? "steady step" : "GPU span")
    << " predicted on each class from its kernels' precision, memory traffic and SM fill "
       "(datasheet figures), with the price per "
    << (per_step ? "step" : "run") << " for the job's GPUs. A cheaper class qualifies when its "
    << "memory holds the peak with headroom and the predicted slowdown stays within "
    << (slowdown ? formatSignificant(*slowdown) + "x" : std::string("the accepted slowdown"))
    << (jsonAt(r, {"gpu_types", "multi_rank"}) &&
                jsonAt(r, {"gpu_types", "multi_rank"})->is_boolean() &&
                jsonAt(r, {"gpu_types", "multi_rank"})->get<bool>()
            ? "; the job has several ranks, so a class without the NVLink its GPU has does not"
            : "")
    << ".</p>\n<div class=\"scroll\"><table class=\"gpu-types\">\n<caption>GPU classes for this "
       "job</caption>\n<thead><tr><th scope=\"col\">class</th><th scope=\"col\">memory</th><th "
       "scope=\"col\">HBM</th><th scope=\"col\">BF16 tensor</th><th scope=\"col\">FP32</th><th "
       "scope=\"col\">price / h</th><th scope=\"col\">predicted</th><th "
       "scope=\"col\">slowdown</th><th scope=\"col\">cost / "
    << (per_step ? "step" : "run") << "</th><th scope=\"col\">verdict</th></tr></thead>\n<tbody>\n";
  for (const json& c : *classes) {
    auto num = [&](std::string_view key) { return jsonNumber(c, {key}).value_or(0); };
    o << "<tr><td>" << htmlEscape(jsonString(c, {"gpu"})) << "</td>"
      << numberCell(c, "memory_gb", formatSignificant(num("memory_gb")) + " GB")
      << numberCell(c, "hbm_gb_per_s", formatSignificant(num("hbm_gb_per_s")) + " GB/s")
      << numberCell(c, "bf16_tensor_tflops", formatSignificant(num("bf16_tensor_tflops")) + " TF")
      << numberCell(c, "fp32_tflops", formatSignificant(num("fp32_tflops")) + " TF")
      << numberCell(c, "usd_per_hour", formatMoney(num("usd_per_hour")))
      << numberCell(c, "predicted_step_seconds", formatSeconds(num("predicted_step_seconds")))
      << numberCell(c, "predicted_slowdown", formatSignificant(num("predicted_slowdown")) + "x")
      << numberCell(c, "cost_per_step", "$" + formatSignificant(num("cost_per_step"))) << "<td>"
      << htmlEscape(verdict(c, chosen)) << "</td></tr>\n";
  }
  o << "</tbody></table></div>\n</section>\n";
}

} // namespace gpuwise::advisor
