# Kineto importer throughput against Python's json.load on the shared traces (make bench).
gpuwise_add_bench(import_kineto_bench SOURCES import_kineto_bench.cpp LIBS gpuwise_import)
target_compile_definitions(import_kineto_bench PRIVATE
  GPUWISE_DEFAULT_TRACES_DIR="${PROJECT_SOURCE_DIR}/../shared/traces")
