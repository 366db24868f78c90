// The OpenSSL adapter: the only file that includes openssl headers.
#include "pack/md5.h"

#include <openssl/evp.h>

#include <cstdio>

namespace ferry::pack {

struct Md5::Ctx {
  EVP_MD_CTX* c = EVP_MD_CTX_new();
  ~Ctx() { EVP_MD_CTX_free(c); }
};

Md5::Md5() : ctx_(std::make_unique<Ctx>()) {
  EVP_DigestInit_ex(ctx_->c, EVP_md5(), nullptr);
}
Md5::~Md5() = default;

void Md5::Update(std::string_view data) {
  EVP_DigestUpdate(ctx_->c, data.data(), data.size());
}

std::string Md5::HexDigest() {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_->c, d, &n);
  std::string out;
  char hex[3];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(hex, sizeof(hex), "%02x", d[i]);
    out += hex;
  }
  return out;
}

}  // namespace ferry::pack
