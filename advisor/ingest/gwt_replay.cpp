#include "advisor/ingest/gwt_replay.h"

#include "transport/gwt_file.h"

namespace gpuwise::advisor {

bool replayGwt(const std::string& path, StreamRouter& router, std::string* error) {
  std::string read_error;
  bool ok = transport::readGwt(
      path, [&](std::span<const uint8_t> message) { router.route(message); }, &read_error);
  if (!ok) {
    *error = read_error.find(path) == std::string::npos ? path + ": " + read_error : read_error;
  }
  return ok;
}

} // namespace gpuwise::advisor
