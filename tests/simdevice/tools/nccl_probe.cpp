// simdevice_nccl_probe: one rank of a job the stand-in NCCL's tests start as several processes.
//
//   simdevice_nccl_probe RANK NRANKS ID_FILE MODE [DELAY_MS] [COUNT]
//
// Rank 0 makes the unique id and publishes it in ID_FILE (written aside, then renamed); the others
// wait for the file. Every rank joins with ncclCommInitRank and prints `probe init=N`; then, by
// MODE:
//   allreduce  sleeps DELAY_MS (after the join: the ranks leave it together), all-reduces COUNT
//              floats (default 4M) on a stream of its own, synchronises the stream
//   skip       joins but never reaches the collective (a missing rank), then exits
//   chain      as allreduce, then all-gather, reduce-scatter and broadcast on the same stream,
//              issued back to back (no synchronisation between them)
//   sendrecv   in a group, sends COUNT floats to the next rank and receives from the previous
// and prints one `probe kernel=I name=KERNEL start=NS end=NS` line per NCCL kernel, then `probe
// rank=R allreduce=N async=N issued=NS start=NS end=NS name=KERNEL sync_ms=MS`: the NCCL results,
// when the host issued the collective (CLOCK_MONOTONIC), the collective kernel's CUPTI start and
// end, and how long the stream synchronisation took. Exits 0 when init succeeded.
//
//   simdevice_nccl_probe initall NDEV   one process, ncclCommInitAll over NDEV devices
//                                       (GWSIM_DEVICE_COUNT), an all-reduce on each, then the
//                                       kernel lines and `probe initall=N allreduce=N ranks=...`
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <nccl.h>

#include "tests/simdevice/cupti_recorder.h"

