// /metrics from aggregates (issue 7): the live advisor keeps windowing with --metrics-addr on, and
// the exposition is built from each stream's windows. Checked here: the recent 1 s busy series of
// the utilisation analyzer merges across windows into the whole-trace one; a multi-window,
// multi-GPU stream gives the same exposition as the whole trace analysed at once (within the
// tolerances the headers state); and an ingest scraped while two million events flow keeps its
// memory bounded and its counts exact.
#include "advisor/analysis/interval_union.h"
#include "advisor/analysis/utilization_analyzer.h"
#include "advisor/ingest/ingest_server.h"
#include "advisor/ingest/stream_router.h"
#include "advisor/metrics/exposition_builder.h"
#include "advisor/metrics/metrics_input.h"
#include "advisor/metrics/metrics_server.h"
#include "tests/advisor/metrics_parse.h"
#include "tests/advisor/rss_probe.h"
#include "tests/advisor/trace_builder.h"
#include "tests/advisor/wire_client.h"
#include "tests/sanitizer_env.h"

#include <catch2/catch.hpp>
#include <httplib.h>

#include <atomic>
#include <cmath>
#include <thread>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kGemm = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn";
constexpr const char* kFp32 = "void elementwise_kernel<float>(float*, float const*, int)";
constexpr model::TimeNs kT0 = 1000 * kSec;

// Exact busy time of `device` in [from, to): the union of its GPU intervals.
model::TimeNs exactBusy(const model::ProcessTrace& p, uint32_t device, model::TimeNs from,
                        model::TimeNs to) {
  std::vector<Interval> busy;
  auto add = [&](model::TimeNs s, model::TimeNs e, uint32_t d) {
    if (d != device || e <= from || s >= to) return;
    busy.push_back({std::max(s, from), std::min(e, to)});
  };
  for (const auto& k : p.kernels)
    add(k.start, k.end, k.device);
  for (const auto& c : p.copies)
    add(c.start, c.end, c.device);
  return unionLength(std::move(busy));
}

// A process on two GPUs for 150 s, the second one joining at 40 s (so a windowed stream sees one
// device first): kernels on both, copies overlapping GPU 0's kernels, reserved-memory samples on
// GPU 0, allocations and frees on GPU 1. Records in time order, as batches bring them.
struct Workload {
  std::vector<model::KernelExec> kernels;
  std::vector<model::Copy> copies;
  std::vector<model::MemorySample> samples;
  std::vector<model::Allocation> allocations;
  std::vector<model::Range> steps; // a ProfilerStep range every second
  model::TimeNs end = 0;

  Workload(model::NameId gemm, model::NameId fp32, model::NameId step = 0) {
    for (model::TimeNs t = kT0; t < kT0 + 150 * kSec; t += 20 * kMs) {
      auto k = kernel(t, t + 5 * kMs + (t / kMs % 7) * kMs, 7, 0, (t / kMs) % 3 ? gemm : fp32);
      kernels.push_back(k);
      if ((t - kT0) % (100 * kMs) == 0)
        copies.push_back(copy(t + 2 * kMs, t + 14 * kMs, 4 << 20,
                              model::CopyDirection::HostToDevice, model::MemoryKind::Pinned, true,
                              9, 0));
      if (t >= kT0 + 40 * kSec && (t - kT0) % (60 * kMs) == 0) {
        kernels.push_back(kernel(t + 1 * kMs, t + 21 * kMs, 3, 1, gemm));
        copies.push_back(copy(t + 22 * kMs, t + 25 * kMs, 1 << 20,
                              model::CopyDirection::DeviceToHost, model::MemoryKind::Pageable,
                              false, 3, 1));
      }
      if ((t - kT0) % kSec == 0) {
        model::Range r;
        r.start = t;
        r.end = t + kSec;
        r.name = step;
        r.thread = 1;
        r.kind = model::RangeKind::Step;
        r.step = int64_t(steps.size());
        steps.push_back(r);
        model::MemorySample m;
        m.time = t;
        m.device = 0;
        m.reserved_bytes = int64_t(1 << 30) + (t - kT0) / kSec * (1 << 20);
        m.allocated_bytes = 1 << 29;
        samples.push_back(m);
        if (t >= kT0 + 40 * kSec) {
          model::Allocation a;
          a.time = t + 3 * kMs;
          a.address = 0x1000 + uint64_t(t / kSec);
          a.bytes = 8 << 20;
          a.device = 1;
          a.kind = model::MemoryKind::Device;
          allocations.push_back(a);
          if ((t - kT0) / kSec % 3 == 0) { // one in three is freed a little later
            a.time += 500 * kMs;
            a.is_free = true;
            allocations.push_back(a);
          }
        }
      }
      end = t + 30 * kMs;
    }
  }
};

