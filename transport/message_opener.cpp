// MessageOpener and peekRoute: a message's envelope checked, decompressed and verified once, and
// its routing header read (see codec.h). What is in the batch is message_decoder.cpp's.
#include "transport/codec.h"
#include "transport/envelope.h"
#include "transport/schema/gpuwise_generated.h"

namespace gpuwise::transport {
namespace {

using K = DecodeError::Kind;

Expected<Route, DecodeError> routeOf(const wire::Message& m) {
  if (const auto* h = m.body_as_Hello()) return Route{true, h->session_id(), h->pid()};
  if (const auto* b = m.body_as_Batch()) return Route{false, b->session_id(), b->pid()};
  return unexpected(DecodeError{K::Malformed, "message has no Hello or Batch body"});
}

} // namespace

struct MessageOpener::Impl {
  EnvelopeReader reader;
  const wire::Message* current = nullptr;
};

MessageOpener::MessageOpener() : impl_(std::make_unique<Impl>()) {}
MessageOpener::~MessageOpener() = default;

Expected<Route, DecodeError> MessageOpener::open(std::span<const uint8_t> message) {
  try {
    impl_->current = nullptr;
    auto opened = impl_->reader.open(message);
    if (auto* e = std::get_if<DecodeError>(&opened)) return unexpected(std::move(*e));
    const wire::Message* m = std::get<const wire::Message*>(opened);
    auto route = routeOf(*m);
    if (route) impl_->current = m;
    return route;
  } catch (const std::bad_alloc&) {
    return unexpected(DecodeError{K::TooLarge, "out of memory reading the message"});
  }
}

const wire::Message* MessageOpener::current() const {
  return impl_->current;
}

Expected<Route, DecodeError> peekRoute(std::span<const uint8_t> message) {
  try {
    // One reader per thread: its zstd context and scratch buffer are reused across messages.
    thread_local EnvelopeReader reader;
    auto opened = reader.open(message);
    if (auto* e = std::get_if<DecodeError>(&opened)) return unexpected(std::move(*e));
    return routeOf(*std::get<const wire::Message*>(opened));
  } catch (const std::bad_alloc&) {
    return unexpected(DecodeError{K::TooLarge, "out of memory reading the message"});
  }
}

const char* toString(DecodeError::Kind kind) {
  switch (kind) {
  case K::TooLarge: return "too large";
  case K::BadEnvelope: return "bad envelope";
  case K::UnsupportedVersion: return "unsupported version";
  case K::BadCompression: return "bad compression";
  case K::Malformed: return "malformed";
  case K::UnknownSession: return "unknown session";
  }
  return "unknown";
}

} // namespace gpuwise::transport
