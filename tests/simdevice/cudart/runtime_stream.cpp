// Stand-in libcudart.so.13: streams, events, synchronisation, stream capture and graphs.
// Synchronising calls block the calling thread until the virtual timeline reaches the awaited
// work's end (sleeping most of the wait, spinning the last microseconds).
#include "tests/simdevice/cudart/runtime_common.h"

using namespace gpuwise::sim;

// ---- streams ----

GWSIM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  GWSIM_GUARD_BEGIN
  cudaStreamCreate_v3020_params params{pStream};
  ApiScope api(GWSIM_CBID(cudaStreamCreate_v3020), "cudaStreamCreate", &params);
  return api.finish(api.sim().streamCreate(pStream, cudaStreamDefault, 0));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaStreamCreateWithFlags_v5000_params params{pStream, flags};
  ApiScope api(GWSIM_CBID(cudaStreamCreateWithFlags_v5000), "cudaStreamCreateWithFlags", &params);
  return api.finish(api.sim().streamCreate(pStream, flags, 0));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags,
                                                      int priority) {
  GWSIM_GUARD_BEGIN
  cudaStreamCreateWithPriority_v5050_params params{pStream, flags, priority};
  ApiScope api(GWSIM_CBID(cudaStreamCreateWithPriority_v5050), "cudaStreamCreateWithPriority",
               &params);
  return api.finish(api.sim().streamCreate(pStream, flags, priority));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaStreamDestroy_v5050_params params{stream};
  ApiScope api(GWSIM_CBID(cudaStreamDestroy_v5050), "cudaStreamDestroy", &params);
  return api.finish(api.sim().streamDestroy(stream));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority,
                                                          int* greatestPriority) {
  GWSIM_GUARD_BEGIN
  cudaDeviceGetStreamPriorityRange_v5050_params params{leastPriority, greatestPriority};
  ApiScope api(GWSIM_CBID(cudaDeviceGetStreamPriorityRange_v5050),
               "cudaDeviceGetStreamPriorityRange", &params);
  if (leastPriority != nullptr) *leastPriority = 0;
  if (greatestPriority != nullptr) *greatestPriority = -5;
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  GWSIM_GUARD_BEGIN
  cudaStreamGetPriority_v5050_params params{hStream, priority};
  ApiScope api(GWSIM_CBID(cudaStreamGetPriority_v5050), "cudaStreamGetPriority", &params);
  StreamState info;
  if (priority == nullptr) return api.finish(cudaErrorInvalidValue);
  if (!api.sim().streamInfo(hStream, false, &info))
    return api.finish(cudaErrorInvalidResourceHandle);
  *priority = info.priority;
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags) {
  GWSIM_GUARD_BEGIN
  cudaStreamGetFlags_v5050_params params{hStream, flags};
  ApiScope api(GWSIM_CBID(cudaStreamGetFlags_v5050), "cudaStreamGetFlags", &params);
  StreamState info;
  if (flags == nullptr) return api.finish(cudaErrorInvalidValue);
  if (!api.sim().streamInfo(hStream, false, &info))
    return api.finish(cudaErrorInvalidResourceHandle);
  *flags = info.flags;
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long* streamId) {
  GWSIM_GUARD_BEGIN
  cudaStreamGetId_v12000_params params{hStream, streamId};
  ApiScope api(GWSIM_CBID(cudaStreamGetId_v12000), "cudaStreamGetId", &params);
  StreamState info;
  if (streamId == nullptr) return api.finish(cudaErrorInvalidValue);
  if (!api.sim().streamInfo(hStream, false, &info))
    return api.finish(cudaErrorInvalidResourceHandle);
  *streamId = info.id; // the id CUPTI reports for the stream
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaStreamQuery_v3020_params params{stream};
  ApiScope api(GWSIM_CBID(cudaStreamQuery_v3020), "cudaStreamQuery", &params);
  return api.finish(api.sim().streamQuery(stream, false));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaStreamQuery_ptsz_v7000_params params{stream};
  ApiScope api(GWSIM_CBID(cudaStreamQuery_ptsz_v7000), "cudaStreamQuery_ptsz", &params);
  return api.finish(api.sim().streamQuery(stream, true));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaStreamSynchronize_v3020_params params{stream};
  ApiScope api(GWSIM_CBID(cudaStreamSynchronize_v3020), "cudaStreamSynchronize", &params, nullptr,
               kCuStreamSynchronize);
  return api.finish(api.sim().streamSynchronize(stream, false, api.call()));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaStreamSynchronize_ptsz_v7000_params params{stream};
  ApiScope api(GWSIM_CBID(cudaStreamSynchronize_ptsz_v7000), "cudaStreamSynchronize_ptsz", &params,
               nullptr, kCuStreamSynchronize);
  return api.finish(api.sim().streamSynchronize(stream, true, api.call()));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                             unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaStreamWaitEvent_v3020_params params{stream, event, flags};
  ApiScope api(GWSIM_CBID(cudaStreamWaitEvent_v3020), "cudaStreamWaitEvent", &params, nullptr,
               kCuStreamWaitEvent);
  return api.finish(api.sim().streamWaitEvent(stream, event, false, api.call()));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                                  unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaStreamWaitEvent_ptsz_v7000_params params{stream, event, flags};
  ApiScope api(GWSIM_CBID(cudaStreamWaitEvent_ptsz_v7000), "cudaStreamWaitEvent_ptsz", &params,
               nullptr, kCuStreamWaitEvent);
  return api.finish(api.sim().streamWaitEvent(stream, event, true, api.call()));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaDeviceSynchronize(void) {
  GWSIM_GUARD_BEGIN
  ApiScope api(GWSIM_CBID(cudaDeviceSynchronize_v3020), "cudaDeviceSynchronize", nullptr, nullptr,
               kCuCtxSynchronize);
  return api.finish(api.sim().deviceSynchronize(api.call()));
  GWSIM_GUARD_END
}

// ---- events ----

GWSIM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t* event) {
  GWSIM_GUARD_BEGIN
  cudaEventCreate_v3020_params params{event};
  ApiScope api(GWSIM_CBID(cudaEventCreate_v3020), "cudaEventCreate", &params);
  return api.finish(api.sim().eventCreate(event, cudaEventDefault));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaEventCreateWithFlags_v3020_params params{event, flags};
  ApiScope api(GWSIM_CBID(cudaEventCreateWithFlags_v3020), "cudaEventCreateWithFlags", &params);
  return api.finish(api.sim().eventCreate(event, flags));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event) {
  GWSIM_GUARD_BEGIN
  cudaEventDestroy_v3020_params params{event};
  ApiScope api(GWSIM_CBID(cudaEventDestroy_v3020), "cudaEventDestroy", &params);
  return api.finish(api.sim().eventDestroy(event));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaEventRecord_v3020_params params{event, stream};
  ApiScope api(GWSIM_CBID(cudaEventRecord_v3020), "cudaEventRecord", &params, nullptr,
               kCuEventRecord);
  return api.finish(api.sim().eventRecord(event, stream, false));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaEventRecord_ptsz_v7000_params params{event, stream};
  ApiScope api(GWSIM_CBID(cudaEventRecord_ptsz_v7000), "cudaEventRecord_ptsz", &params, nullptr,
               kCuEventRecord);
  return api.finish(api.sim().eventRecord(event, stream, true));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                                  unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaEventRecordWithFlags_v11010_params params{event, stream, flags};
  ApiScope api(GWSIM_CBID(cudaEventRecordWithFlags_v11010), "cudaEventRecordWithFlags", &params,
               nullptr, kCuEventRecord);
  return api.finish(api.sim().eventRecord(event, stream, false));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                       unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaEventRecordWithFlags_ptsz_v11010_params params{event, stream, flags};
  ApiScope api(GWSIM_CBID(cudaEventRecordWithFlags_ptsz_v11010), "cudaEventRecordWithFlags_ptsz",
               &params, nullptr, kCuEventRecord);
  return api.finish(api.sim().eventRecord(event, stream, true));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event) {
  GWSIM_GUARD_BEGIN
  cudaEventQuery_v3020_params params{event};
  ApiScope api(GWSIM_CBID(cudaEventQuery_v3020), "cudaEventQuery", &params);
  return api.finish(api.sim().eventQuery(event));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  GWSIM_GUARD_BEGIN
  cudaEventSynchronize_v3020_params params{event};
  ApiScope api(GWSIM_CBID(cudaEventSynchronize_v3020), "cudaEventSynchronize", &params, nullptr,
               kCuEventSynchronize);
  return api.finish(api.sim().eventSynchronize(event, api.call()));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  GWSIM_GUARD_BEGIN
  cudaEventElapsedTime_v12080_params params{ms, start, end};
  ApiScope api(GWSIM_CBID(cudaEventElapsedTime_v12080), "cudaEventElapsedTime", &params);
  return api.finish(api.sim().eventElapsedTime(ms, start, end));
  GWSIM_GUARD_END
}

