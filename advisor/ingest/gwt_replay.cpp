#include "advisor/ingest/gwt_replay.h"

#include "transport/gwt_file.h"

namespace gpuwise::advisor {
namespace {

// Routes each record and remembers the first one the router rejected, for the error.
class Replay {
public:
  Replay(const std::string& name, StreamRouter& router) : name_(name), router_(router) {}

  void route(std::span<const uint8_t> message) {
    const uint64_t rejected_before = router_.progress().rejected;
    router_.route(message);
    ++stats_.records;
    if (router_.progress().rejected != rejected_before) {
      if (stats_.rejected++ == 0) first_rejected_offset_ = offset_;
    }
    offset_ += 4 + message.size();
  }

  bool finish(const Status& read, std::string* error, GwtReplayStats* stats) {
    if (stats) *stats = stats_;
    if (!read) {
      const std::string& why = read.error().message;
      *error = why.find(name_) == std::string::npos ? name_ + ": " + why : why;
      return false;
    }
    if (stats_.records > 0 && stats_.rejected == stats_.records) {
      // The reasons counted so far are this file's (a fresh router) or include them.
      std::string reasons;
      for (const auto& [reason, n] : router_.rejectedByReason())
        reasons += (reasons.empty() ? "" : ", ") + reason + " " + std::to_string(n);
      *error = name_ + ": not a gpuwise recording: " +
               (stats_.records == 1 ? std::string("its one record is")
                                    : "all " + std::to_string(stats_.records) + " records are") +
               " rejected by the decoder (the first at offset " +
               std::to_string(first_rejected_offset_) + "; " + reasons + ")";
      return false;
    }
    return true;
  }

private:
  const std::string& name_;
  StreamRouter& router_;
  GwtReplayStats stats_;
  uint64_t offset_ = sizeof transport::kGwtMagic;
  uint64_t first_rejected_offset_ = 0;
};

} // namespace

bool replayGwt(const std::string& path, StreamRouter& router, std::string* error,
               GwtReplayStats* stats) {
  Replay replay(path, router);
  const Status read =
      transport::readGwt(path, [&](std::span<const uint8_t> message) { replay.route(message); });
  return replay.finish(read, error, stats);
}

bool replayGwtBytes(std::span<const uint8_t> bytes, const std::string& name, StreamRouter& router,
                    std::string* error, GwtReplayStats* stats) {
  Replay replay(name, router);
  const Status read = transport::readGwtBytes(
      bytes, name, [&](std::span<const uint8_t> message) { replay.route(message); });
  return replay.finish(read, error, stats);
}

} // namespace gpuwise::advisor
