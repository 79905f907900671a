#include "hbingest/server/bearer_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>
#include <cctype>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hbingest::server {

namespace {

using Digest = std::array<unsigned char, 32>;

// Hashing first gives both sides the same length, so the compare does not leak the token's length.
Digest sha256(std::string_view data) {
  Digest out{};
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &size, EVP_sha256(), nullptr) != 1 || size != out.size()) {
    throw std::runtime_error("http auth: SHA-256 failed");
  }
  return out;
}

}  // namespace

bool bearer_token_matches(const HttpRequest& request, const std::string& token) {
  const auto header = request.header("authorization");
  if (!header) return false;
  constexpr std::string_view kScheme = "Bearer ";
  const std::string_view value = *header;
  if (value.size() < kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    // The scheme name is case-insensitive (RFC 7235).
    if (std::tolower(static_cast<unsigned char>(value[i])) != std::tolower(static_cast<unsigned char>(kScheme[i]))) {
      return false;
    }
  }
  const Digest given = sha256(value.substr(kScheme.size()));
  const Digest expected = sha256(token);
  return CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
}

HttpResponse unauthorized_response() {
  HttpResponse res;
  res.status = 401;
  res.headers.emplace_back("WWW-Authenticate", "Bearer");
  res.body = nlohmann::json{{"error", "missing or wrong bearer token"}}.dump();
  return res;
}

}  // namespace hbingest::server
