# Advisor benchmarks: the analyzers on a large synthetic trace, and (with the transport) the
# ingest's routing and decoding of batches, alone and behind real PUSH/PULL sockets.
gpuwise_add_bench(advisor_analysis_bench SOURCES advisor_analysis_bench.cpp LIBS gpuwise_report)
if(TARGET gpuwise_ingest)
  gpuwise_add_bench(advisor_ingest_bench SOURCES advisor_ingest_bench.cpp LIBS gpuwise_ingest)
endif()
# gpuwise report's import + analysis on the whole shared Kineto folder against Python's json.load.
if(TARGET gpuwise_import)
  gpuwise_add_bench(advisor_kineto_folder_bench SOURCES advisor_kineto_folder_bench.cpp
    LIBS gpuwise_import gpuwise_report)
  target_compile_definitions(advisor_kineto_folder_bench PRIVATE
    GPUWISE_DEFAULT_TRACES_DIR="${PROJECT_SOURCE_DIR}/../shared/traces")
endif()
