// How fast the advisor's ingest takes events: the ceiling on the event rate one advisor thread can
// take from the shims.
//
//   BM_RouteKernelBatches/N/B    decode + route + aggregate on one core (StreamRouter), B batches
//                                of N kernels from one process, as the shim's steady loop sends
//                                them. 10000/1024 (10.24 M events) cuts 52 windows of the default
//                                size (the `windows` counter): a long job's steady state, window
//                                analysis included, the heap's first growth a small part of it;
//                                10000/4096 (40.96 M events, 215 windows) is four times as long:
//                                a rate that holds from /1024 to /4096 is a cost per window that
//                                does not grow with the job (it did: the whole job's steps were
//                                re-derived at every cut); 10000/256 (2.56 M events, 13 windows)
//                                pays that growth in a quarter of the time; 1000/64 (64 k events)
//                                cuts none (decode and routing alone)
//   BM_IngestProcesses/P         the live path: P senders, each with its own PUSH socket, session
//                                and pid, into one IngestServer (PULL socket, ingest thread). The
//                                same 640k events in all, split across P: events/s that stays flat
//                                from 1 to 64 processes is cost linear in events, not in processes.
//                                2.56 M events: one process cuts 13 windows, 64 processes none.
//                                events_per_cpu_s: the same per CPU-second of every thread (the
//                                ingest thread's work and the senders' sends), steadier than wall
//                                time on a shared machine.
//   BM_MetricsRefreshLockHold/P  what a /metrics refresh (IngestServer::streamAnalyses) costs the
//                                ingest thread: P processes, each with an open window of 120k
//                                kernels (about half a window, the usual state between cuts); a
//                                probe thread takes the ingest lock in a loop as the ingest thread
//                                does per message, and its longest wait during the refresh is
//                                how long ingest stood still (max_ingest_wait_ms). refresh_ms: the
//                                first refresh, every stream new since the last (busy processes);
//                                refresh_unchanged_ms: the next ones, nothing new (kept
//                                aggregates).
#include "advisor/ingest/ingest_server.h"
#include "advisor/ingest/stream_router.h"
#include "transport/codec.h"
#include "transport/zmq/endpoints.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <sys/resource.h>
#include <thread>

using namespace gpuwise;
using namespace gpuwise::advisor;

namespace {

struct Stream {
  std::vector<uint8_t> hello;
  std::vector<std::vector<uint8_t>> batches;
  size_t events = 0, bytes = 0;
};

// One process's messages: a Hello, then `batches` batches of `per_batch` kernels drawn from 50
// launch sites, timed like a steady loop (3% jitter-free, so this is the codec's best case and
// the decoder's fastest path; the shim's real batches differ only in residual sizes).
Stream makeStream(int64_t pid, uint64_t session, int batches, int per_batch, bool ends = true) {
  Stream s;
  model::NameTable names;
  transport::BatchEncoder enc(names, session, pid);
  std::vector<model::NameId> ids;
  for (int i = 0; i < 50; ++i)
    ids.push_back(names.intern("kernel_" + std::to_string(i)));
  transport::Hello hello;
  hello.session_id = session;
  hello.process.pid = pid;
  s.hello = transport::encodeHello(hello);
  model::TimeNs t = 1'000'000'000;
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < per_batch; ++i) {
      model::KernelExec k;
      k.start = t;
      k.end = t + 1500;
      k.launch_start = t - 4000;
      k.launch_end = t - 3000;
      k.name = ids[static_cast<size_t>(i) % ids.size()];
      k.stream = 7;
      k.grid = {64, 1, 1};
      k.block = {256, 1, 1};
      enc.add(k);
      t += 2000;
    }
    s.batches.push_back(enc.encode(0, ends && b + 1 == batches, t));
    enc.confirm(true);
    s.events += size_t(per_batch);
    s.bytes += s.batches.back().size();
  }
  return s;
}

void BM_RouteKernelBatches(benchmark::State& state) {
  const int per_batch = static_cast<int>(state.range(0));
  const int batches = static_cast<int>(state.range(1));
  Stream s = makeStream(1, 42, batches, per_batch);
  uint64_t windows = 0;
  for (auto _ : state) {
    StreamRouter router([](std::string_view) {});
    router.route(s.hello);
    for (const auto& m : s.batches)
      router.route(m);
    benchmark::DoNotOptimize(router.progress().events);
    if (router.progress().events != s.events) state.SkipWithError("events lost");
    windows = router.progress().windows;
  }
  state.SetItemsProcessed(state.iterations() * int64_t(s.events));
  state.SetBytesProcessed(state.iterations() * int64_t(s.bytes));
  state.counters["bytes_per_event"] = double(s.bytes) / double(s.events);
  state.counters["windows"] = double(windows);
}
BENCHMARK(BM_RouteKernelBatches)
    ->Args({1000, 64})
    ->Args({10000, 256})
    ->Args({10000, 1024})
    ->Args({10000, 4096})
    ->Unit(benchmark::kMillisecond);

double processCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

// An ingest server on a free loopback port that logs nothing; null, the benchmark skipped, when
// it cannot bind.
std::unique_ptr<IngestServer>
startServer(benchmark::State& state,
            size_t memory_budget_bytes = IngestServer::kDefaultMemoryBudgetBytes) {
  IngestServer::Options o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.memory_budget_bytes = memory_budget_bytes;
  o.log = [](std::string_view) {};
  std::string error;
  auto server = IngestServer::start(o, &error);
  if (!server) state.SkipWithError(error.c_str());
  return server;
}

