// MD5 (for wids shard indexes, which name it), over OpenSSL's EVP API.
// Thread-safety: one object per thread.
#ifndef FERRY_PACK_MD5_H_
#define FERRY_PACK_MD5_H_

#include <memory>
#include <string>
#include <string_view>

namespace ferry::pack {

class Md5 {
 public:
  Md5();
  ~Md5();
  void Update(std::string_view data);
  std::string HexDigest();  // ends the computation

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

}  // namespace ferry::pack

#endif  // FERRY_PACK_MD5_H_
