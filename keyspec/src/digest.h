#pragma once
// Hashing for keyspec: xxh64 (salt, fast hash component) and md5/sha1 via OpenSSL EVP.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "spec_model.h"

namespace hbingest::keyspec::detail {

// XXH64 with seed 0, the documented salt hash.
std::uint64_t xxh64(std::string_view data);

// Fetches the EVP_MD for md5/sha1 once, at load. Throws std::runtime_error when OpenSSL lacks it.
std::shared_ptr<evp_md_st> fetch_digest(HashAlgo algo);
std::size_t digest_size(HashAlgo algo);

// Full digest of `data` into `out` (at least digest_size bytes). Reuses a per-thread EVP context so
// steady-state hashing does not allocate. Throws std::runtime_error if OpenSSL fails.
void evp_digest(evp_md_st* md, std::string_view data, unsigned char* out);

}  // namespace hbingest::keyspec::detail
