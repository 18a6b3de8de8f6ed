# Tests of the HTML report, its charts and series, the cost of waste and `gpuwise diff`
# (included from tests/advisor/CMakeLists.txt).
gpuwise_add_test(advisor_html_chart_test SOURCES html_chart_test.cpp LIBS gpuwise_report)
gpuwise_add_test(advisor_html_series_test SOURCES html_series_test.cpp LIBS gpuwise_report)
gpuwise_add_test(advisor_html_report_test SOURCES html_report_test.cpp LIBS gpuwise_report)
gpuwise_add_test(advisor_cost_test SOURCES cost_test.cpp LIBS gpuwise_cli gpuwise_report)
gpuwise_add_test(advisor_energy_test SOURCES energy_test.cpp
  LIBS gpuwise_cli gpuwise_import gpuwise_report nlohmann_json::nlohmann_json LABELS unit traces)
gpuwise_add_test(advisor_diff_test SOURCES diff_test.cpp LIBS gpuwise_cli gpuwise_diff)