// ---- stream capture and graphs ----

GWSIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  GWSIM_GUARD_BEGIN
  cudaStreamBeginCapture_v10000_params params{stream, mode};
  ApiScope api(GWSIM_CBID(cudaStreamBeginCapture_v10000), "cudaStreamBeginCapture", &params);
  return api.finish(api.sim().beginCapture(stream, false));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
                                                     cudaStreamCaptureMode mode) {
  GWSIM_GUARD_BEGIN
  cudaStreamBeginCapture_ptsz_v10000_params params{stream, mode};
  ApiScope api(GWSIM_CBID(cudaStreamBeginCapture_ptsz_v10000), "cudaStreamBeginCapture_ptsz",
               &params);
  return api.finish(api.sim().beginCapture(stream, true));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  GWSIM_GUARD_BEGIN
  cudaStreamEndCapture_v10000_params params{stream, pGraph};
  ApiScope api(GWSIM_CBID(cudaStreamEndCapture_v10000), "cudaStreamEndCapture", &params);
  return api.finish(api.sim().endCapture(stream, false, pGraph));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* pGraph) {
  GWSIM_GUARD_BEGIN
  cudaStreamEndCapture_ptsz_v10000_params params{stream, pGraph};
  ApiScope api(GWSIM_CBID(cudaStreamEndCapture_ptsz_v10000), "cudaStreamEndCapture_ptsz", &params);
  return api.finish(api.sim().endCapture(stream, true, pGraph));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                               cudaStreamCaptureStatus* status) {
  GWSIM_GUARD_BEGIN
  cudaStreamIsCapturing_v10000_params params{stream, status};
  ApiScope api(GWSIM_CBID(cudaStreamIsCapturing_v10000), "cudaStreamIsCapturing", &params);
  return api.finish(api.sim().captureStatus(stream, false, status));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                                    cudaStreamCaptureStatus* status) {
  GWSIM_GUARD_BEGIN
  cudaStreamIsCapturing_ptsz_v10000_params params{stream, status};
  ApiScope api(GWSIM_CBID(cudaStreamIsCapturing_ptsz_v10000), "cudaStreamIsCapturing_ptsz",
               &params);
  return api.finish(api.sim().captureStatus(stream, true, status));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  GWSIM_GUARD_BEGIN
  cudaThreadExchangeStreamCaptureMode_v10010_params params{mode};
  ApiScope api(GWSIM_CBID(cudaThreadExchangeStreamCaptureMode_v10010),
               "cudaThreadExchangeStreamCaptureMode", &params);
  if (mode == nullptr) return api.finish(cudaErrorInvalidValue);
  thread_local cudaStreamCaptureMode current = cudaStreamCaptureModeGlobal;
  std::swap(current, *mode);
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                              unsigned long long flags) {
  GWSIM_GUARD_BEGIN
  cudaGraphInstantiate_v12000_params params{pGraphExec, graph, flags};
  ApiScope api(GWSIM_CBID(cudaGraphInstantiate_v12000), "cudaGraphInstantiate", &params);
  return api.finish(api.sim().graphInstantiate(pGraphExec, graph));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec,
                                                       cudaGraph_t graph,
                                                       unsigned long long flags) {
  GWSIM_GUARD_BEGIN
  cudaGraphInstantiateWithFlags_v11040_params params{pGraphExec, graph, flags};
  ApiScope api(GWSIM_CBID(cudaGraphInstantiateWithFlags_v11040), "cudaGraphInstantiateWithFlags",
               &params);
  return api.finish(api.sim().graphInstantiate(pGraphExec, graph));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaGraphLaunch_v10000_params params{graphExec, stream};
  ApiScope api(GWSIM_CBID(cudaGraphLaunch_v10000), "cudaGraphLaunch", &params, nullptr,
               kCuGraphLaunch);
  const cudaError_t err = api.sim().graphLaunch(graphExec, stream, false, api.call());
  hostCost(api, api.sim().config().launch_host_ns);
  return api.finish(err);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaGraphLaunch_ptsz_v10000_params params{graphExec, stream};
  ApiScope api(GWSIM_CBID(cudaGraphLaunch_ptsz_v10000), "cudaGraphLaunch_ptsz", &params, nullptr,
               kCuGraphLaunch);
  const cudaError_t err = api.sim().graphLaunch(graphExec, stream, true, api.call());
  hostCost(api, api.sim().config().launch_host_ns);
  return api.finish(err);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  GWSIM_GUARD_BEGIN
  cudaGraphExecDestroy_v10000_params params{graphExec};
  ApiScope api(GWSIM_CBID(cudaGraphExecDestroy_v10000), "cudaGraphExecDestroy", &params);
  return api.finish(api.sim().graphExecDestroy(graphExec));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  GWSIM_GUARD_BEGIN
  cudaGraphDestroy_v10000_params params{graph};
  ApiScope api(GWSIM_CBID(cudaGraphDestroy_v10000), "cudaGraphDestroy", &params);
  return api.finish(api.sim().graphDestroy(graph));
  GWSIM_GUARD_END
}
