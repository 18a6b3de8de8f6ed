#include "transport/zmq/zmq_monitor.h"

#include <zmq.h>

#include <cstring>

namespace gpuwise::transport {
namespace {
// Inproc names are per context and every endpoint owns its context, so one name serves all.
constexpr const char* kMonitorAddress = "inproc://gpuwise-monitor";
} // namespace

void* attachMonitor(void* context, void* socket) {
  if (zmq_socket_monitor(socket, kMonitorAddress,
                         ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED) != 0)
    return nullptr;
  void* reader = zmq_socket(context, ZMQ_PAIR);
  if (!reader) {
    zmq_socket_monitor(socket, nullptr, 0);
    return nullptr;
  }
  int linger = 0;
  zmq_setsockopt(reader, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_connect(reader, kMonitorAddress) != 0) {
    zmq_close(reader);
    zmq_socket_monitor(socket, nullptr, 0);
    return nullptr;
  }
  return reader;
}

void drainMonitor(void* reader, MonitorCounts& counts) {
  if (!reader) return;
  for (;;) {
    // Event message: frame 1 = u16 event id + u32 value, frame 2 = the endpoint address.
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, reader, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&frame);
      return;
    }
    uint16_t event = 0;
    if (zmq_msg_size(&frame) >= sizeof event)
      std::memcpy(&event, zmq_msg_data(&frame), sizeof event);
    bool more = zmq_msg_more(&frame);
    zmq_msg_close(&frame);
    while (more) { // the rest of this event is already queued with its first frame
      zmq_msg_init(&frame);
      if (zmq_msg_recv(&frame, reader, ZMQ_DONTWAIT) < 0)
        more = false;
      else
        more = zmq_msg_more(&frame);
      zmq_msg_close(&frame);
    }
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
      ++counts.handshakes;
    else if (event == ZMQ_EVENT_DISCONNECTED)
      ++counts.disconnects;
  }
}

void detachMonitor(void* socket, void* reader) {
  if (socket) zmq_socket_monitor(socket, nullptr, 0);
  if (reader) zmq_close(reader);
}

} // namespace gpuwise::transport
