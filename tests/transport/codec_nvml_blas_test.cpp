// The NVML and cuBLAS additions to protocol 1: Device.uuid, DeviceSample and BlasCall records
// round-trip exactly; a batch without them (an older sender) decodes with empty vectors.
#include "tests/transport/record_fixtures.h"
#include "transport/codec.h"

using namespace gpuwise;
using namespace gpuwise::transport;
using namespace gpuwise::transport::testing;

TEST_CASE("Hello carries the device UUID; an empty one stays empty") {
  Hello h;
  h.session_id = 5;
  h.process = sampleProcess();
  h.devices = {sampleDevice(0), sampleDevice(1)};
  h.devices[1].uuid = "MIG-11223344-5566-7788-99aa-bbccddeeff00";
  model::NameTable names;
  MessageDecoder dec(names);
  Hello got = expectValue<Hello>(dec.decode(encodeHello(h)));
  REQUIRE(got.devices.size() == 2);
  CHECK(got.devices[0].uuid.empty());
  CHECK(got.devices[1].uuid == "MIG-11223344-5566-7788-99aa-bbccddeeff00");
  CHECK(got.devices[1].mig_profile == "1g.18gb");
}

TEST_CASE("Hello carries the node, the NVML index and the MIG GPU instance; unknown stays -1") {
  Hello h;
  h.session_id = 6;
  h.process = sampleProcess();
  h.process.node = "gpu-node-7";
  h.devices = {sampleDevice(0), sampleDevice(1)};
  h.devices[0].nvml_index = 5; // CUDA device 0 is the node's GPU 5 (CUDA_VISIBLE_DEVICES=5)
  h.devices[1].nvml_index = 2;
  h.devices[1].gpu_instance = 9;
  model::NameTable names;
  MessageDecoder dec(names);
  Hello got = expectValue<Hello>(dec.decode(encodeHello(h)));
  CHECK(got.process.node == "gpu-node-7");
  REQUIRE(got.devices.size() == 2);
  CHECK(got.devices[0].nvml_index == 5);
  CHECK(got.devices[0].gpu_instance == -1);
  CHECK(got.devices[1].nvml_index == 2);
  CHECK(got.devices[1].gpu_instance == 9);

  h.process.node.clear();
  h.devices = {sampleDevice(0)}; // no NVML: -1
  got = expectValue<Hello>(dec.decode(encodeHello(h)));
  CHECK(got.process.node.empty());
  CHECK(got.devices[0].nvml_index == -1);
}

TEST_CASE("DeviceSample and BlasCall records round-trip every field") {
  model::NameTable sender;
  BatchEncoder enc(sender, 9, 4242);
  std::vector<model::DeviceSample> samples;
  std::vector<model::BlasCall> calls;
  for (int i = 0; i < 50; ++i) {
    model::DeviceSample s;
    s.time = 1'000'000'000'000 + i * 1'000'000'000ll;
    s.device = uint32_t(i % 3);
    s.process_used_bytes = i % 4 == 0 ? -1 : (int64_t(i) << 30);
    s.device_used_bytes = int64_t(i + 7) << 30;
    s.device_total_bytes = 150'150'000'000ll;
    s.gpu_utilization = i % 5 == 0 ? -1 : i;
    s.memory_utilization = i % 7;
    samples.push_back(s);
    model::BlasCall c;
    c.start = 2'000'000'000'000 + i * 1000;
    c.end = c.start + 700;
    c.thread = 77 + uint32_t(i);
    c.device = uint32_t(i % 2);
    c.stream = uint32_t(i % 4);
    c.api = model::BlasApi(1 + i % 3);
    c.a_type = i % 2 ? 2 : 14; // CUDA_R_16F / CUDA_R_16BF
    c.b_type = c.a_type;
    c.c_type = 0; // CUDA_R_32F
    c.compute_type = i % 3 ? 68 : 77;
    c.scale_type = i % 2 ? -1 : 0;
    c.math_mode = i % 4 == 0 ? -1 : 3;
    c.status = i % 9 == 0 ? 7 : 0;
    c.m = 4096 + i;
    c.n = int64_t(1) << 33; // beyond 32 bits (the _64 entry points)
    c.k = 1024;
    c.batch = 1 + i;
    calls.push_back(c);
  }
  for (size_t i = 0; i < samples.size(); ++i) {
    enc.add(samples[i]);
    enc.add(calls[i]);
  }
  CHECK(enc.pendingEvents() == 100);
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  Batch b = expectValue<Batch>(dec.decode(enc.encode(0, false, 1)));
  CHECK(b.eventCount() == 100);
  REQUIRE(b.device_samples.size() == samples.size());
  REQUIRE(b.blas_calls.size() == calls.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto &a = samples[i], &g = b.device_samples[i];
    INFO("sample " << i);
    CHECK(std::tie(a.time, a.device, a.process_used_bytes, a.device_used_bytes,
                   a.device_total_bytes, a.gpu_utilization, a.memory_utilization) ==
          std::tie(g.time, g.device, g.process_used_bytes, g.device_used_bytes,
                   g.device_total_bytes, g.gpu_utilization, g.memory_utilization));
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto &a = calls[i], &g = b.blas_calls[i];
    INFO("call " << i);
    CHECK(std::tie(a.start, a.end, a.thread, a.device, a.stream, a.api, a.a_type, a.b_type,
                   a.c_type, a.compute_type, a.scale_type, a.math_mode, a.status, a.m, a.n, a.k,
                   a.batch) == std::tie(g.start, g.end, g.thread, g.device, g.stream, g.api,
                                        g.a_type, g.b_type, g.c_type, g.compute_type, g.scale_type,
                                        g.math_mode, g.status, g.m, g.n, g.k, g.batch));
  }
}

TEST_CASE("a batch without the new vectors decodes with them empty") {
  model::NameTable sender;
  BatchEncoder enc(sender, 9, 1);
  model::Allocation a;
  a.time = 5;
  a.bytes = 10;
  enc.add(a);
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  Batch b = expectValue<Batch>(dec.decode(enc.encode(0, false, 1)));
  CHECK(b.allocations.size() == 1);
  CHECK(b.device_samples.empty());
  CHECK(b.blas_calls.empty());
}
