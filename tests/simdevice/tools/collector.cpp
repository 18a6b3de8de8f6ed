// libgwsim_collector.so: a small CUPTI activity client the simulated device's end-to-end tests
// inject into the samples with CUDA_INJECTION64_PATH, the way a profiler would be injected. It
// subscribes, stamps records with CLOCK_MONOTONIC, collects kernel, copy, memset, sync, memory
// and runtime API activity, and at exit writes one line of totals to $GWSIM_COLLECT_OUT:
//
//   init_calls=1 kernels=... h2d_bytes=... busy_ratio=0.97 ... top_kernel=<mangled name>
//
// Tests compare those totals with the sample's own summary line and check the planted
// inefficiency is visible in the records. Not a product component: the shim is in interposer/.
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Interval {
  uint64_t start, end;
};

struct Stats {
  std::mutex mutex;
  std::vector<Interval> kernels, copies, memsets, syncs;
  std::unordered_map<uint32_t, uint64_t> api_start;           // correlation -> runtime API start
  std::vector<std::pair<uint32_t, uint64_t>> kernel_launches; // correlation, kernel start
  std::map<std::string, uint64_t> kernel_ns_by_name;
  long long graph_kernels = 0, runtime_records = 0, driver_records = 0;
  unsigned long long h2d = 0, d2h = 0, d2d = 0, pinned = 0, pageable = 0;
  uint64_t pageable_ns = 0;
  long long min_blocks = -1, max_blocks = 0;
  int64_t memory = 0, memory_peak = 0;
  long long callbacks = 0, callback_mismatches = 0;
};

Stats* g_stats = new Stats(); // leaked: used by atexit and CUPTI's threads
std::atomic<int> g_init_calls{0};

uint64_t CUPTIAPI monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

void CUPTIAPI requestBuffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 1u << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void record(const CUpti_Activity* r, Stats& s) {
  switch (r->kind) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
    s.kernels.push_back({k->start, k->end});
    s.kernel_launches.emplace_back(k->correlationId, k->start);
    s.kernel_ns_by_name[k->name != nullptr ? k->name : "?"] += k->end - k->start;
    if (k->graphId != 0) ++s.graph_kernels;
    const long long blocks = 1LL * k->gridX * k->gridY * k->gridZ;
    s.min_blocks = s.min_blocks < 0 ? blocks : std::min(s.min_blocks, blocks);
    s.max_blocks = std::max(s.max_blocks, blocks);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
    s.copies.push_back({m->start, m->end});
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) s.h2d += m->bytes;
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH) s.d2h += m->bytes;
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD) s.d2d += m->bytes;
    const uint8_t host = m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? m->srcKind : m->dstKind;
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ||
        m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH) {
      if (host == CUPTI_ACTIVITY_MEMORY_KIND_PINNED) s.pinned += m->bytes;
      if (host == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE) {
        s.pageable += m->bytes;
        s.pageable_ns += m->end - m->start;
      }
    }
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
    s.memsets.push_back({m->start, m->end});
    break;
  }
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
    const auto* y = reinterpret_cast<const CUpti_ActivitySynchronization2*>(r);
    if (y->type != CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT)
      s.syncs.push_back({y->start, y->end});
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMORY2: {
    const auto* m = reinterpret_cast<const CUpti_ActivityMemory4*>(r);
    if (m->memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) break;
    const bool alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    s.memory += alloc ? int64_t(m->bytes) : -int64_t(m->bytes);
    s.memory_peak = std::max(s.memory_peak, s.memory);
    break;
  }
  case CUPTI_ACTIVITY_KIND_RUNTIME: {
    const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(r);
    s.api_start[a->correlationId] = a->start;
    ++s.runtime_records;
    break;
  }
  case CUPTI_ACTIVITY_KIND_DRIVER: ++s.driver_records; break;
  default: break;
  }
}

void CUPTIAPI completeBuffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard lock(g_stats->mutex);
    CUpti_Activity* r = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
      record(r, *g_stats);
  }
  std::free(buffer);
}

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  // ENTER stores the correlation id in the call's private slot; EXIT must see the same one.
  std::lock_guard lock(g_stats->mutex);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    *cb->correlationData = cb->correlationId;
    ++g_stats->callbacks;
  } else if (*cb->correlationData != cb->correlationId) {
    ++g_stats->callback_mismatches;
  }
}

