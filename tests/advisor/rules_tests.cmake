# Every recommendation rule: on hand-built analyses (fires, quiet, edge, the numbers of its text in
# its evidence) and on the real Kineto traces of the shared folder.
gpuwise_add_test(advisor_rules_each_test SOURCES rules_each_test.cpp LIBS gpuwise_rules LABELS unit)
gpuwise_add_test(advisor_rules_real_traces_test SOURCES rules_real_traces_test.cpp
  LIBS gpuwise_import gpuwise_rules gpuwise_report LABELS unit traces SKIP_TAGS full_traces)
# The GPU class table, the step-time model across classes (planted terms) and right_size_gpu_type.
gpuwise_add_test(advisor_gpu_type_test SOURCES gpu_type_test.cpp LIBS gpuwise_report LABELS unit)
# The step-time model on the ResNet-50 / V100 trace: the Python reference and the published
# V100 vs A100 (DLE, Lambda) and V100 vs H100 PCIe / SXM (Lambda) throughput (README.md states
# the errors).
gpuwise_add_test(advisor_step_time_real_traces_test SOURCES step_time_real_traces_test.cpp
  LIBS gpuwise_import gpuwise_gpu nlohmann_json::nlohmann_json LABELS unit traces)
