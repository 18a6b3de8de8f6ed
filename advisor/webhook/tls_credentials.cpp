#include "advisor/webhook/tls_credentials.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace gpuwise::advisor {

struct TlsCredentials::Pair {
  X509* cert = nullptr;
  EVP_PKEY* key = nullptr;
  STACK_OF(X509) * chain = nullptr; // intermediates after the leaf, possibly empty
  ~Pair() {
    X509_free(cert);
    EVP_PKEY_free(key);
    sk_X509_pop_free(chain, X509_free);
  }
};

namespace {

std::string opensslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no PEM data";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

std::string fileIdentity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "missing";
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

struct BioCloser {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioCloser>;

BioPtr openFile(const std::string& path, std::string* error) {
  std::FILE* probe = std::fopen(path.c_str(), "rb");
  if (!probe) {
    *error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  std::fclose(probe);
  BioPtr bio(BIO_new_file(path.c_str(), "rb"));
  if (!bio) *error = path + ": cannot open (" + opensslError() + ")";
  return bio;
}

} // namespace

std::shared_ptr<const TlsCredentials::Pair> TlsCredentials::readPair(const std::string& cert_file,
                                                                     const std::string& key_file,
                                                                     std::string* error) {
  auto pair = std::make_shared<Pair>();
  ERR_clear_error();
  {
    BioPtr bio = openFile(cert_file, error);
    if (!bio) return nullptr;
    pair->cert = PEM_read_bio_X509_AUX(bio.get(), nullptr, nullptr, nullptr);
    if (!pair->cert) {
      *error = cert_file + ": not a PEM certificate (" + opensslError() + ")";
      return nullptr;
    }
    pair->chain = sk_X509_new_null();
    while (X509* extra = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr))
      sk_X509_push(pair->chain, extra);
    ERR_clear_error(); // the loop ends on "no start line": the end of the file
  }
  {
    BioPtr bio = openFile(key_file, error);
    if (!bio) return nullptr;
    pair->key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
    if (!pair->key) {
      *error = key_file + ": not a PEM private key (" + opensslError() + ")";
      return nullptr;
    }
  }
  if (X509_check_private_key(pair->cert, pair->key) != 1) {
    ERR_clear_error();
    *error = key_file + ": the key does not match the certificate in " + cert_file;
    return nullptr;
  }
  return pair;
}

TlsCredentials::TlsCredentials(std::string cert_file, std::string key_file, Log log)
    : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)), log_(std::move(log)) {}

TlsCredentials::~TlsCredentials() = default;

std::unique_ptr<TlsCredentials> TlsCredentials::load(const std::string& cert_file,
                                                     const std::string& key_file, Log log,
                                                     std::string* error) {
  std::unique_ptr<TlsCredentials> self(new TlsCredentials(cert_file, key_file, std::move(log)));
  self->identity_ = fileIdentity(cert_file) + "|" + fileIdentity(key_file);
  self->pair_ = readPair(cert_file, key_file, error);
  if (!self->pair_) return nullptr;
  self->next_check_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  return self;
}

std::shared_ptr<const TlsCredentials::Pair> TlsCredentials::current() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto now = std::chrono::steady_clock::now();
  if (now < next_check_) return pair_;
  next_check_ = now + std::chrono::seconds(1);
  std::string identity = fileIdentity(cert_file_) + "|" + fileIdentity(key_file_);
  if (identity == identity_ || identity == failed_identity_) return pair_;
  std::string error;
  auto fresh = readPair(cert_file_, key_file_, &error);
  if (!fresh) {
    // Often a renewal caught halfway (certificate written, key not yet): keep serving the old
    // pair, try again when the files change once more.
    failed_identity_ = identity;
    if (log_) log_("cannot reload the TLS certificate, still serving the previous one: " + error);
    return pair_;
  }
  pair_ = std::move(fresh);
  identity_ = identity;
  failed_identity_.clear();
  ++reloads_;
  if (log_) log_("reloaded the TLS certificate from " + cert_file_);
  return pair_;
}

int TlsCredentials::certCallback(SSL* ssl, void* arg) {
  auto* self = static_cast<TlsCredentials*>(arg);
  auto pair = self->current();
  // SSL_use_cert_and_key takes its own references: the pair may be replaced during the session.
  return SSL_use_cert_and_key(ssl, pair->cert, pair->key, pair->chain, 1) == 1 ? 1 : 0;
}

bool TlsCredentials::install(SSL_CTX* ctx, std::string* error) {
  // Kubernetes' API server speaks TLS 1.2 and 1.3; anything older is refused in the handshake.
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
    *error = "cannot require TLS 1.2 (" + opensslError() + ")";
    return false;
  }
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE);
  auto pair = current();
  if (SSL_CTX_use_certificate(ctx, pair->cert) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, pair->key) != 1) {
    *error = cert_file_ + ": OpenSSL refused the certificate (" + opensslError() + ")";
    return false;
  }
  SSL_CTX_set_cert_cb(ctx, &TlsCredentials::certCallback, this);
  return true;
}

long long TlsCredentials::secondsToExpiry() {
  auto pair = current();
  int days = 0, seconds = 0;
  if (ASN1_TIME_diff(&days, &seconds, nullptr, X509_get0_notAfter(pair->cert)) != 1) return -1;
  return static_cast<long long>(days) * 86400 + seconds;
}

int TlsCredentials::reloads() {
  std::lock_guard<std::mutex> lock(mutex_);
  return reloads_;
}

} // namespace gpuwise::advisor
