# Advisor benchmarks: the analyzers on a large synthetic trace, and (with the transport) the
# ingest's routing and decoding of batches.
gpuwise_add_bench(advisor_analysis_bench SOURCES advisor_analysis_bench.cpp LIBS gpuwise_report)
if(TARGET gpuwise_ingest_core)
  gpuwise_add_bench(advisor_ingest_bench SOURCES advisor_ingest_bench.cpp LIBS gpuwise_ingest_core)
endif()
