// The SVG charts: well-formed XML, geometry that matches the values, text alternatives that state
// the numbers, and escaped labels.
#include "advisor/report/svg_chart.h"
#include "tests/advisor/html_xml_check.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
    ++n;
  return n;
}

} // namespace

TEST_CASE("line chart: steps at the values, NaN breaks the line, text alternative") {
  LineChartSpec spec;
  spec.id = "util-0";
  spec.title = "Busy <GPU 0> & more";
  spec.description = "Busy share.";
  spec.x_end = 1.0;
  spec.y_max = 1.0;
  spec.series.push_back({"busy", "#2f66c8", {0.0, 0.5, 1.0, kNaN, 0.3}, true, false});
  auto svg = renderLineChart(spec);
  INFO(svg);
  CHECK(xmlProblem(svg) == "");

  // Plot area: x 64..944 (880 px), y 26..186 (160 px); five buckets of 176 px.
  CHECK(svg.find("d=\"M64.0 186.0H240.0V106.0H416.0V26.0H592.0M768.0 138.0H944.0\"") !=
        std::string::npos);
  // The shaded area closes each run of known values on the axis.
  CHECK(svg.find("d=\"M64.0 186.0V186.0H240.0V106.0H416.0V26.0H592.0V186.0H64.0Z"
                 "M768.0 186.0V138.0H944.0V186.0H768.0Z\"") != std::string::npos);
  // Axis ticks: 0..100% by 25%, time 0..1 s by 0.2 s.
  for (const char* tick :
       {">0%<", ">25%<", ">50%<", ">75%<", ">100%<", ">0.0 s<", ">0.4 s<", ">1.0 s<"})
    CHECK(svg.find(tick) != std::string::npos);

  // Accessible: an image with a title and a description that states the numbers.
  CHECK(svg.find("role=\"img\"") != std::string::npos);
  CHECK(svg.find("aria-labelledby=\"util-0-title util-0-desc\"") != std::string::npos);
  CHECK(svg.find("<title id=\"util-0-title\">Busy &lt;GPU 0&gt; &amp; more</title>") !=
        std::string::npos);
  CHECK(svg.find("busy: mean 45.0%, min 0.0%, max 100.0%.") != std::string::npos);
}

TEST_CASE("line chart: bytes axis from the data, reference marks, dashed series") {
  LineChartSpec spec;
  spec.id = "mem-0";
  spec.title = "Memory";
  spec.x_end = 0.002;
  spec.y_format = AxisFormat::Bytes;
  spec.series.push_back({"reserved", "#2f66c8", {1e9, 3e9, 2e9}, false, true});
  spec.marks.push_back({4e9, "capacity 4.00 GB"});
  auto svg = renderLineChart(spec);
  INFO(svg);
  CHECK(xmlProblem(svg) == "");
  // y max is the mark (4 GB): 1 GB sits a quarter up the 160 px plot, at y = 186 - 40.
  CHECK(svg.find("d=\"M64.0 146.0H357.3V66.0H650.7V106.0H944.0\"") != std::string::npos);
  CHECK(svg.find("stroke-dasharray=\"5 3\"") != std::string::npos);
  CHECK(svg.find(">capacity 4.00 GB<") != std::string::npos);
  CHECK(svg.find(">4.00 GB<") != std::string::npos);
  // A 2 ms axis is labelled in milliseconds.
  CHECK(svg.find(">2.0 ms<") != std::string::npos);
  CHECK(svg.find("reserved: mean 2.00 GB, min 1.00 GB, max 3.00 GB.") != std::string::npos);
}

