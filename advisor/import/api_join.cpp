#include "advisor/import/api_join.h"

#include "advisor/import/kineto_text.h"

#include <cstdint>
#include <unordered_map>

namespace gpuwise::advisor {

using model::CopyDirection;
using model::SyncKind;

void joinApiCalls(model::ProcessTrace& t, std::vector<model::HostSync> sync_records,
                  SyncRecordMerge merge) {
  std::unordered_map<uint64_t, uint32_t> apiByCorr;
  apiByCorr.reserve(t.api_calls.size());
  for (uint32_t i = 0; i < t.api_calls.size(); ++i)
    if (t.api_calls[i].correlation) apiByCorr.emplace(t.api_calls[i].correlation, i);
  auto api = [&](uint64_t corr) -> const model::ApiCall* {
    if (!corr) return nullptr;
    auto it = apiByCorr.find(corr);
    return it == apiByCorr.end() ? nullptr : &t.api_calls[it->second];
  };

  for (auto& k : t.kernels)
    if (const auto* a = api(k.correlation)) {
      k.launch_start = a->start;
      k.launch_end = a->end;
      k.thread = a->thread;
    }
  std::unordered_map<uint64_t, uint32_t> copyByCorr;
  for (uint32_t i = 0; i < t.copies.size(); ++i) {
    auto& c = t.copies[i];
    if (c.correlation) copyByCorr.emplace(c.correlation, i);
    if (const auto* a = api(c.correlation)) {
      c.call_start = a->start;
      c.call_end = a->end;
      c.thread = a->thread;
      c.async = isAsyncApi(t.names.get(a->name));
    }
  }
  for (auto& m : t.memsets)
    if (const auto* a = api(m.correlation)) {
      m.call_start = a->start;
      m.call_end = a->end;
      m.thread = a->thread;
      m.async = isAsyncApi(t.names.get(a->name));
    }

  // The host was blocked for the whole of a synchronising call.
  std::vector<uint8_t> kindOfName(t.names.size(), 0xff);
  std::unordered_map<uint64_t, uint32_t> syncByCorr;
  for (const auto& a : t.api_calls) {
    uint8_t& cached = kindOfName[a.name];
    if (cached == 0xff) cached = uint8_t(syncKindForApi(t.names.get(a.name)));
    const auto kind = SyncKind(cached);
    if (kind == SyncKind::Unknown) continue;
    model::HostSync s{.start = a.start,
                      .end = a.end,
                      .correlation = a.correlation,
                      .thread = a.thread,
                      .kind = kind};
    if (kind == SyncKind::SyncCopy) {
      // cudaMemcpy device-to-device does not wait for the host (CUDA API sync behaviour).
      auto it = a.correlation ? copyByCorr.find(a.correlation) : copyByCorr.end();
      if (it != copyByCorr.end()) {
        const auto& c = t.copies[it->second];
        if (c.direction == CopyDirection::DeviceToDevice) continue;
        s.device = c.device;
        s.stream = c.stream;
      }
    }
    if (a.correlation) syncByCorr.emplace(a.correlation, uint32_t(t.syncs.size()));
    t.syncs.push_back(s);
  }
  // Synchronisation records: the stream and device of a sync call we already have, or a wait of
  // their own (Stream Wait Event, a sync the source saw without a call).
  for (auto& r : sync_records) {
    if (r.correlation) {
      auto it = syncByCorr.find(r.correlation);
      if (it != syncByCorr.end() &&
          (merge == SyncRecordMerge::AnyKind || t.syncs[it->second].kind == r.kind)) {
        t.syncs[it->second].device = r.device;
        t.syncs[it->second].stream = r.stream;
        continue;
      }
    }
    if (const auto* a = api(r.correlation)) r.thread = a->thread;
    t.syncs.push_back(r);
  }
}

} // namespace gpuwise::advisor
