// The live path's input bounds: a forged batch whose copy ends at INT64_MAX once made every later
// analysis of its stream loop forever (/metrics answered nothing, no report was written). The
// record is dropped and counted as the batch arrives, and the stream stays analysable: /metrics's
// per-stream aggregates, the whole-run analysis and the final trace.
#include "advisor/analysis/job_analysis.h"
#include "advisor/ingest/stream_router.h"
#include "transport/codec.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>

using namespace gpuwise;
using namespace gpuwise::advisor;

namespace {

constexpr model::TimeNs kMs = 1'000'000;
constexpr model::TimeNs kMax = std::numeric_limits<model::TimeNs>::max();

// A hang fails the run within 60 s instead of holding it until CTest's timeout.
template <typename Fn> auto withinDeadline(Fn fn) {
  auto result = std::async(std::launch::async, fn);
  if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "ingest_bounds_test: the analysis did not terminate within 60 s\n");
    std::_Exit(1);
  }
  return result.get();
}

struct Sender {
  model::NameTable names;
  transport::BatchEncoder encoder{names, 99, 321};

  std::vector<uint8_t> hello() {
    transport::Hello h;
    h.session_id = 99;
    h.process.pid = 321;
    h.process.tier = model::CollectionTier::Cupti;
    h.devices.push_back(model::DeviceInfo{.name = "NVIDIA H100 80GB HBM3"});
    h.start_time = 5;
    return transport::encodeHello(h);
  }
  std::vector<uint8_t> kernels(model::TimeNs t0, int n) {
    const auto id = names.intern("gemm");
    for (int i = 0; i < n; ++i)
      encoder.add(model::KernelExec{
          .start = t0 + i * 10 * kMs, .end = t0 + i * 10 * kMs + 5 * kMs, .name = id, .stream = 7});
    return seal(t0 + n * 10 * kMs);
  }
  std::vector<uint8_t> absurdCopy(model::TimeNs start) {
    encoder.add(model::Copy{.start = start,
                            .end = kMax,
                            .bytes = 64,
                            .stream = 7,
                            .direction = model::CopyDirection::HostToDevice});
    return seal(start);
  }
  std::vector<uint8_t> seal(model::TimeNs sent, bool final = false) {
    auto m = encoder.encode(0, final, sent);
    encoder.confirm(true);
    return m;
  }
};

} // namespace

TEST_CASE("a batch with a copy ending at INT64_MAX is dropped and counted; the stream analyses") {
  for (size_t window_events : {size_t{0}, kDefaultWindowEvents, size_t{64}}) {
    INFO("window_events " << window_events);
    StreamRouter router([](std::string_view) {}, StreamRouter::kMaxStreams, window_events);
    Sender s;
    router.route(s.hello());
    router.route(s.kernels(1000 * kMs, 100));
    router.route(s.absurdCopy(2100 * kMs));
    router.route(s.kernels(2200 * kMs, 100));

    IngestHealth health;
    const auto streams = withinDeadline([&] { return router.streamAnalyses(&health); }); // /metrics
    REQUIRE(streams.size() == 1);
    CHECK(streams[0].analysis.collection.events_dropped == 1);
    CHECK(streams[0].analysis.collection.limits.absurd_times == 1);
    CHECK(streams[0].analysis.kernels.count == 200);

    const auto whole = withinDeadline([&] { return router.analysis(); });
    CHECK(whole.kernels.count == 200);
    CHECK(whole.collection.events_dropped == 1);

    auto trace = router.take(nullptr);
    REQUIRE(trace.processes.size() == 1);
    const auto report = withinDeadline([&] { return analyzeJob(trace); }); // the final report
    CHECK(report.collection.events_dropped == 1);
    CHECK(report.kernels.count == (window_events == 0 ? 200 : report.kernels.count));
  }
}
