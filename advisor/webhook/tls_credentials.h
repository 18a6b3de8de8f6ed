// The webhook's TLS certificate and key, read from PEM files and read again when they change:
// cert-manager renews the Secret and the kubelet swaps the mounted files, and the webhook must
// serve the new certificate without a restart (the old one expires).
//
// install() configures an SSL_CTX: TLS 1.2 or newer only, no compression, no renegotiation, and a
// certificate callback that serves the current pair on every handshake. The callback runs on
// the server's connection threads; the files are stat()ed at most once a second and re-read only
// when their identity (inode, size, mtime) changed. A pair that fails to load (half-written, key
// not matching) is not used: the previous one keeps being served and the problem is logged once.
//
// Owns the loaded X509 and EVP_PKEY; must outlive every SSL_CTX it was installed into.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace gpuwise::advisor {

class TlsCredentials {
public:
  using Log = std::function<void(const std::string&)>;

  // Reads both files now; nullptr with `error` naming the file and the problem when they do not
  // hold a PEM certificate (chain) and its private key.
  static std::unique_ptr<TlsCredentials>
  load(const std::string& cert_file, const std::string& key_file, Log log, std::string* error);
  ~TlsCredentials();

  bool install(SSL_CTX* ctx, std::string* error);

  // Seconds until the served certificate expires (negative once it has); readiness uses it.
  long long secondsToExpiry();
  // How many times a changed pair was loaded after the first.
  int reloads();

private:
  struct Pair;
  TlsCredentials(std::string cert_file, std::string key_file, Log log);
  static int certCallback(SSL* ssl, void* self);
  static std::shared_ptr<const Pair> readPair(const std::string& cert_file,
                                              const std::string& key_file, std::string* error);
  std::shared_ptr<const Pair> current();

  const std::string cert_file_, key_file_;
  const Log log_;
  std::mutex mutex_;
  std::shared_ptr<const Pair> pair_;
  std::string identity_;        // of the files behind pair_
  std::string failed_identity_; // last identity that failed to load (logged once)
  std::chrono::steady_clock::time_point next_check_{};
  int reloads_ = 0;
};

} // namespace gpuwise::advisor
