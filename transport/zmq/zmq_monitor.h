// Reading a ZeroMQ socket monitor without blocking (internal to transport/zmq).
//
// zmq_socket_monitor publishes socket events on an inproc PAIR socket; libzmq's I/O thread sends
// them with a blocking send, so the monitor must be drained regularly (the drain thread calls
// takeReconnected() every cycle) and subscribes only to the two rare events we need.
#pragma once

#include <cstdint>

namespace gpuwise::transport {

struct MonitorCounts {
  uint64_t handshakes = 0;  // ZMQ_EVENT_HANDSHAKE_SUCCEEDED: a peer is connected and usable
  uint64_t disconnects = 0; // ZMQ_EVENT_DISCONNECTED
};

// Attaches a monitor to `socket` (both in `context`) and connects a PAIR reader to it. Returns the
// reader socket, or nullptr on failure (then nothing is attached).
void* attachMonitor(void* context, void* socket);
// Reads every pending event without blocking and adds it to `counts`.
void drainMonitor(void* reader, MonitorCounts& counts);
// Stops the monitor and closes the reader.
void detachMonitor(void* socket, void* reader);

} // namespace gpuwise::transport