model::ProcessTrace workloadProcess() {
  model::ProcessTrace p = process(77);
  p.info.rank = 0;
  model::DeviceInfo d1 = p.devices[0];
  d1.index = 1;
  p.devices.push_back(d1);
  Workload w(p.names.intern(kGemm), p.names.intern(kFp32), p.names.intern("ProfilerStep#"));
  p.ranges = w.steps;
  p.kernels = w.kernels;
  p.copies = w.copies;
  p.memory_samples = w.samples;
  p.allocations = w.allocations;
  return p;
}

// Sends a Workload through a BatchEncoder, without sockets, in batches of time order.
struct OfflineSender {
  model::NameTable names;
  transport::BatchEncoder encoder{names, 5, 77};
  std::vector<uint8_t> hello() {
    transport::Hello h;
    h.session_id = 5;
    h.process = workloadProcess().info;
    h.devices = workloadProcess().devices;
    h.start_time = kT0;
    return transport::encodeHello(h);
  }
};

template <typename T> model::TimeNs timeOf(const T& r) {
  if constexpr (requires { r.start; }) {
    return r.start;
  } else {
    return r.time;
  }
}

// The batches of the workload, each holding the records of the next `step` of time.
std::vector<std::vector<uint8_t>> workloadBatches(OfflineSender& s, model::TimeNs step) {
  Workload w(s.names.intern(kGemm), s.names.intern(kFp32), s.names.intern("ProfilerStep#"));
  std::vector<std::vector<uint8_t>> out;
  size_t k = 0, c = 0, m = 0, a = 0, r = 0;
  for (model::TimeNs until = kT0 + step;; until += step) {
    for (; k < w.kernels.size() && timeOf(w.kernels[k]) < until; ++k)
      s.encoder.add(w.kernels[k]);
    for (; c < w.copies.size() && timeOf(w.copies[c]) < until; ++c)
      s.encoder.add(w.copies[c]);
    for (; m < w.samples.size() && timeOf(w.samples[m]) < until; ++m)
      s.encoder.add(w.samples[m]);
    for (; a < w.allocations.size() && timeOf(w.allocations[a]) < until; ++a)
      s.encoder.add(w.allocations[a]);
    // A range is recorded when it ends.
    for (; r < w.steps.size() && w.steps[r].end < until; ++r)
      s.encoder.add(w.steps[r]);
    const bool last = k == w.kernels.size() && c == w.copies.size() && m == w.samples.size() &&
                      a == w.allocations.size() && r == w.steps.size();
    out.push_back(s.encoder.encode(0, last, until));
    s.encoder.confirm(true);
    if (last) break;
  }
  return out;
}

// Every series of `whole` must be in `windowed` with the same value, within `tolerance(name)`;
// and no series only in `windowed`.
void checkSame(const PromText& whole, const PromText& windowed,
               const std::function<double(const PromSeries&)>& tolerance) {
  for (const auto& s : whole.series) {
    auto found = windowed.find(s.name, s.labels);
    std::erase_if(found, [&](const PromSeries& f) { return f.labels != s.labels; });
    INFO(s.name << " " << [&] {
      std::string l;
      for (const auto& [k, v] : s.labels)
        l += k + "=" + v + " ";
      return l;
    }());
    REQUIRE(found.size() == 1);
    CHECK(std::abs(found[0].value - s.value) <= tolerance(s) + 1e-9 * std::abs(s.value));
  }
  CHECK(windowed.series.size() == whole.series.size());
}

} // namespace

