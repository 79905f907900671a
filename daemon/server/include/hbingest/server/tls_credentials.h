#pragma once
// TlsCredentials: the HTTPS server's certificate chain and private key, loaded from PEM files into
// an OpenSSL server context, and reloadable while connections are being served (SIGHUP).
//
// Each new connection takes the context current at its handshake; reload() builds a new one from
// the files and swaps it in, so connections already open keep the certificate they started with
// and new ones see the new one. A reload that fails (missing file, key not matching the
// certificate) throws and leaves the current context in place: a bad deploy of the files never
// takes HTTPS down. Thread-safe.

#include <memory>
#include <mutex>
#include <string>

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace hbingest::server {

class TlsCredentials {
 public:
  // Loads both files now; throws std::runtime_error naming the file and OpenSSL's reason.
  TlsCredentials(std::string cert_file, std::string key_file);

  // Loads the files again (see above). Throws std::runtime_error when they are unusable.
  void reload();

  // The current context; holding it keeps it alive after a reload.
  std::shared_ptr<ssl_ctx_st> context() const;

  const std::string& cert_file() const noexcept { return cert_file_; }
  const std::string& key_file() const noexcept { return key_file_; }

 private:
  std::string cert_file_;
  std::string key_file_;
  mutable std::mutex mutex_;
  std::shared_ptr<ssl_ctx_st> context_;
};

}  // namespace hbingest::server
