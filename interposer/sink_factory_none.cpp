// makeSink() for builds without the transport libraries: only "null:" works, anything else is
// reported (once, by the caller) and the shim turns itself off.
#include "interposer/batch_sink.h"

namespace gpuwise::interposer {

Expected<std::unique_ptr<BatchSink>> makeSink(const std::string& endpoint,
                                              const model::NameTable&, uint64_t, int64_t, int) {
  if (endpoint == "null:" || endpoint.rfind("null:", 0) == 0) return std::make_unique<NullSink>();
  return unexpected("this libgpuwise.so was built without the transport; cannot send to " +
                    endpoint);
}

} // namespace gpuwise::interposer
