// PullReceiver: the advisor's PULL socket (see endpoints.h).
#include "transport/zmq/endpoints.h"

#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <sys/stat.h>

namespace gpuwise::transport {
namespace {

// Linger 0: an advisor that stops has nothing queued to deliver.
constexpr int kLingerMs = 0;

// Creates every missing directory of `dir` with mode 0700. False with errno set on failure.
bool makeDirectories(const std::string& dir) {
  if (dir.empty()) return true;
  struct stat st {};
  if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode) || (errno = ENOTDIR, false);
  const size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !makeDirectories(dir.substr(0, slash)))
    return false;
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  return chmod(dir.c_str(), 0700) == 0 || errno == EPERM;
}

// ZeroMQ reads "tcp://*:PORT" as every interface. The advisor takes events from processes on its
// own host (the pod's network namespace), so the wildcard means loopback here; listening on every
// interface takes the address spelled out: tcp://0.0.0.0:PORT (or [::]).
std::string narrowWildcard(const std::string& endpoint) {
  static const std::string kWildcard = "tcp://*:";
  if (endpoint.rfind(kWildcard, 0) == 0)
    return "tcp://127.0.0.1:" + endpoint.substr(kWildcard.size());
  return endpoint;
}

} // namespace

struct PullReceiver::Impl {
  void* context = nullptr;
  void* socket = nullptr;
  std::string endpoint;
  std::mutex mutex; // held by receive() and by close() while closing the socket
  std::atomic<bool> closed{false};

  void release() noexcept {
    if (closed.exchange(true)) return;
    if (context) zmq_ctx_shutdown(context); // wakes a receive() on another thread (ETERM)
    std::lock_guard lock(mutex); // std::terminate on a broken mutex: nothing sane is left then
    if (socket) zmq_close(socket);
    if (context) {
      while (zmq_ctx_term(context) != 0 && errno == EINTR) {
      }
    }
    socket = context = nullptr;
  }
};

PullReceiver::PullReceiver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PullReceiver::~PullReceiver() {
  close();
}

Expected<std::unique_ptr<PullReceiver>> PullReceiver::bind(const std::string& endpoint,
                                                           const Options& options) {
  try {
    return bindImpl(endpoint, options);
  } catch (...) {
    return unexpected("out of memory"); // short enough not to allocate
  }
}

Expected<std::unique_ptr<PullReceiver>> PullReceiver::bindImpl(const std::string& endpoint,
                                                               const Options& options) {
  auto impl = std::make_unique<Impl>();
  auto fail = [&](const std::string& what, int err) -> Expected<std::unique_ptr<PullReceiver>> {
    std::string why = endpoint + ": " + what + ": " + zmq_strerror(err);
    impl->release();
    return unexpected(std::move(why));
  };
  std::string ipc_path;
  if (endpoint.rfind("ipc://", 0) == 0 && endpoint.size() > 6 && endpoint[6] != '@' &&
      endpoint[6] != '*')
    ipc_path = endpoint.substr(6);
  if (!ipc_path.empty()) {
    const size_t slash = ipc_path.find_last_of('/');
    if (slash != std::string::npos && slash > 0 && !makeDirectories(ipc_path.substr(0, slash)))
      return fail("cannot create the socket's directory", errno);
  }
  impl->context = zmq_ctx_new();
  if (!impl->context) return fail("cannot create a ZeroMQ context", zmq_errno());
  zmq_ctx_set(impl->context, ZMQ_IO_THREADS, 1);
  impl->socket = zmq_socket(impl->context, ZMQ_PULL);
  if (!impl->socket) return fail("cannot create a PULL socket", zmq_errno());
  const int64_t max_size = static_cast<int64_t>(options.max_message_bytes);
  const int hwm = options.receive_hwm, linger = kLingerMs;
  if (zmq_setsockopt(impl->socket, ZMQ_MAXMSGSIZE, &max_size, sizeof max_size) != 0 ||
      zmq_setsockopt(impl->socket, ZMQ_RCVHWM, &hwm, sizeof hwm) != 0 ||
      zmq_setsockopt(impl->socket, ZMQ_LINGER, &linger, sizeof linger) != 0)
    return fail("cannot set socket options", zmq_errno());
  if (zmq_bind(impl->socket, narrowWildcard(endpoint).c_str()) != 0)
    return fail("cannot bind", zmq_errno());
  // libzmq creates the socket file with the process umask; narrow it to the owner.
  if (!ipc_path.empty() && chmod(ipc_path.c_str(), 0600) != 0)
    return fail("cannot restrict the socket file to its owner", errno);
  char last[1024] = {};
  size_t len = sizeof last;
  if (zmq_getsockopt(impl->socket, ZMQ_LAST_ENDPOINT, last, &len) == 0)
    impl->endpoint = last;
  else
    impl->endpoint = endpoint;
  return std::unique_ptr<PullReceiver>(new PullReceiver(std::move(impl)));
}

std::optional<std::vector<uint8_t>> PullReceiver::receive(std::chrono::milliseconds timeout,
                                                          int* source) {
  if (!impl_ || impl_->closed) return std::nullopt;
  try {
    std::lock_guard lock(impl_->mutex);
    if (impl_->closed || !impl_->socket) return std::nullopt;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      zmq_msg_t msg;
      zmq_msg_init(&msg);
      if (zmq_msg_recv(&msg, impl_->socket, ZMQ_DONTWAIT) >= 0) {
        const auto* data = static_cast<const uint8_t*>(zmq_msg_data(&msg));
        std::vector<uint8_t> out(data, data + zmq_msg_size(&msg));
        // ZMQ_SRCFD: deprecated for the Peer-Address property, which ipc:// leaves empty; the
        // descriptor tells connections apart on every transport libzmq 4.3 has.
        if (source) *source = zmq_msg_get(&msg, ZMQ_SRCFD);
        bool more = zmq_msg_more(&msg);
        zmq_msg_close(&msg);
        while (more) { // not ours: PUSH sends single frames; drop the rest of the message
          zmq_msg_init(&msg);
          more = zmq_msg_recv(&msg, impl_->socket, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&msg);
          zmq_msg_close(&msg);
        }
        return out;
      }
      zmq_msg_close(&msg);
      if (zmq_errno() != EAGAIN && zmq_errno() != EINTR) return std::nullopt; // ETERM: closed
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      zmq_pollitem_t item{impl_->socket, 0, ZMQ_POLLIN, 0};
      const int rc = zmq_poll(&item, 1, static_cast<long>(left.count()));
      if (rc < 0 && zmq_errno() != EINTR) return std::nullopt;
      if (rc == 0) return std::nullopt;
    }
  } catch (...) {
    return std::nullopt; // out of memory copying the message: it is lost
  }
}

std::string PullReceiver::endpoint() const {
  try {
    return impl_ ? impl_->endpoint : std::string();
  } catch (...) {
    return {};
  }
}

void PullReceiver::close() {
  if (impl_) impl_->release();
}

} // namespace gpuwise::transport
