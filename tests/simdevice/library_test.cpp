// The stand-in libraries look like the real ones to the loader: SONAMEs, the version node every
// export carries, RUNPATH $ORIGIN to their shared core, every entry point the shim hooks and the
// samples reference. And the samples carry no RPATH that would bypass LD_LIBRARY_PATH.
#include <dlfcn.h>

#include <cstdio>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/simdevice/test_support.h"

namespace {

std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    out.append(buffer, n);
  REQUIRE(pclose(pipe) == 0);
  return out;
}

// Defined dynamic symbols of a library: name -> version node (readelf --dyn-syms -W).
std::map<std::string, std::string> definedSymbols(const std::string& path) {
  std::map<std::string, std::string> symbols;
  std::istringstream lines(run("readelf --dyn-syms -W " + path));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string num, value, size, type, bind, vis, ndx, name;
    if (!(fields >> num >> value >> size >> type >> bind >> vis >> ndx >> name)) continue;
    if (ndx == "UND" || ndx == "ABS" || (type != "FUNC" && type != "OBJECT")) continue;
    const size_t at = name.find('@');
    const std::string version =
        at == std::string::npos ? "" : name.substr(name.find_last_of('@') + 1);
    symbols[name.substr(0, at)] = version;
  }
  return symbols;
}

#ifdef GWSIM_HAVE_SAMPLES
// Undefined symbols a program takes from libcudart.so.13.
std::set<std::string> cudartImports(const std::string& path) {
  std::set<std::string> names;
  std::istringstream lines(run("readelf --dyn-syms -W " + path));
  std::string line;
  while (std::getline(lines, line)) {
    const size_t at = line.find("@libcudart.so.13");
    if (at == std::string::npos || line.find(" UND ") == std::string::npos) continue;
    const size_t start = line.find_last_of(' ', at) + 1;
    names.insert(line.substr(start, at - start));
  }
  return names;
}
#endif

const std::string kCudart = gwsim_test::simdeviceDir() + "/libcudart.so.13";
const std::string kCupti = gwsim_test::simdeviceDir() + "/libcupti.so.13";

} // namespace

TEST_CASE("the stand-ins carry the real SONAMEs and find their core through $ORIGIN") {
  for (const auto& [path, soname] : {std::pair{kCudart, std::string("libcudart.so.13")},
                                     std::pair{kCupti, std::string("libcupti.so.13")}}) {
    const std::string dynamic = run("readelf -d " + path);
    CHECK(dynamic.find("Library soname: [" + soname + "]") != std::string::npos);
    CHECK(dynamic.find("Library runpath: [$ORIGIN]") != std::string::npos);
    CHECK(dynamic.find("libgwsim_core.so") != std::string::npos);
  }
}

TEST_CASE("NVML and cuBLAS stand-ins: real SONAMEs, cuBLAS exports under the real version nodes") {
  const std::string dir = gwsim_test::simdeviceDir();
  for (const auto& [file, soname] :
       {std::pair{std::string("libnvidia-ml.so.1"), std::string("libnvidia-ml.so.1")},
        std::pair{std::string("libcublas.so.13"), std::string("libcublas.so.13")},
        std::pair{std::string("libcublasLt.so.13"), std::string("libcublasLt.so.13")}}) {
    INFO(file);
    CHECK(run("readelf -d " + dir + "/" + file).find("Library soname: [" + soname + "]") !=
          std::string::npos);
  }
  const auto blas = definedSymbols(dir + "/libcublas.so.13");
  for (const char* name : {"cublasGemmEx", "cublasGemmStridedBatchedEx", "cublasSetMathMode"}) {
    INFO(name);
    REQUIRE(blas.count(name) == 1);
    CHECK(blas.at(name) == "libcublas.so.13");
  }
  const auto lt = definedSymbols(dir + "/libcublasLt.so.13");
  REQUIRE(lt.count("cublasLtMatmul") == 1);
  CHECK(lt.at("cublasLtMatmul") == "libcublasLt.so.13");
  const auto nvml = definedSymbols(dir + "/libnvidia-ml.so.1");
  for (const char* name :
       {"nvmlInit_v2", "nvmlDeviceGetHandleByUUID", "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetGpuInstanceProfileInfoV"}) {
    INFO(name);
    CHECK(nvml.count(name) == 1);
  }
}

