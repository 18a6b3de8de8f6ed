// makeSink() over the transport: BatchEncoder for the wire format, PushSender for ZeroMQ. Compiled
// only when the gpuwise_transport and gpuwise_transport_zmq libraries exist (see CMakeLists.txt).
#include "interposer/batch_sink.h"
#include "transport/zmq/endpoints.h"

namespace gpuwise::interposer {

namespace {

SendStatus convert(transport::SendResult r) {
  switch (r) {
  case transport::SendResult::Sent: return SendStatus::Sent;
  case transport::SendResult::WouldBlock: return SendStatus::WouldBlock;
  case transport::SendResult::Error: break;
  }
  return SendStatus::Error;
}

class TransportSink final : public BatchSink {
public:
  TransportSink(std::unique_ptr<transport::PushSender> sender, const model::NameTable& names,
                uint64_t session_id, int64_t pid)
      : sender_(std::move(sender)), encoder_(names, session_id, pid) {}

  bool takeReconnected() override { return sender_->takeReconnected(); }

  SendStatus sendHello(const transport::Hello& hello) override {
    std::vector<uint8_t> message = transport::encodeHello(hello);
    SendStatus s = convert(sender_->trySend(message));
    if (s == SendStatus::Sent) encoder_.resetEpoch();
    return s;
  }

  SendStatus sendBatch(const transport::Batch& b) override {
    encoder_.addAll(b);
    encoder_.setShimCost(b.shim_cost);
    std::vector<uint8_t> message = encoder_.encode(b.events_dropped, b.final, b.sent_time);
    SendStatus s = convert(sender_->trySend(message));
    encoder_.confirm(s == SendStatus::Sent);
    return s;
  }

  void close(std::chrono::milliseconds) override { sender_->close(); }

private:
  std::unique_ptr<transport::PushSender> sender_;
  transport::BatchEncoder encoder_;
};

} // namespace

Expected<std::unique_ptr<BatchSink>> makeSink(const std::string& endpoint,
                                              const model::NameTable& names, uint64_t session_id,
                                              int64_t pid, int linger_ms) {
  if (endpoint.rfind("null:", 0) == 0) return std::make_unique<NullSink>();
  transport::PushSender::Options options;
  options.linger_ms = linger_ms;
  auto sender = transport::PushSender::connect(endpoint, options);
  if (!sender) return unexpected(std::move(sender.error()));
  return std::make_unique<TransportSink>(std::move(*sender), names, session_id, pid);
}

} // namespace gpuwise::interposer
