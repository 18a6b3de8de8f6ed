// The one thread of ours in the application process ("gpuwise-drain"). Every batch interval, or
// as soon as a ring reaches half full, it empties the rings and the completed CUPTI buffers, turns
// raw events into model records, joins CUPTI's GPU records to their launches, keeps hooks and CUPTI
// from counting a call twice, and sends one batch through the sink without ever blocking.
//
// Connection epochs: on every (re)connection the sink reports (takeReconnected) the drain sends a
// Hello before any batch. Until the first Hello gets through, events wait (bounded by
// max_pending_events; past it they are dropped and counted). A batch that cannot be sent is lost:
// its events are counted as dropped and the count rides in the next batch that gets through.
//
// Threads: start()/finish() by the shim's owner; kick() from any thread (lock-free: a futex wake);
// stats() from any thread. Everything else runs on the drain thread, which owns the NameTable,
// converter, decoder, tracker and sink.
#pragma once

#include "interposer/batch_sink.h"
#include "interposer/coverage_tracker.h"
#include "interposer/event_converter.h"
#include "interposer/overhead_governor.h"
#include "interposer/records.h"
#include "interposer/ring_pool.h"
#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/cupti_collector.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace gpuwise::interposer {

struct DrainOptions {
  uint32_t batch_ms = 50;
  size_t max_pending_events = size_t{1} << 18; // waiting for the first connection
  size_t max_batch_events = 50000;             // larger sends are split into several batches
  int linger_ms = 200;
  // At exit, how long the final flush may wait for a first connection to the advisor.
  int connect_wait_ms = 500;
  CoverageTracker::Options coverage;
  // The share of wall time the hooks may cost before launch detail is shed (0: never shed).
  double overhead_budget = 0.01;
  // Calibration iterations for the hook-cost estimate (tests make it small).
  uint32_t calibration_iterations = 20000;
  // How often device facts (NVML memory, utilisation) are sampled; 0 never.
  uint32_t device_sample_ms = 1000;
};

struct DrainDeps {
  RingPool* rings = nullptr;
  profiler::Clock* clock = nullptr; // recalibrated by the drain thread every cycle
  const KernelRegistry* kernels = nullptr;
  profiler::CuptiCollector* cupti = nullptr; // null or inactive: interposer tier
  profiler::CuptiPort* cupti_port = nullptr;
  // Makes the sink once the drain's NameTable exists (the sink resolves names in it).
  std::function<Expected<std::unique_ptr<BatchSink>>(const model::NameTable&)> make_sink;
  // The Hello for a new connection epoch (called on the drain thread: may query the runtime).
  std::function<transport::Hello()> make_hello;
  EventConverter::NameResolver resolver;
  // Events dropped before reaching a ring (no ring could be claimed).
  const std::atomic<uint64_t>* unringed_drops = nullptr;
  // The hooks' "count launches, do not record them" switch, which the drain thread drives, and
  // whether counting is the normal state (CUPTI records every launch and GPUWISE_LAUNCH_DETAIL is
  // not full): decided once when the session starts.
  std::atomic<uint8_t>* count_launches = nullptr;
  bool launches_covered = false;
  // Appends NVML samples of the process's devices (drain thread; may take milliseconds). Null:
  // no device samples.
  // no device samples. `power`: their energy counters, power and clocks, one per device.
  std::function<void(int64_t now, std::vector<model::DeviceSample>& out,
                     std::vector<model::PowerSample>& power)>
      sample_devices;
  // Called on the drain thread once CUPTI has been handed over (yieldCupti), with the drain's
  // clock: the session's tier becomes the interposer's from here on.
  std::function<void(int64_t now)> on_cupti_released;
};

class Drain {
public:
  struct Stats {
    uint64_t cycles = 0;
    uint64_t events_drained = 0; // raw events taken from the rings
    uint64_t records_sent = 0;   // model records in batches that got through
    uint64_t batches_sent = 0;
    uint64_t batches_failed = 0; // would-block or error: their records counted as dropped
    uint64_t hellos_sent = 0;
    uint64_t dropped_total = 0;    // every drop counted (rings, CUPTI, sends, pending cap)
    uint64_t dropped_reported = 0; // drops carried by batches that got through
    uint64_t cupti_records = 0;
    uint64_t launches_counted = 0; // launches the hooks counted without recording
    bool final_sent = false;
  };

  Drain(DrainDeps deps, DrainOptions options);
  ~Drain();
  Drain(const Drain&) = delete;
  Drain& operator=(const Drain&) = delete;

  // Makes the sink and starts the thread. An error saying which failed when either does.
  Status start();
  void kick();
  // Asks for the final flush (final batch, sink closed) and waits for it at most `budget`.
  // Returns true when it completed. Never blocks longer; a stuck drain thread is abandoned.
  bool finish(std::chrono::milliseconds budget);
  Stats stats() const;
  uint64_t cycles() const { return cycles_.load(std::memory_order_acquire); }

  // Hands CUPTI over to the application's own profiler (torch.profiler calling cuptiSubscribe),
  // from any thread but the drain's: the drain thread stops new CUPTI records, takes every record
  // made so far, unsubscribes, switches the hooks back to recording launches, restores CUPTI's
  // default clock and sends a new Hello (the interposer tier, and why). Waits at most `budget`;
  // true once it is done (at once when there was no CUPTI to give back), false at the deadline
  // or when the drain has stopped.
  bool yieldCupti(std::chrono::milliseconds budget);

private:
  static void* threadMain(void* self);
  void run();
  void cycle(bool final);
  void drainRings();
  void drainCupti(bool final, int64_t now);
  void route(Records& hooks);
  void send(bool final, int64_t now);
  bool ensureConnected(bool final);
  void countDropped(uint64_t n);
  void govern(int64_t now);
  void sampleDevices(bool final, int64_t now);
  void handOverCupti(int64_t now);

  DrainDeps deps_;
  DrainOptions options_;
  std::unique_ptr<model::NameTable> names_;
  std::unique_ptr<EventConverter> converter_;
  std::unique_ptr<profiler::ActivityDecoder> decoder_;
  CoverageTracker tracker_;
  std::unique_ptr<BatchSink> sink_;

  Records hook_records_, pending_;
  profiler::DecodedActivity decoded_;
  uint64_t carried_drops_ = 0; // to report in the next batch that gets through
  uint64_t unringed_seen_ = 0;
  std::unique_ptr<OverheadGovernor> governor_;
  model::ShimCost cost_; // cumulative, carried by every batch
  uint64_t cycle_recorded_ = 0, cycle_counted_ = 0;
  int64_t last_device_sample_ = 0;
  bool connected_ = false; // a Hello got through in the current epoch
  bool hello_needed_ = false;

  std::atomic<uint32_t> wake_{0};
  std::atomic<uint32_t> done_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::atomic<uint64_t> cycles_{0};
  std::atomic<uint32_t> yield_{0}; // kYieldNone, kYieldAsked, kYieldDone (futex word)
  // Stats, written by the drain thread, read anywhere.
  std::atomic<uint64_t> events_drained_{0}, records_sent_{0}, batches_sent_{0}, batches_failed_{0},
      hellos_sent_{0}, dropped_total_{0}, dropped_reported_{0}, cupti_records_{0},
      launches_counted_{0};
  std::atomic<bool> final_sent_{false};
};

} // namespace gpuwise::interposer