TEST_CASE("utilisation: the recent 1 s busy series merges across windows into the whole one") {
  model::ProcessTrace p = workloadProcess();
  auto whole = analyzeUtilization(trace(p));
  // Windows cut by start time at uneven points, as the aggregator cuts them.
  UtilizationResult merged;
  model::TimeNs cuts[] = {kT0 + 7 * kSec + 3 * kMs,     kT0 + 61 * kSec + 500 * kMs,
                          kT0 + 62 * kSec + 10 * kMs,   kT0 + 97 * kSec,
                          kT0 + 149 * kSec + 999 * kMs, kT0 + 200 * kSec};
  model::TimeNs from = 0;
  for (auto until : cuts) {
    model::ProcessTrace w = process(77);
    w.info = p.info;
    for (const auto& k : p.kernels)
      if (k.start >= from && k.start < until) w.kernels.push_back(k);
    for (const auto& c : p.copies)
      if (c.start >= from && c.start < until) w.copies.push_back(c);
    merged.merge(analyzeUtilization(trace(std::move(w))));
    from = until;
  }
  REQUIRE(whole.recent.size() == 2);
  REQUIRE(merged.recent.size() == 2);
  for (size_t d = 0; d < 2; ++d) {
    const auto& a = whole.recent[d];
    const auto& b = merged.recent[d];
    CHECK(a.device == d);
    CHECK(b.device == d);
    CHECK(a.busy_ns.size() == (d == 0 ? kRecentBuckets : 110)); // GPU 1: from 40 s to 150 s
    CHECK(b.first_bucket == a.first_bucket);
    CHECK(b.start == a.start);
    CHECK(b.end == a.end);
    // Kernels and copies of a device overlap only inside one window here: exact, bucket by bucket.
    CHECK(b.busy_ns == a.busy_ns);
    // Against the raw records: whole buckets exact, a cut bucket within its own busy time.
    const model::TimeNs end = a.end, start = end - 60 * kSec;
    const model::TimeNs exact = exactBusy(p, uint32_t(d), start, end);
    CHECK(std::llabs(b.busyBetween(start, end) - exact) <= kRecentBucketNs);
    const model::TimeNs aligned = (end / kRecentBucketNs - 30) * kRecentBucketNs;
    CHECK(b.busyBetween(aligned, end) == exactBusy(p, uint32_t(d), aligned, end));
  }
  // A span shorter than the buckets kept: the whole span is in, the ratio is exact.
  model::ProcessTrace shortp = process(78);
  shortp.kernels = {kernel(kT0 + 300 * kMs, kT0 + 900 * kMs),
                    kernel(kT0 + 1500 * kMs, kT0 + 1600 * kMs)};
  auto s = analyzeUtilization(trace(shortp));
  REQUIRE(s.recent.size() == 1);
  CHECK(s.recent[0].busyBetween(kT0 + 300 * kMs, kT0 + 1600 * kMs) == 700 * kMs);
}

