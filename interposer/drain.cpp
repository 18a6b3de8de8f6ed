#include "interposer/drain.h"

#include "interposer/log.h"
#include "interposer/thread_state.h"

#include <climits>
#include <csignal>
#include <ctime>

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gpuwise::interposer {

namespace {

// Drain::yield_: nobody asked for CUPTI; the application asked; CUPTI has been handed over.
constexpr uint32_t kYieldNone = 0, kYieldAsked = 1, kYieldDone = 2;

void futexWait(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeout_ns) {
  if (timeout_ns <= 0) return;
  timespec ts{time_t(timeout_ns / 1000000000), long(timeout_ns % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, &ts, nullptr,
          0);
}

void futexWake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

int64_t steadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Moves up to `budget` records of `src` starting at `*offset` to the end of `dst`.
template <class T>
size_t takeSlice(std::vector<T>& src, size_t* offset, std::vector<T>& dst, size_t budget) {
  size_t n = std::min(budget, src.size() - *offset);
  dst.insert(dst.end(), src.begin() + long(*offset), src.begin() + long(*offset + n));
  *offset += n;
  return n;
}

} // namespace

Drain::Drain(DrainDeps deps, DrainOptions options)
    : deps_(std::move(deps)), options_(options), tracker_(options.coverage) {}

Drain::~Drain() {
  // Only tests destroy a Drain; the shim leaks its own (it may still be flushing at exit).
  if (running_.load() && !done_.load()) finish(std::chrono::hours(1));
}

Status Drain::start() {
  names_ = std::make_unique<model::NameTable>();
  converter_ =
      std::make_unique<EventConverter>(*deps_.clock, *names_, *deps_.kernels, deps_.resolver);
  if (deps_.cupti_port)
    decoder_ = std::make_unique<profiler::ActivityDecoder>(*deps_.cupti_port, *names_);
  // CUPTI refused our clock: its own is mapped onto ours (null, the normal case: nothing to map).
  if (decoder_ && deps_.cupti) decoder_->setTimestampMapper(deps_.cupti->hostMapping());
  // Drops counted before this session (a parent process's, an earlier session's) are not ours.
  if (deps_.unringed_drops) unringed_seen_ = deps_.unringed_drops->load(std::memory_order_relaxed);
  if (!deps_.make_sink) return unexpected("no sink");
  auto sink = deps_.make_sink(*names_);
  if (!sink) return unexpected(std::move(sink.error()));
  if (!*sink) return unexpected("no sink");
  sink_ = std::move(*sink);
  // The drain thread must not run the application's signal handlers: block everything it could
  // be sent, for the duration of the create (the new thread inherits the mask).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  running_.store(true);
  int rc = pthread_create(&thread, &attr, &Drain::threadMain, this);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    running_.store(false);
    return unexpected("could not create the drain thread");
  }
  // Named before start() returns, so anyone looking (ps, /proc, tests) sees it at once.
  pthread_setname_np(thread, "gpuwise-drain");
  return {};
}

void* Drain::threadMain(void* self) {
  static_cast<Drain*>(self)->run();
  return nullptr;
}

void Drain::kick() {
  if (wake_.exchange(1, std::memory_order_acq_rel) == 0) futexWake(&wake_);
}

bool Drain::finish(std::chrono::milliseconds budget) {
  if (!running_.load()) return true;
  stop_.store(true, std::memory_order_release);
  kick();
  int64_t deadline = steadyNs() + int64_t(budget.count()) * 1000000;
  while (done_.load(std::memory_order_acquire) == 0) {
    int64_t left = deadline - steadyNs();
    if (left <= 0) return false;
    futexWait(&done_, 0, std::min<int64_t>(left, 10000000));
  }
  return true;
}

void Drain::run() {
  t_state.internal = 1; // nothing this thread calls (device queries, CUPTI) is recorded
  try {
    governor_ =
        std::make_unique<OverheadGovernor>(calibrateHookCosts(options_.calibration_iterations),
                                           options_.overhead_budget, deps_.clock->nowNs());
  } catch (...) {
    // No estimate (out of memory): the report says the overhead is unknown.
  }
  bool warned = false;
  const int64_t interval = int64_t(options_.batch_ms) * 1000000;
  int64_t next = steadyNs() + interval;
  while (!stop_.load(std::memory_order_acquire)) {
    // A cycle when kicked or when the interval is up; a spurious futex return (a signal) just
    // waits again for what is left.
    while (!stop_.load(std::memory_order_acquire) &&
           wake_.exchange(0, std::memory_order_acq_rel) == 0) {
      int64_t left = next - steadyNs();
      if (left <= 0) break;
      futexWait(&wake_, 0, left);
    }
    if (stop_.load(std::memory_order_acquire)) break;
    try {
      cycle(false);
    } catch (...) {
      // Out of memory in the middle of a cycle: those events are lost; say so once, carry on.
      if (!warned) logLine(LogLevel::Warn, "drain cycle failed (out of memory?); events dropped");
      warned = true;
    }
    next = steadyNs() + interval;
  }
  try {
    cycle(true);
  } catch (...) {
    logLine(LogLevel::Warn, "final flush failed; the last events are lost");
  }
  try {
    if (sink_) sink_->close(std::chrono::milliseconds(options_.linger_ms));
  } catch (...) {
  }
  done_.store(1, std::memory_order_release);
  futexWake(&done_);
}

void Drain::countDropped(uint64_t n) {
  if (!n) return;
  carried_drops_ += n;
  dropped_total_.fetch_add(n, std::memory_order_relaxed);
}

void Drain::cycle(bool final) {
  deps_.clock->recalibrate();
  int64_t now = deps_.clock->nowNs();
  if (yield_.load(std::memory_order_acquire) == kYieldAsked) handOverCupti(now);
  drainRings();
  route(hook_records_);
  drainCupti(final, now);
  sampleDevices(final, now);
  govern(now);
  if (final)
    tracker_.decideAll(pending_);
  else
    tracker_.decide(now, pending_);
  send(final, now);
  cycles_.fetch_add(1, std::memory_order_release);
}

void Drain::drainRings() {
  uint64_t drained = 0;
  deps_.rings->forEachActive([&](RingSlot& slot) {
    uint32_t tid = slot.tid;
    drained +=
        slot.ring.drain([&](const RawEvent& e) { converter_->convert(e, tid, hook_records_); });
    uint64_t dropped = slot.ring.takeDropped();
    countDropped(dropped);
    cycle_recorded_ += dropped; // a dropped event cost the application as much as a kept one
    cycle_counted_ += slot.ring.takeCounted();
    deps_.rings->recycle(slot);
  });
  events_drained_.fetch_add(drained, std::memory_order_relaxed);
  cycle_recorded_ += drained;
  if (deps_.unringed_drops) {
    uint64_t u = deps_.unringed_drops->load(std::memory_order_relaxed);
    countDropped(u - unringed_seen_);
    unringed_seen_ = u;
  }
}

void Drain::route(Records& hooks) {
  profiler::CuptiCollector* cupti = deps_.cupti && deps_.cupti->active() ? deps_.cupti : nullptr;
  using profiler::ApiClass;
  for (const auto& k : hooks.kernels) {
    if (cupti && cupti->covers(ApiClass::Launch))
      tracker_.holdHook(k);
    else
      pending_.kernels.push_back(k);
  }
  for (const auto& c : hooks.copies) {
    if (cupti && cupti->covers(ApiClass::Copy))
      tracker_.holdHook(c);
    else
      pending_.copies.push_back(c);
  }
  for (const auto& m : hooks.memsets) {
    if (cupti && cupti->covers(ApiClass::Memset))
      tracker_.holdHook(m);
    else
      pending_.memsets.push_back(m);
  }
  for (const auto& s : hooks.syncs) {
    pending_.syncs.push_back(s);
    // Only explicit syncs have a CUPTI twin (a SYNCHRONIZATION record) to be matched against.
    if (cupti && cupti->covers(ApiClass::Sync) && s.kind != model::SyncKind::SyncCopy)
      tracker_.noteHookSync(s);
  }
  for (const auto& a : hooks.allocations) {
    pending_.allocations.push_back(a);
    if (cupti) tracker_.noteHookAllocation(a);
  }
  pending_.api_calls.insert(pending_.api_calls.end(), hooks.api_calls.begin(),
                            hooks.api_calls.end());
  pending_.blas_calls.insert(pending_.blas_calls.end(), hooks.blas_calls.begin(),
                             hooks.blas_calls.end());
  pending_.collectives.insert(pending_.collectives.end(), hooks.collectives.begin(),
                              hooks.collectives.end());
  hooks.clear();
}

void Drain::drainCupti(bool final, int64_t now) {
  profiler::CuptiCollector* cupti = deps_.cupti;
  if (!cupti || !cupti->active() || !decoder_) return;
  cupti->flush(final);
  cupti->consume(
      [&](uint8_t* buffer, size_t valid) { decoder_->decode(buffer, valid, now, decoded_); });
  decoder_->age(now, decoded_);
  if (final) decoder_->flushHeld(decoded_);
  countDropped(cupti->takeDroppedRecords());
  cupti_records_.fetch_add(decoded_.recordCount(), std::memory_order_relaxed);
  // One kernel record per launch: what CUPTI saw, beside what the hooks counted.
  cost_.cupti_launch_records += decoded_.kernels.size();
  pending_.kernels.insert(pending_.kernels.end(), decoded_.kernels.begin(), decoded_.kernels.end());
  pending_.copies.insert(pending_.copies.end(), decoded_.copies.begin(), decoded_.copies.end());
  pending_.memsets.insert(pending_.memsets.end(), decoded_.memsets.begin(), decoded_.memsets.end());
  pending_.ranges.insert(pending_.ranges.end(), decoded_.ranges.begin(), decoded_.ranges.end());
  cost_.cupti_overhead_ns += decoded_.cupti_overhead_ns;
  for (const auto& span : decoded_.api_spans)
    tracker_.addApiSpan(span);
  for (const auto& s : decoded_.syncs)
    tracker_.holdCuptiSync(s, now);
  for (const auto& a : decoded_.allocations)
    tracker_.holdCuptiAllocation(a, now);
  decoded_.clear();
}

bool Drain::yieldCupti(std::chrono::milliseconds budget) {
  uint32_t state = kYieldNone;
  yield_.compare_exchange_strong(state, kYieldAsked, std::memory_order_acq_rel);
  if (state == kYieldDone) return true;
  kick();
  int64_t deadline = steadyNs() + int64_t(budget.count()) * 1000000;
  while (yield_.load(std::memory_order_acquire) != kYieldDone) {
    // A drain that has stopped (exit) or died never answers: no reason to wait for it.
    if (!running_.load() || done_.load(std::memory_order_acquire)) return false;
    int64_t left = deadline - steadyNs();
    if (left <= 0) return false;
    futexWait(&yield_, kYieldAsked, std::min<int64_t>(left, 10000000));
  }
  return true;
}

void Drain::handOverCupti(int64_t now) {
  profiler::CuptiCollector* cupti = deps_.cupti;
  if (cupti && cupti->active()) {
    // The hooks record launches from here on: CUPTI will not.
    deps_.launches_covered = false;
    if (deps_.count_launches) deps_.count_launches->store(0, std::memory_order_relaxed);
    cupti->disableActivity();
    // Everything CUPTI recorded so far, joined with the hook records it covers, then released:
    // what the hooks record from now on is the only record of its call.
    drainRings();
    route(hook_records_);
    drainCupti(true, now);
    tracker_.decideAll(pending_);
    cupti->stop();
    cupti->restoreDefaultClock();
    hello_needed_ = true; // the advisor learns the new tier
    if (deps_.on_cupti_released) deps_.on_cupti_released(now);
  }
  yield_.store(kYieldDone, std::memory_order_release);
  futexWake(&yield_);
}

void Drain::sampleDevices(bool final, int64_t now) {
  if (!deps_.sample_devices || options_.device_sample_ms == 0) return;
  const int64_t interval = int64_t(options_.device_sample_ms) * 1000000;
  // The first cycle samples at once; then every interval, and once more at the final flush.
  if (!final && last_device_sample_ != 0 && now - last_device_sample_ < interval) return;
  last_device_sample_ = now;
  deps_.sample_devices(now, pending_.device_samples, pending_.power_samples);
}

void Drain::govern(int64_t now) {
  cost_.events_recorded += cycle_recorded_;
  cost_.launches_counted += cycle_counted_;
  launches_counted_.fetch_add(cycle_counted_, std::memory_order_relaxed);
  if (governor_) {
    OverheadGovernor::Cycle c;
    c.now_ns = now;
    c.recorded = cycle_recorded_;
    c.counted = cycle_counted_;
    c.launches_covered = deps_.launches_covered;
    auto mode = governor_->onCycle(c);
    governor_->fill(cost_);
    if (deps_.count_launches)
      deps_.count_launches->store(mode == OverheadGovernor::LaunchMode::Count ? 1 : 0,
                                  std::memory_order_relaxed);
  }
  cycle_recorded_ = 0;
  cycle_counted_ = 0;
}

bool Drain::ensureConnected(bool final) {
  auto try_hello = [&] {
    if (sink_->sendHello(deps_.make_hello ? deps_.make_hello() : transport::Hello{}) !=
        SendStatus::Sent)
      return false;
    hello_needed_ = false;
    connected_ = true;
    hellos_sent_.fetch_add(1, std::memory_order_relaxed);
    return true;
  };
  if (sink_->takeReconnected()) {
    hello_needed_ = true;
    connected_ = false;
  }
  if (hello_needed_ && try_hello()) return true;
  if (connected_ || !final) return connected_;
  // Exiting before the advisor ever answered (a short job): give the connection a moment.
  int64_t deadline = steadyNs() + int64_t(options_.connect_wait_ms) * 1000000;
  while (steadyNs() < deadline) {
    if (sink_->takeReconnected()) hello_needed_ = true;
    if (hello_needed_ && try_hello()) return true;
    timespec ts{0, 5000000};
    nanosleep(&ts, nullptr);
  }
  return false;
}

void Drain::send(bool final, int64_t now) {
  if (!ensureConnected(final)) {
    // Nobody to send to yet: keep what we have, within bounds.
    size_t n = pending_.size();
    if (final || n > options_.max_pending_events) {
      countDropped(n);
      pending_.clear();
    }
    return;
  }
  size_t total = pending_.size();
  if (total == 0 && carried_drops_ == 0 && !final) return;
  size_t off[model::kRecordKinds] = {};
  size_t sent_records = 0;
  do {
    transport::Batch b;
    size_t budget = options_.max_batch_events;
    size_t column = 0;
    model::RecordSet::forEachColumnPair(pending_, b, [&](auto& from, auto& to) {
      budget -= takeSlice(from, &off[column++], to, budget);
    });
    size_t n = options_.max_batch_events - budget;
    sent_records += n;
    bool last = sent_records >= total;
    b.events_dropped = carried_drops_;
    b.final = final && last;
    b.sent_time = now;
    b.shim_cost = cost_;
    if (sink_->sendBatch(b) == SendStatus::Sent) {
      records_sent_.fetch_add(n, std::memory_order_relaxed);
      batches_sent_.fetch_add(1, std::memory_order_relaxed);
      dropped_reported_.fetch_add(carried_drops_, std::memory_order_relaxed);
      carried_drops_ = 0;
      if (b.final) final_sent_.store(true, std::memory_order_release);
    } else {
      batches_failed_.fetch_add(1, std::memory_order_relaxed);
      countDropped(n);
    }
  } while (sent_records < total);
  pending_.clear();
}

Drain::Stats Drain::stats() const {
  Stats s;
  s.cycles = cycles_.load(std::memory_order_acquire);
  s.events_drained = events_drained_.load(std::memory_order_relaxed);
  s.records_sent = records_sent_.load(std::memory_order_relaxed);
  s.batches_sent = batches_sent_.load(std::memory_order_relaxed);
  s.batches_failed = batches_failed_.load(std::memory_order_relaxed);
  s.hellos_sent = hellos_sent_.load(std::memory_order_relaxed);
  s.dropped_total = dropped_total_.load(std::memory_order_relaxed);
  s.dropped_reported = dropped_reported_.load(std::memory_order_relaxed);
  s.cupti_records = cupti_records_.load(std::memory_order_relaxed);
  s.launches_counted = launches_counted_.load(std::memory_order_relaxed);
  s.final_sent = final_sent_.load(std::memory_order_acquire);
  return s;
}

} // namespace gpuwise::interposer