namespace {

bool shareId(int rank, const std::string& path, ncclUniqueId* id) {
  if (rank == 0) {
    if (ncclGetUniqueId(id) != ncclSuccess) return false;
    const std::string aside = path + ".tmp";
    std::ofstream(aside, std::ios::binary).write(id->internal, sizeof id->internal);
    return std::rename(aside.c_str(), path.c_str()) == 0;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && st.st_size == sizeof id->internal) {
      std::ifstream(path, std::ios::binary).read(id->internal, sizeof id->internal);
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

void printNcclKernels(gwsim_test::CuptiRecorder& recorder) {
  const auto all = recorder.flush(true);
  int index = 0;
  for (const auto& k :
       recorder.records<CUpti_ActivityKernel10>(all, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
    if (std::strstr(k.name, "ncclDevKernel_") == nullptr) continue;
    std::printf("probe kernel=%d name=%s start=%llu end=%llu device=%u\n", index++, k.name,
                (unsigned long long)k.start, (unsigned long long)k.end, k.deviceId);
  }
}

// ncclCommInitAll: the ranks of one process, one per device, each all-reducing on its own stream.
int initAll(int ndev) {
  auto& recorder = gwsim_test::CuptiRecorder::instance();
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::vector<ncclComm_t> comms(size_t(ndev), nullptr);
  const ncclResult_t init = ncclCommInitAll(comms.data(), ndev, nullptr);
  ncclResult_t reduce = ncclSuccess;
  std::vector<cudaStream_t> streams(static_cast<size_t>(ndev), nullptr);
  std::string ranks;
  for (int d = 0; d < ndev && init == ncclSuccess; ++d) {
    int rank = -1, device = -1;
    ncclCommUserRank(comms[size_t(d)], &rank);
    ncclCommCuDevice(comms[size_t(d)], &device);
    ranks += (d ? "," : "") + std::to_string(rank) + "@" + std::to_string(device);
    cudaSetDevice(d);
    cudaStreamCreateWithFlags(&streams[size_t(d)], cudaStreamNonBlocking);
    const ncclResult_t r = ncclAllReduce(nullptr, nullptr, 1 << 20, ncclFloat32, ncclSum,
                                         comms[size_t(d)], streams[size_t(d)]);
    if (reduce == ncclSuccess) reduce = r;
  }
  for (int d = 0; d < ndev && init == ncclSuccess; ++d)
    cudaStreamSynchronize(streams[size_t(d)]);
  printNcclKernels(recorder);
  std::printf("probe initall=%d allreduce=%d ranks=%s\n", int(init), int(reduce), ranks.c_str());
  return init == ncclSuccess && reduce == ncclSuccess ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "initall") return initAll(std::atoi(argv[2]));
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s RANK NRANKS ID_FILE allreduce|skip [DELAY_MS] [COUNT]\n",
                 argv[0]);
    return 2;
  }
  const int rank = std::atoi(argv[1]), nranks = std::atoi(argv[2]);
  const std::string id_file = argv[3], mode = argv[4];
  const int delay_ms = argc > 5 ? std::atoi(argv[5]) : 0;
  const size_t count = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : size_t(4) << 20;
  auto& recorder = gwsim_test::CuptiRecorder::instance();
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

  ncclUniqueId id{};
  if (!shareId(rank, id_file, &id)) {
    std::printf("probe rank=%d id=missing\n", rank);
    return 1;
  }
  cudaSetDevice(0);
  cudaStream_t stream{};
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  ncclComm_t comm = nullptr;
  const ncclResult_t init = ncclCommInitRank(&comm, nranks, id, rank);
  std::printf("probe init=%d\n", int(init));
  if (init != ncclSuccess) return 1;
  if (mode == "skip") return 0;

  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  void* buffer = nullptr;
  cudaMalloc(&buffer, count * sizeof(float));
  const uint64_t issued = gwsim_test::monotonicNs();
  ncclResult_t reduce = ncclSuccess;
  auto keep = [&reduce](ncclResult_t r) {
    if (reduce == ncclSuccess) reduce = r;
  };
  if (mode == "sendrecv") {
    keep(ncclGroupStart());
    keep(ncclSend(buffer, count, ncclFloat32, (rank + 1) % nranks, comm, stream));
    keep(ncclRecv(buffer, count, ncclFloat32, (rank + nranks - 1) % nranks, comm, stream));
    keep(ncclGroupEnd());
  } else {
    keep(ncclAllReduce(buffer, buffer, count, ncclFloat32, ncclSum, comm, stream));
  }
  if (mode == "chain") {
    keep(ncclAllGather(buffer, buffer, count / size_t(nranks), ncclBfloat16, comm, stream));
    keep(ncclReduceScatter(buffer, buffer, count / size_t(nranks), ncclFloat32, ncclMax, comm,
                           stream));
    keep(ncclBroadcast(buffer, buffer, count, ncclInt8, 0, comm, stream));
  }
  const uint64_t sync_start = gwsim_test::monotonicNs();
  cudaStreamSynchronize(stream);
  const double sync_ms = double(gwsim_test::monotonicNs() - sync_start) / 1e6;
  ncclResult_t async = ncclSuccess;
  ncclCommGetAsyncError(comm, &async);

  uint64_t start = 0, end = 0;
  std::string name = "-";
  const auto all = recorder.flush(true);
  int index = 0;
  for (const auto& k :
       recorder.records<CUpti_ActivityKernel10>(all, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
    if (std::strstr(k.name, "ncclDevKernel_") == nullptr) continue;
    start = k.start;
    end = k.end;
    name = k.name;
    std::printf("probe kernel=%d name=%s start=%llu end=%llu\n", index++, k.name,
                (unsigned long long)k.start, (unsigned long long)k.end);
  }
  std::printf("probe rank=%d allreduce=%d async=%d issued=%llu start=%llu end=%llu name=%s "
              "sync_ms=%.3f\n",
              rank, int(reduce), int(async), (unsigned long long)issued, (unsigned long long)start,
              (unsigned long long)end, name.c_str(), sync_ms);
  ncclCommDestroy(comm);
  return 0;
}
