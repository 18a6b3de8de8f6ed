# Codec throughput and wire size on a steady training loop (tests/transport/steady_loop.h).
gpuwise_add_bench(transport_codec_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/transport_codec_bench.cpp
  LIBS gpuwise_transport PkgConfig::ZSTD)