TEST_CASE("every libcudart export is versioned libcudart.so.13 and the hooked entry points exist") {
  const auto symbols = definedSymbols(kCudart);
  for (const auto& [name, version] : symbols) {
    INFO(name);
    CHECK(version == "libcudart.so.13");
  }
  // Every runtime entry point the shim hooks, plus the nvcc registration and launch path.
  for (const char* name : {"__cudaRegisterFatBinary",
                           "__cudaRegisterFatBinaryEnd",
                           "__cudaUnregisterFatBinary",
                           "__cudaRegisterFunction",
                           "__cudaRegisterVar",
                           "__cudaInitModule",
                           "__cudaGetKernel",
                           "__cudaPushCallConfiguration",
                           "__cudaPopCallConfiguration",
                           "__cudaLaunchKernel",
                           "__cudaLaunchKernel_ptsz",
                           "cudaLaunchKernel",
                           "cudaLaunchKernel_ptsz",
                           "cudaLaunchKernelExC",
                           "cudaLaunchKernelExC_ptsz",
                           "cudaMemcpy",
                           "cudaMemcpyAsync",
                           "cudaMemcpy2D",
                           "cudaMemcpy2DAsync",
                           "cudaMemset",
                           "cudaMemsetAsync",
                           "cudaMalloc",
                           "cudaFree",
                           "cudaMallocHost",
                           "cudaFreeHost",
                           "cudaHostAlloc",
                           "cudaHostRegister",
                           "cudaHostUnregister",
                           "cudaMallocManaged",
                           "cudaMallocAsync",
                           "cudaFreeAsync",
                           "cudaDeviceSynchronize",
                           "cudaStreamSynchronize",
                           "cudaEventSynchronize",
                           "cudaStreamWaitEvent",
                           "cudaGraphLaunch",
                           "cudaStreamQuery",
                           "cudaEventQuery",
                           "cudaStreamCreate",
                           "cudaStreamDestroy",
                           "cudaEventCreate",
                           "cudaEventDestroy",
                           "cudaEventRecord",
                           "cudaEventElapsedTime",
                           "cudaGetDeviceCount",
                           "cudaGetDevice",
                           "cudaSetDevice",
                           "cudaGetDeviceProperties",
                           "cudaDeviceGetAttribute",
                           "cudaFuncGetAttributes",
                           "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                           "cudaPointerGetAttributes",
                           "cudaMemGetInfo",
                           "cudaGetLastError",
                           "cudaPeekAtLastError",
                           "cudaGetErrorString",
                           "cudaGetErrorName",
                           "cudaRuntimeGetVersion",
                           "cudaDriverGetVersion",
                           "cudaStreamBeginCapture",
                           "cudaStreamEndCapture",
                           "cudaGraphInstantiate",
                           "cudaGraphExecDestroy",
                           "cudaGraphDestroy",
                           "gwsimIsSimulated",
                           "gwsimSetKernelWork"}) {
    INFO(name);
    CHECK(symbols.count(name) == 1);
  }
}

TEST_CASE("every libcupti export is versioned libcupti.so.13 and a CUPTI client finds its API") {
  const auto symbols = definedSymbols(kCupti);
  REQUIRE_FALSE(symbols.empty());
  for (const auto& [name, version] : symbols) {
    INFO(name);
    CHECK(version == "libcupti.so.13");
  }
  for (const char* name : {"cuptiGetResultString",
                           "cuptiGetVersion",
                           "cuptiSubscribe",
                           "cuptiSubscribe_v2",
                           "cuptiUnsubscribe",
                           "cuptiEnableCallback",
                           "cuptiEnableDomain",
                           "cuptiActivityRegisterCallbacks",
                           "cuptiActivityEnable",
                           "cuptiActivityDisable",
                           "cuptiActivityFlushAll",
                           "cuptiActivityFlushPeriod",
                           "cuptiActivityGetNextRecord",
                           "cuptiActivityGetNumDroppedRecords",
                           "cuptiActivityRegisterTimestampCallback",
                           "cuptiActivityEnableRuntimeApi",
                           "cuptiActivityEnableDriverApi",
                           "cuptiActivityPushExternalCorrelationId",
                           "cuptiActivityPopExternalCorrelationId",
                           "cuptiGetTimestamp",
                           "cuptiGetDeviceId",
                           "cuptiGetContextId",
                           "cuptiGetStreamIdEx",
                           "cuptiActivitySetAttribute",
                           "cuptiActivityGetAttribute",
                           "cuptiGetLastError",
                           "cuptiFinalize"}) {
    INFO(name);
    CHECK(symbols.count(name) == 1);
  }
}

TEST_CASE("dlopen and dlvsym find the stand-in the way the shim's dlsym(RTLD_NEXT) would") {
  void* cudart = dlopen(kCudart.c_str(), RTLD_NOW | RTLD_GLOBAL);
  REQUIRE(cudart != nullptr);
  CHECK(dlvsym(cudart, "cudaMalloc", "libcudart.so.13") != nullptr);
  CHECK(dlvsym(cudart, "__cudaLaunchKernel", "libcudart.so.13") != nullptr);
  using IsSimulated = int (*)();
  auto is_simulated = reinterpret_cast<IsSimulated>(dlsym(cudart, "gwsimIsSimulated"));
  REQUIRE(is_simulated != nullptr);
  CHECK(is_simulated() == 1);
  void* cupti = dlopen(kCupti.c_str(), RTLD_NOW);
  REQUIRE(cupti != nullptr);
  CHECK(dlvsym(cupti, "cuptiActivityEnable", "libcupti.so.13") != nullptr);
  // The real library's name resolves to the stand-in once its folder is the library path's first.
  CHECK(dlsym(cupti, "cuptiGetTimestamp") != nullptr);
}

#ifdef GWSIM_HAVE_SAMPLES
TEST_CASE("samples carry no RPATH and take only entry points the stand-in defines") {
  const auto defined = definedSymbols(kCudart);
  for (const char* sample : {"pageable_copies", "fp32_gemm", "launch_bound", "input_stall",
                             "host_sync", "small_footprint", "healthy"}) {
    INFO(sample);
    const std::string path = gwsim_test::buildDir() + "/samples/" + sample;
    const std::string dynamic = run("readelf -d " + path);
    CHECK(dynamic.find("RPATH") == std::string::npos);
    CHECK(dynamic.find("RUNPATH") == std::string::npos);
    CHECK(dynamic.find("Shared library: [libcudart.so.13]") != std::string::npos);
    const auto imports = cudartImports(path);
    CHECK(imports.count("__cudaLaunchKernel") == 1); // the CUDA 13 <<<>>> path
    for (const std::string& name : imports) {
      INFO(name);
      CHECK(defined.count(name) == 1);
    }
  }
}
#endif