TEST_CASE("stacked bar: widths proportional, zero segments left out, legend with shares") {
  StackedBarSpec spec;
  spec.id = "idle-bar";
  spec.title = "Idle by cause";
  spec.description = "Idle time.";
  spec.segments = {{"input", 3.0, "3.00 s", "#7d57c1"},
                   {"host <bound>", 1.0, "1.00 s", "#e07b24"},
                   {"sync", 0.0, "0 s", "#c8413b"}};
  auto svg = renderStackedBar(spec);
  INFO(svg);
  CHECK(xmlProblem(svg) == "");
  // 952 px of bar: 714 for input, 238 for host-bound, starting where input ends.
  CHECK(svg.find("x=\"4.0\" y=\"4.0\" width=\"714.0\"") != std::string::npos);
  CHECK(svg.find("x=\"718.0\" y=\"4.0\" width=\"238.0\"") != std::string::npos);
  CHECK(svg.find("sync") == std::string::npos);
  CHECK(svg.find(">input 75.0%<") != std::string::npos);
  CHECK(svg.find("host &lt;bound&gt;: 1.00 s (25.0%)") != std::string::npos);
  CHECK(svg.find("host <bound>") == std::string::npos);
  CHECK(svg.find("input: 3.00 s (75.0%).") != std::string::npos); // in the description

  StackedBarSpec empty;
  empty.id = "empty";
  empty.title = "Nothing";
  auto none = renderStackedBar(empty);
  CHECK(xmlProblem(none) == "");
  CHECK(none.find("Nothing to show.") != std::string::npos);
}

TEST_CASE("bar chart: longest bar for the largest value, long labels cut, full label kept") {
  BarChartSpec spec;
  spec.id = "kernels";
  spec.title = "Top kernels";
  std::string long_name(200, 'k');
  spec.bars = {{"gemm<float, 4>", "void gemm<float, 4>(float const*)", 10.0, "10.0 s", "#2f66c8"},
               {long_name, "", 5.0, "5.00 s", "#2f66c8"}};
  auto svg = renderBarChart(spec);
  INFO(svg);
  CHECK(xmlProblem(svg) == "");
  // 960 - 330 (labels) - 150 (values) - 12 = 468 px for the largest bar; half for the other.
  CHECK(svg.find("x=\"330.0\" y=\"4.0\" width=\"468.0\"") != std::string::npos);
  CHECK(svg.find("x=\"330.0\" y=\"28.0\" width=\"234.0\"") != std::string::npos);
  CHECK(svg.find("<title>void gemm&lt;float, 4&gt;(float const*): 10.0 s</title>") !=
        std::string::npos);
  CHECK(svg.find(">gemm&lt;float, 4&gt;<") != std::string::npos);
  // The long label is cut with an ellipsis in the chart, whole in its tooltip.
  CHECK(svg.find(std::string(40, 'k') + "\xE2\x80\xA6<") != std::string::npos);
  CHECK(svg.find("<title>" + long_name + ": 5.00 s</title>") != std::string::npos);
  CHECK(count(svg, "<g>") == 2);

  BarChartSpec empty;
  empty.id = "none";
  CHECK(xmlProblem(renderBarChart(empty)) == "");
}

TEST_CASE("chart values read as people read them") {
  CHECK(formatAxisValue(0.4567, AxisFormat::Percent) == "45.7%");
  CHECK(formatAxisValue(1.5e9, AxisFormat::Bytes) == "1.50 GB");
  CHECK(formatAxisValue(-3, AxisFormat::Bytes) == "0 B");
  CHECK(formatAxisValue(1234.6, AxisFormat::Number) == "1235");
}

TEST_CASE("the XML checker rejects what a parser rejects") {
  CHECK(xmlProblem("<a><b/></a>") == "");
  CHECK(xmlProblem("<a x=\"1\">t &amp; &#39; &#x2026;</a>") == "");
  CHECK(xmlProblem("<a><b></a></b>") != "");
  CHECK(xmlProblem("<a>x & y</a>") != "");
  CHECK(xmlProblem("<a x=1></a>") != "");
  CHECK(xmlProblem("<a x=\"<\"></a>") != "");
  CHECK(xmlProblem("<a x=\"1\" x=\"2\"></a>") != "");
  CHECK(xmlProblem("<a></a><b></b>") != "");
  CHECK(xmlProblem("<a>") != "");
  CHECK(xmlProblem("<a>&nbsp;</a>") != "");
}