// A PUSH sender as the shim sets one up, connected (the sends that follow reach the server).
std::unique_ptr<transport::PushSender> connectSender(const IngestServer& server) {
  transport::PushSender::Options so;
  so.send_hwm = 1000;
  so.linger_ms = 5000;
  auto connected = transport::PushSender::connect(server.endpoint(), so);
  if (!connected)
    throw std::runtime_error("cannot connect to the ingest server: " + connected.error().message);
  auto sender = std::move(*connected);
  while (!sender->takeReconnected())
    std::this_thread::yield();
  return sender;
}

// The stream's Hello and batches, each retried while the send queue is full.
void sendStream(transport::PushSender& sender, const Stream& s) {
  auto send = [&](const std::vector<uint8_t>& m) {
    while (sender.trySend(m) != transport::SendResult::Sent)
      std::this_thread::yield();
  };
  send(s.hello);
  for (const auto& m : s.batches)
    send(m);
}

void BM_IngestProcesses(benchmark::State& state) {
  const int processes = static_cast<int>(state.range(0));
  const int kTotalBatches = 256, kPerBatch = 10000;
  const int batches = kTotalBatches / processes;
  std::vector<Stream> streams;
  size_t total_events = 0;
  for (int p = 0; p < processes; ++p) {
    streams.push_back(makeStream(1000 + p, 5000 + uint64_t(p), batches, kPerBatch));
    total_events += streams.back().events;
  }
  uint64_t windows = 0;
  double cpu = 0; // every thread's CPU in the timed regions: on a shared machine, wall time
                  // measures the neighbours; CPU per event measures the ingest's cost
  for (auto _ : state) {
    state.PauseTiming();
    auto server = startServer(state);
    if (!server) return;
    std::vector<std::unique_ptr<transport::PushSender>> senders;
    for (int p = 0; p < processes; ++p)
      senders.push_back(connectSender(*server));
    std::atomic<int> go{0};
    std::vector<std::thread> threads;
    for (int p = 0; p < processes; ++p) {
      threads.emplace_back([&, p] {
        while (go.load() == 0)
          std::this_thread::yield();
        sendStream(*senders[size_t(p)], streams[size_t(p)]);
      });
    }
    state.ResumeTiming();
    const double cpu0 = processCpuSeconds();
    go = 1;
    bool ok = server->waitFor(
        [&](const IngestProgress& pr) { return pr.events >= total_events && pr.allFinal(); },
        std::chrono::steady_clock::now() + std::chrono::seconds(120));
    cpu += processCpuSeconds() - cpu0;
    windows = server->progress().windows;
    state.PauseTiming();
    for (auto& t : threads)
      t.join();
    for (auto& s : senders)
      s->close();
    senders.clear();
    server.reset(); // frees the traces outside the timed region
    if (!ok) state.SkipWithError("not every event arrived");
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * int64_t(total_events));
  state.counters["processes"] = processes;
  state.counters["windows"] = double(windows);
  state.counters["events_per_cpu_s"] = double(state.iterations()) * double(total_events) / cpu;
}
BENCHMARK(BM_IngestProcesses)
    ->Arg(1)
    ->Arg(8)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_MetricsRefreshLockHold(benchmark::State& state) {
  const int processes = static_cast<int>(state.range(0));
  const int kBatches = 12, kPerBatch = 10000; // 120k events: an open window, never cut
  // No memory budget: under the default one, 64 streams of 120k events (~3.9 GB at the budget's
  // 512 bytes an event) would have their windows shrunk and cut.
  auto server = startServer(state, 0);
  if (!server) return;
  size_t total_events = 0;
  for (int p = 0; p < processes; ++p) {
    Stream s = makeStream(2000 + p, 9000 + uint64_t(p), kBatches, kPerBatch, false);
    auto sender = connectSender(*server);
    sendStream(*sender, s);
    sender->close();
    total_events += s.events;
  }
  if (!server->waitFor([&](const IngestProgress& pr) { return pr.events >= total_events; },
                       std::chrono::steady_clock::now() + std::chrono::seconds(300))) {
    state.SkipWithError("not every event arrived");
    return;
  }
  if (server->progress().windows != 0) {
    state.SkipWithError("a window was cut: the open windows are not what is measured");
    return;
  }
  using Clock = std::chrono::steady_clock;
  // The first refresh analyses every stream (each received its events since: 64 busy
  // processes); the later ones find nothing new (each stream's kept aggregates).
  double max_wait_ms = 0, first_ms = -1, again_ms_sum = 0;
  for (auto _ : state) {
    std::atomic<bool> refreshing{true};
    double wait_ms = 0;
    std::thread probe([&] {
      while (refreshing.load()) {
        auto t0 = Clock::now();
        benchmark::DoNotOptimize(server->progress().events);
        wait_ms =
            std::max(wait_ms, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        std::this_thread::yield();
      }
    });
    auto t0 = Clock::now();
    auto streams = server->streamAnalyses(nullptr);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (first_ms < 0)
      first_ms = ms;
    else
      again_ms_sum += ms;
    refreshing = false;
    probe.join();
    if (streams.size() != size_t(processes)) state.SkipWithError("a stream is missing");
    max_wait_ms = std::max(max_wait_ms, wait_ms);
  }
  state.counters["processes"] = processes;
  state.counters["refresh_ms"] = first_ms;
  if (state.iterations() > 1)
    state.counters["refresh_unchanged_ms"] = again_ms_sum / double(state.iterations() - 1);
  state.counters["max_ingest_wait_ms"] = max_wait_ms;
}
BENCHMARK(BM_MetricsRefreshLockHold)
    ->Arg(8)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

} // namespace

BENCHMARK_MAIN();