TEST_CASE("metrics: a multi-window, multi-GPU stream exports what the whole trace does") {
  // Two routers fed the same messages: one keeps every record (the whole trace, analysed at once
  // as before), one cuts a window every 1000 events (about 25 windows over the run).
  StreamRouter whole([](std::string_view) {}, StreamRouter::kMaxStreams, 0);
  StreamRouter windowed([](std::string_view) {}, StreamRouter::kMaxStreams, 1000);
  OfflineSender s;
  auto hello = s.hello();
  whole.route(hello);
  windowed.route(hello);
  auto batches = workloadBatches(s, 500 * kMs);
  metrics::ExpositionBuilder bw, bn;
  auto compare = [&](bool final) {
    IngestHealth hw, hn;
    model::Trace t = whole.snapshot(&hw);
    REQUIRE(t.processes.size() == 1);
    const model::ProcessTrace raw = t.processes.front();
    auto a = parseProm(bw.build(metrics::buildMetricsInput(std::move(t), &hw)));
    auto b = parseProm(bn.build(metrics::buildMetricsInput(windowed.streamAnalyses(&hn))));
    REQUIRE(hn.streams.size() == 1);
    CHECK(hn.streams[0]->batches == hw.streams[0]->batches);
    INFO((final ? "at the end" : "mid-run"));
    checkSame(a, b, [](const PromSeries& x) -> double {
      // The headers' tolerances: one 1 s bucket in 60 s for the recent busy share, and a copy
      // crossing a window boundary over a kernel of the next window is counted in both windows'
      // busy unions (bounded by that copy's length, 12 ms here, per boundary).
      if (x.name == "gpuwise_gpu_busy_ratio") return 1.0 / 60;
      if (x.name == "gpuwise_gpu_busy_seconds_total") return 0.012 * 40;
      if (x.name == "gpuwise_gpu_idle_seconds_total") return 0.012 * 40;
      return 0;
    });
    // Both against the raw records.
    for (uint32_t d = 0; d < 2; ++d) {
      std::map<std::string, std::string> g{{"cuda_device", std::to_string(d)}};
      if (b.find("gpuwise_gpu_busy_ratio", g).empty()) continue;
      model::TimeNs end = 0, start = std::numeric_limits<model::TimeNs>::max();
      for (const auto& k : raw.kernels)
        if (k.device == d) end = std::max(end, k.end), start = std::min(start, k.start);
      for (const auto& c : raw.copies)
        if (c.device == d) end = std::max(end, c.end), start = std::min(start, c.start);
      start = std::max(start, end - 60 * kSec);
      double exact = double(exactBusy(raw, d, start, end)) / double(end - start);
      CHECK(std::abs(b.value("gpuwise_gpu_busy_ratio", g) - exact) <= 1.0 / 60);
    }
    return b;
  };
  for (size_t i = 0; i < batches.size(); ++i) {
    whole.route(batches[i]);
    windowed.route(batches[i]);
    if (i == batches.size() / 2) compare(false);
  }
  CHECK(windowed.progress().windows >= 10);
  auto b = compare(true);
  // The figures themselves, so the comparison is not of two empty texts.
  Workload w(1, 2);
  const auto on1 = std::count_if(w.kernels.begin(), w.kernels.end(),
                                 [](const auto& k) { return k.device == 1; });
  CHECK(on1 == 1833); // every 60 ms from 40.02 s to 149.94 s
  CHECK(b.value("gpuwise_kernels_total", {{"cuda_device", "0"}}) == double(w.kernels.size() - on1));
  CHECK(b.value("gpuwise_kernels_total", {{"cuda_device", "1"}}) == double(on1));
  CHECK(b.value("gpuwise_copy_bytes_total",
                {{"cuda_device", "1"}, {"direction", "d2h"}, {"host_memory", "pageable"}}) ==
        double(on1 * (1 << 20)));
  CHECK(b.find("gpuwise_copy_bytes_total", {{"cuda_device", "1"}, {"direction", "h2d"}}).empty());
  CHECK(b.value("gpuwise_memory_used_bytes", {{"cuda_device", "0"}}) ==
        double((1 << 30) + 149 * (1 << 20)));
  // 110 allocations of 8 MiB on GPU 1 (seconds 40 to 149), 36 freed (seconds 42, 45, ... 147).
  CHECK(b.value("gpuwise_memory_used_bytes", {{"cuda_device", "1"}}) ==
        double((110 - 36) * (8 << 20)));
}

