#include "digest.h"

#include <openssl/evp.h>
#include <xxhash.h>

#include <stdexcept>
#include <string>

namespace hbingest::keyspec::detail {
namespace {

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const noexcept { EVP_MD_CTX_free(ctx); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

EVP_MD_CTX* thread_ctx() {
  // One context per thread: EVP_MD_CTX_new per key would allocate on every encode.
  thread_local MdCtxPtr ctx{EVP_MD_CTX_new()};
  if (!ctx) throw std::runtime_error("keyspec: EVP_MD_CTX_new failed");
  return ctx.get();
}

}  // namespace

void MdDeleter::operator()(evp_md_st* md) const noexcept { EVP_MD_free(md); }

std::uint64_t xxh64(std::string_view data) { return XXH64(data.data(), data.size(), 0); }

std::shared_ptr<evp_md_st> fetch_digest(HashAlgo algo) {
  const char* name = algo == HashAlgo::Sha1 ? "SHA1" : "MD5";
  EVP_MD* md = EVP_MD_fetch(nullptr, name, nullptr);
  if (md == nullptr) throw std::runtime_error(std::string("OpenSSL has no ") + name + " digest");
  return std::shared_ptr<evp_md_st>(md, MdDeleter{});
}

std::size_t digest_size(HashAlgo algo) {
  switch (algo) {
    case HashAlgo::Md5:
      return 16;
    case HashAlgo::Sha1:
      return 20;
    case HashAlgo::Xxh64:
      return 8;
  }
  return 0;
}

void evp_digest(evp_md_st* md, std::string_view data, unsigned char* out) {
  EVP_MD_CTX* ctx = thread_ctx();
  unsigned int len = 0;
  if (EVP_DigestInit_ex2(ctx, md, nullptr) != 1 || EVP_DigestUpdate(ctx, data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, out, &len) != 1) {
    throw std::runtime_error("keyspec: OpenSSL digest failed");
  }
}

}  // namespace hbingest::keyspec::detail
