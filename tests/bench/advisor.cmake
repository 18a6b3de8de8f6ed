# Advisor benchmarks: the analyzers on a large synthetic trace, and (with the transport) the
# ingest's routing and decoding of batches, alone and behind real PUSH/PULL sockets.
gpuwise_add_bench(advisor_analysis_bench SOURCES advisor_analysis_bench.cpp LIBS gpuwise_report)
gpuwise_add_bench(advisor_ingest_bench SOURCES advisor_ingest_bench.cpp LIBS gpuwise_ingest)
# gpuwise report's import + analysis on the whole shared Kineto folder against Python's json.load.
gpuwise_add_bench(advisor_kineto_folder_bench SOURCES advisor_kineto_folder_bench.cpp
  LIBS gpuwise_import gpuwise_report)
target_compile_definitions(advisor_kineto_folder_bench PRIVATE
  GPUWISE_DEFAULT_TRACES_DIR="${PROJECT_SOURCE_DIR}/../shared/traces")
# The advisor's and the shim's memory over a long live run (issue 7): the curve, printed.
if(TARGET long_run_app)
  gpuwise_add_bench(advisor_memory_bench SOURCES advisor_memory_bench.cpp LIBS)
  target_compile_definitions(advisor_memory_bench PRIVATE
    GPUWISE_BENCH_BUILD_DIR="${CMAKE_BINARY_DIR}")
  add_dependencies(advisor_memory_bench gpuwise_exe gpuwise simdevice long_run_app)
endif()
# A job's 1 / 8 / 64 rank traces analysed together (analyzeJob serial against one worker per core),
# and `gpuwise report` merging 1,024 per-rank reports.
find_package(ZLIB REQUIRED)
gpuwise_add_bench(advisor_rank_traces_bench SOURCES advisor_rank_traces_bench.cpp
  LIBS gpuwise_import gpuwise_report gpuwise_rules ZLIB::ZLIB nlohmann_json::nlohmann_json)
target_compile_definitions(advisor_rank_traces_bench PRIVATE
  GPUWISE_DEFAULT_TRACES_DIR="${PROJECT_SOURCE_DIR}/../shared/traces"
  GPUWISE_BENCH_BUILD_DIR="${CMAKE_BINARY_DIR}")
add_dependencies(advisor_rank_traces_bench gpuwise_exe)
# `gpuwise version` and `gpuwise report` on a tiny trace, exec to exit (issue 21: under 5 ms).
gpuwise_add_bench(cli_startup_bench SOURCES cli_startup_bench.cpp)
target_compile_definitions(cli_startup_bench PRIVATE
  GPUWISE_BENCH_BUILD_DIR="${CMAKE_BINARY_DIR}" GPUWISE_BENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(cli_startup_bench gpuwise_exe)
