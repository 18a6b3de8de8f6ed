# Advisor benchmarks: the analyzers on a large synthetic trace, and (with the transport) the
# ingest's routing and decoding of batches, alone and behind real PUSH/PULL sockets.
gpuwise_add_bench(advisor_analysis_bench SOURCES advisor_analysis_bench.cpp LIBS gpuwise_report)
if(TARGET gpuwise_ingest)
  gpuwise_add_bench(advisor_ingest_bench SOURCES advisor_ingest_bench.cpp LIBS gpuwise_ingest)
endif()
