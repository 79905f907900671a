#include "hbingest/server/tls_credentials.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <stdexcept>

namespace hbingest::server {

namespace {

// OpenSSL's queued reasons, most recent last, and clears the queue.
std::string openssl_errors() {
  std::string out;
  while (const unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

std::shared_ptr<ssl_ctx_st> load_context(const std::string& cert_file, const std::string& key_file) {
  ERR_clear_error();
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!ctx) throw std::runtime_error("http tls: cannot create a context: " + openssl_errors());
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  // Writes are retried with the same buffer after poll(), and may complete partially.
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), cert_file.c_str()) != 1) {
    throw std::runtime_error("http.tls_cert_file '" + cert_file + "': " + openssl_errors());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    throw std::runtime_error("http.tls_key_file '" + key_file + "': " + openssl_errors());
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    throw std::runtime_error("http.tls_key_file '" + key_file + "' does not match the certificate in '" + cert_file +
                             "': " + openssl_errors());
  }
  return ctx;
}

}  // namespace

TlsCredentials::TlsCredentials(std::string cert_file, std::string key_file)
    : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)), context_(load_context(cert_file_, key_file_)) {}

void TlsCredentials::reload() {
  auto fresh = load_context(cert_file_, key_file_);  // throws before anything changes
  const std::lock_guard lock(mutex_);
  context_ = std::move(fresh);
}

std::shared_ptr<ssl_ctx_st> TlsCredentials::context() const {
  const std::lock_guard lock(mutex_);
  return context_;
}

}  // namespace hbingest::server
