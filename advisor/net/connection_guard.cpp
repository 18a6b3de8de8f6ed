#include "advisor/net/connection_guard.h"

#include <algorithm>
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>

namespace gpuwise::advisor {

using Clock = std::chrono::steady_clock;

namespace {

// A thread left without work this long ends: after a burst of connections the threads go too.
constexpr auto kIdleThreadLifetime = std::chrono::seconds(30);
constexpr auto kRefusalLogInterval = std::chrono::seconds(10);

} // namespace

std::string peerAddress(socket_t sock) {
  sockaddr_storage addr{};
  socklen_t length = sizeof addr;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &length) != 0) return "";
  char host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&addr), length, host, sizeof host, nullptr, 0,
                    NI_NUMERICHOST) != 0)
    return "";
  return host;
}

ConnectionLimits ConnectionGuard::withinDescriptorLimit(ConnectionLimits limits) {
  // Beyond the process's descriptor limit accept() fails and every client waits alike; below it
  // the caps decide who waits. Room is kept for the listener, logs, the ingest's sockets.
  constexpr size_t kReservedDescriptors = 64;
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
      files.rlim_cur > 2 * kReservedDescriptors)
    limits.max_connections =
        std::min<size_t>(limits.max_connections, files.rlim_cur - kReservedDescriptors);
  limits.max_per_client = std::min(limits.max_per_client, limits.max_connections);
  return limits;
}

ConnectionGuard::ConnectionGuard(ConnectionLimits limits,
                                 std::function<void(const std::string&)> log)
    : limits_(withinDescriptorLimit(limits)), log_(std::move(log)) {}

bool ConnectionGuard::admit(socket_t sock) {
  std::string client = peerAddress(sock);
  std::lock_guard lock(mutex_);
  if (stopping_) return false;
  auto counted = per_client_.find(client);
  const size_t from_client = counted == per_client_.end() ? 0 : counted->second;
  if (from_client >= limits_.max_per_client && !evictIdle(&client)) {
    ++stats_.refused;
    noteRefusal("refused a connection from " + (client.empty() ? "an unknown address" : client) +
                ": it holds " + std::to_string(from_client) + " connections, the most allowed");
    return false;
  }
  if (counted_ >= limits_.max_connections && !evictIdle(nullptr)) {
    ++stats_.refused;
    noteRefusal("refused a connection: " + std::to_string(counted_) +
                " connections are open, the most allowed");
    return false;
  }
  ++per_client_[client]; // looked up again: an eviction above may have erased the entry
  connections_[sock].client = std::move(client);
  ++counted_;
  ++stats_.admitted;
  return true;
}

void ConnectionGuard::forget(Connection& c) {
  if (c.evicted) return;
  c.evicted = true;
  --counted_;
  auto it = per_client_.find(c.client);
  if (it != per_client_.end() && --it->second == 0) per_client_.erase(it);
}

void ConnectionGuard::release(socket_t sock) {
  std::lock_guard lock(mutex_);
  auto it = connections_.find(sock);
  if (it == connections_.end()) return;
  forget(it->second);
  connections_.erase(it);
}

void ConnectionGuard::setIdle(socket_t sock, bool idle) {
  std::lock_guard lock(mutex_);
  auto it = connections_.find(sock);
  if (it == connections_.end()) return;
  it->second.idle = idle;
  if (idle) it->second.idle_since = Clock::now();
}

bool ConnectionGuard::evictIdle(const std::string* client) {
  auto oldest = connections_.end();
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    const Connection& c = it->second;
    if (!c.idle || c.evicted || (client && c.client != *client)) continue;
    if (oldest == connections_.end() || c.idle_since < oldest->second.idle_since) oldest = it;
  }
  if (oldest == connections_.end()) return false;
  // The socket stays open (and its number taken) until its own thread releases it: shutting it
  // down here only makes that thread's wait end.
  ::shutdown(oldest->first, SHUT_RDWR);
  forget(oldest->second);
  ++stats_.evicted;
  return true;
}

void ConnectionGuard::closeAll() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  for (auto& [sock, c] : connections_)
    ::shutdown(sock, SHUT_RDWR);
}

void ConnectionGuard::noteRefusal(const std::string& why) {
  if (!log_) return;
  auto now = Clock::now();
  if (now < next_log_) return;
  next_log_ = now + kRefusalLogInterval;
  log_(why);
}

ConnectionGuard::Stats ConnectionGuard::stats() const {
  std::lock_guard lock(mutex_);
  Stats s = stats_;
  s.open = counted_;
  return s;
}

ElasticTaskQueue::~ElasticTaskQueue() {
  shutdown();
}

void ElasticTaskQueue::enqueue(std::function<void()> fn) {
  std::unique_lock lock(mutex_);
  joinFinished(lock);
  jobs_.push_back(std::move(fn));
  if (idle_ < jobs_.size() && threads_.size() < max_threads_)
    threads_.emplace_back([this] { work(); });
  else
    wake_.notify_one();
}

void ElasticTaskQueue::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ++idle_;
    bool woke =
        wake_.wait_for(lock, kIdleThreadLifetime, [&] { return shutdown_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty()) {
      if (shutdown_ || !woke) break;
      continue;
    }
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
  // Joined by the next enqueue() or by shutdown(); during shutdown() every thread is joined.
  if (!shutdown_) finished_.push_back(std::this_thread::get_id());
}

void ElasticTaskQueue::joinFinished(std::unique_lock<std::mutex>& lock) {
  if (finished_.empty()) return;
  std::vector<std::thread> done;
  for (auto id : finished_) {
    auto it = std::find_if(threads_.begin(), threads_.end(),
                           [&](const std::thread& t) { return t.get_id() == id; });
    if (it == threads_.end()) continue;
    done.push_back(std::move(*it));
    threads_.erase(it);
  }
  finished_.clear();
  lock.unlock();
  for (auto& t : done)
    t.join(); // each has left work() or is about to: nothing left to wait for
  lock.lock();
}

void ElasticTaskQueue::shutdown() {
  std::list<std::thread> all;
  {
    std::lock_guard lock(mutex_);
    shutdown_ = true;
    wake_.notify_all();
    all.swap(threads_);
    finished_.clear();
  }
  for (auto& t : all)
    if (t.joinable()) t.join();
}

} // namespace gpuwise::advisor
