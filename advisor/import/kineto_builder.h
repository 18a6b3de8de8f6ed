// Builds one model::ProcessTrace from the decoded events of one Kineto trace file.
//
// Mapping (both eras of the format):
//   kernel / Kernel                  -> KernelExec (NCCL/RCCL kernels flagged communication)
//   gpu_memcpy / Memcpy              -> Copy (direction and memory kinds from the event name)
//   gpu_memset / Memset              -> Memset
//   cuda_runtime / cuda_driver /
//   Runtime / mtia_runtime           -> ApiCall; the synchronising calls also -> HostSync
//   cuda_sync                        -> enriches the HostSync of its runtime call, or a HostSync
//   user_annotation                  -> Range: Step (ProfilerStep#N), DataLoader, Annotation
//   gpu_user_annotation              -> Range GpuAnnotation
//   record_param_comms, and collective
//   kernels with "Collective name"   -> Collective, joined to its kernel's correlation
//   cpu_op / Operator                -> skipped, except ProfilerStep#N and DataLoader ranges
//                                       (2021 traces record them as operators); Range Operator
//                                       when the options ask for operators
//   python_function                  -> skipped (its dataloader __next__ frames are the
//                                       DataLoader ranges of last resort)
//   "[memory]" instants              -> MemorySample (totals) and Allocation (Bytes, Addr)
//   mtia_ccp_events                  -> KernelExec, Copy (dma_request), StreamWaitEvent
//                                       (event_wait); event_record markers skipped
// Correlation ids join each kernel, copy and memset to its launching call (launch times and
// thread), done in finish() once every event has been seen, since the order in a file is free.
//
// One thread (the importer's parsing thread). finish() throws KinetoParseError on malformed
// top-level metadata.
#pragma once

#include "advisor/import/kineto_event_parser.h"
#include "advisor/import/kineto_importer.h"
#include "profiler/model/trace.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuwise::advisor {

class KinetoProcessBuilder final : public KinetoEventSink {
public:
  explicit KinetoProcessBuilder(const KinetoImportOptions& options);

  bool wantsArgs(const KinetoEvent& event) const override;
  void onEvent(const KinetoEvent& event, const KinetoArgs* args) override;

  // `meta_json` is the top-level object with traceEvents replaced by null (TraceChunker::meta()).
  model::ProcessTrace finish(std::string_view meta_json);

private:
  struct PendingSync { // a cuda_sync or MTIA event_wait, joined in finish()
    model::HostSync sync;
    int64_t pid = 0, tid = 0;
  };

  void widenWallSpan(const KinetoEvent& e);
  void addMtiaDeviceEvent(const KinetoEvent& e, const KinetoArgs* a, uint32_t device,
                          uint32_t stream);
  void addKernel(const KinetoEvent& e, const KinetoArgs* a, uint32_t device, uint32_t stream);
  void addCopy(const KinetoEvent& e, const KinetoArgs* a, uint32_t device, uint32_t stream);
  void addMemset(const KinetoEvent& e, const KinetoArgs* a, uint32_t device, uint32_t stream);
  void addPendingSync(const KinetoEvent& e, const model::HostSync& sync);
  void addApiCall(const KinetoEvent& e, const KinetoArgs* a);
  void addCudaSync(const KinetoEvent& e, const KinetoArgs* a, uint32_t device, uint32_t stream);
  void addUserAnnotation(const KinetoEvent& e, const KinetoArgs* a);
  void addCpuOp(const KinetoEvent& e, const KinetoArgs* a);
  void addRange(const KinetoEvent& e, const KinetoArgs* a, model::RangeKind kind, int64_t step);
  void addMemory(const KinetoEvent& e, const KinetoArgs& a);
  void addMetadata(const KinetoEvent& e, const KinetoArgs& a);
  void countHostPid(const KinetoEvent& e);
  void joinCorrelations();
  void joinCollectives();
  void applyMetadata(std::string_view meta_json);
  void resolveDevices();

  KinetoImportOptions options_;
  model::ProcessTrace trace_;
  std::vector<PendingSync> pending_syncs_;
  // Collectives of record_param_comms operators by their External id, and the correlation of the
  // collective kernel each External id launched: joined in finish().
  std::unordered_map<int64_t, model::Collective> pending_collectives_;
  std::unordered_map<int64_t, uint64_t> collective_kernels_by_external_;
  std::vector<model::Range> python_dataloader_; // used only if no DataLoader range exists
  std::unordered_map<int64_t, std::string> process_names_;
  std::unordered_map<int64_t, std::string> process_labels_;
  std::vector<std::pair<int64_t, uint64_t>> host_pids_; // pid -> host-side events, few entries
  bool saw_dataloader_ = false;
  bool saw_mtia_ = false;
  bool amd_ = false;                // ROCm trace (roctracer / HIP versions in the metadata)
  bool identity_from_meta_ = false; // our exporter's process identity was in the file
  int64_t host_row_pid_ = 0;        // the pid of the host process's events
  model::TimeNs wall_min_ = 0, wall_max_ = 0;
  bool wall_set_ = false;
};

} // namespace gpuwise::advisor