TEST_CASE("metrics: an ingest scraped while 2M events flow keeps its memory bounded") {
  // Under a sanitizer lane RSS is mostly the sanitizer's own: ASan's quarantine keeps filling long
  // after 25% (one lane saw 432 -> 487 MiB), so there a shorter run checks the scraped, windowed
  // path for memory errors and the counts, and the RSS bound is checked in the normal build only.
  const bool sanitized = gpuwise::test::underSanitizer();
  const uint64_t kKernels = sanitized ? 400'000 : 2'000'000, kPerBatch = 10'000;
  IngestServer::Options o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.window_events = 50'000;
  std::string error;
  auto ingest = IngestServer::start(o, &error);
  REQUIRE(ingest);
  metrics::MetricsServer::Options mo;
  mo.address = "127.0.0.1:0";
  mo.max_age = std::chrono::milliseconds(100);
  mo.min_pause = std::chrono::milliseconds(20);
  auto builder = std::make_shared<metrics::ExpositionBuilder>();
  mo.produce = [&ingest, builder] {
    return builder->build(metrics::buildMetricsInput(ingest->streamAnalyses(nullptr)));
  };
  mo.log = [](const std::string&) {};
  auto server = metrics::MetricsServer::start(mo, &error);
  REQUIRE(server);

  std::atomic<bool> done{false};
  std::atomic<uint64_t> scrapes{0}, bad_scrapes{0};
  std::thread scraper([&] {
    httplib::Client c("127.0.0.1", server->port());
    while (!done.load()) {
      auto r = c.Get("/metrics");
      if (r && r->status == 200) {
        ++scrapes;
      } else {
        ++bad_scrapes;
      }
    }
  });

  WireClient client(ingest->endpoint(), 4242, 1);
  bool connected = client.waitConnected();
  bool sent_hello = connected && client.sendHello(client.makeHello());
  auto gemm = client.names().intern(kGemm);
  std::optional<double> quarter_mib, end_mib;
  bool sent_all = sent_hello;
  for (uint64_t i = 0; sent_all && i < kKernels; i += kPerBatch) {
    for (uint64_t j = i; j < i + kPerBatch; ++j) {
      model::TimeNs s = kT0 + model::TimeNs(j) * 20'000;
      auto k = kernel(s, s + 15'000, 7, 0, gemm);
      k.launch_start = s - 8'000;
      k.launch_end = s - 4'000;
      k.thread = 1;
      client.encoder().add(k);
    }
    sent_all = client.sendBatch(0, i + kPerBatch >= kKernels, kT0 + model::TimeNs(i) * 20'000);
    // Sample where the ingest has absorbed what was sent (the queue holds a few batches at most).
    const uint64_t sent = i + kPerBatch;
    if (sent == kKernels / 4 || sent == kKernels) {
      ingest->waitFor([sent](const IngestProgress& p) { return p.events >= sent; },
                      Clock::now() + std::chrono::seconds(60));
      (sent == kKernels ? end_mib : quarter_mib) = rssMiB(::getpid());
    }
  }
  // The last scrapes see every event (the text is at most max_age old).
  double scraped = 0;
  auto deadline = Clock::now() + std::chrono::seconds(30);
  httplib::Client c("127.0.0.1", server->port());
  while (Clock::now() < deadline && scraped != double(kKernels)) {
    if (auto r = c.Get("/metrics"); r && r->status == 200)
      scraped = parseProm(r->body).value("gpuwise_kernels_total");
  }
  done = true;
  scraper.join();
  auto progress = ingest->progress();
  server->stop();
  ingest->stop();

  REQUIRE(connected);
  REQUIRE(sent_hello);
  REQUIRE(sent_all);
  CHECK(scraped == double(kKernels));
  CHECK(progress.windows >= kKernels / o.window_events * 3 / 4); // 40 (8) windows' worth sent
  CHECK(scrapes > 10);
  CHECK(bad_scrapes == 0);
  REQUIRE(quarter_mib);
  REQUIRE(end_mib);
  std::printf("advisor memory with /metrics scraped: %.1f MiB at 25%%, %.1f MiB at the end of %llu "
              "kernels (%llu scrapes)\n",
              *quarter_mib, *end_mib, (unsigned long long)kKernels,
              (unsigned long long)scrapes.load());
  // Keeping every record would add 1.5M kernel records (~120 bytes each: ~170 MiB) from 25% on.
  if (sanitized)
    WARN("memory bound not checked under a sanitizer (its shadow and quarantine count in RSS)");
  else
    CHECK(*end_mib <= *quarter_mib + 48);
}