uint64_t unionLength(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  uint64_t total = 0, cur_start = 0, cur_end = 0;
  bool open = false;
  for (const Interval& i : v) {
    if (open && i.start <= cur_end) {
      cur_end = std::max(cur_end, i.end);
      continue;
    }
    if (open) total += cur_end - cur_start;
    cur_start = i.start, cur_end = i.end, open = true;
  }
  if (open) total += cur_end - cur_start;
  return total;
}

void writeSummary() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  const char* path = std::getenv("GWSIM_COLLECT_OUT");
  FILE* out = path != nullptr ? std::fopen(path, "w") : stderr;
  if (out == nullptr) return;
  Stats& s = *g_stats;
  std::lock_guard lock(s.mutex);
  std::vector<Interval> gpu = s.kernels;
  gpu.insert(gpu.end(), s.copies.begin(), s.copies.end());
  gpu.insert(gpu.end(), s.memsets.begin(), s.memsets.end());
  uint64_t first = UINT64_MAX, last = 0;
  for (const Interval& i : gpu)
    first = std::min(first, i.start), last = std::max(last, i.end);
  const uint64_t busy = unionLength(gpu);
  const double span = gpu.empty() ? 0.0 : double(last - first);
  uint64_t kernel_ns = 0;
  std::string top;
  uint64_t top_ns = 0;
  for (const auto& [name, ns] : s.kernel_ns_by_name) {
    kernel_ns += ns;
    if (ns > top_ns) top = name, top_ns = ns;
  }
  std::vector<Interval> copies_and_kernels = s.kernels;
  copies_and_kernels.insert(copies_and_kernels.end(), s.copies.begin(), s.copies.end());
  const uint64_t overlap =
      unionLength(s.kernels) + unionLength(s.copies) - unionLength(copies_and_kernels);
  long long unmatched = 0;
  int64_t min_gap = -1;
  for (const auto& [correlation, start] : s.kernel_launches) {
    auto it = s.api_start.find(correlation);
    if (it == s.api_start.end()) {
      ++unmatched;
      continue;
    }
    const int64_t gap = int64_t(start) - int64_t(it->second);
    min_gap = min_gap < 0 ? gap : std::min(min_gap, gap);
  }
  std::fprintf(out,
               "init_calls=%d kernels=%zu graph_kernels=%lld memcpys=%zu memsets=%zu syncs=%zu "
               "runtime_records=%lld driver_records=%lld h2d_bytes=%llu d2h_bytes=%llu "
               "d2d_bytes=%llu pinned_bytes=%llu pageable_bytes=%llu pageable_copy_s=%.6f "
               "kernel_s=%.6f gpu_busy_s=%.6f gpu_span_s=%.6f busy_ratio=%.4f host_sync_s=%.6f "
               "copy_kernel_overlap_s=%.6f mem_peak_bytes=%lld dropped=%zu min_launch_gap_ns=%lld "
               "unmatched_kernels=%lld min_blocks=%lld max_blocks=%lld callbacks=%lld "
               "callback_mismatches=%lld top_kernel_share=%.4f top_kernel=%s\n",
               g_init_calls.load(), s.kernels.size(), s.graph_kernels, s.copies.size(),
               s.memsets.size(), s.syncs.size(), s.runtime_records, s.driver_records, s.h2d, s.d2h,
               s.d2d, s.pinned, s.pageable, s.pageable_ns / 1e9, kernel_ns / 1e9, busy / 1e9,
               span / 1e9, span > 0 ? busy / span : 0.0, unionLength(s.syncs) / 1e9, overlap / 1e9,
               static_cast<long long>(s.memory_peak), dropped, static_cast<long long>(min_gap),
               unmatched, s.min_blocks, s.max_blocks, s.callbacks, s.callback_mismatches,
               kernel_ns > 0 ? double(top_ns) / double(kernel_ns) : 0.0,
               top.empty() ? "-" : top.c_str());
  if (out != stderr) std::fclose(out);
}

} // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (g_init_calls.fetch_add(1) != 0) return 1;
  CUpti_SubscriberHandle subscriber = nullptr;
  if (cuptiSubscribe(&subscriber, onCallback, nullptr) != CUPTI_SUCCESS) return 1;
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  std::atexit(writeSummary);
  cuptiActivityRegisterTimestampCallback(monotonicNs);
  cuptiActivityRegisterCallbacks(requestBuffer, completeBuffer);
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                  CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                  CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_RUNTIME}) {
    cuptiActivityEnable(kind);
  }
  return 1;
}
