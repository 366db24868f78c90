// The xxHash adapter: the only file that includes xxhash.h.
#include "ferry/hash.h"

#include <xxhash.h>
#if defined(__x86_64__)
// Routes XXH3 to the SSE2/AVX2/AVX-512 kernel the CPU supports (libxxhash
// exports the dispatchers); AVX2 is ~1.3x faster than the SSE2 default here.
#include <xxh_x86dispatch.h>
#endif

#include <vector>

namespace ferry {

std::string Hash128::ToHex() const {
  XXH128_hash_t h{low, high};
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  static const char kHex[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[2 * i] = kHex[c.digest[i] >> 4];
    out[2 * i + 1] = kHex[c.digest[i] & 15];
  }
  return out;
}

Result<Hash128> Hash128::FromHex(std::string_view hex) {
  if (hex.size() != 32) {
    return Status::InvalidArgument("XXH3-128 hash needs 32 hex digits",
                                   std::string(hex));
  }
  XXH128_canonical_t c;
  for (int i = 0; i < 16; ++i) {
    int v = 0;
    for (int j = 0; j < 2; ++j) {
      char ch = hex[2 * i + j];
      int d = (ch >= '0' && ch <= '9')   ? ch - '0'
              : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
              : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10
                                         : -1;
      if (d < 0) {
        return Status::InvalidArgument("not a hex digit in hash",
                                       std::string(hex));
      }
      v = v * 16 + d;
    }
    c.digest[i] = static_cast<unsigned char>(v);
  }
  XXH128_hash_t h = XXH128_hashFromCanonical(&c);
  return Hash128{h.high64, h.low64};
}

struct Hasher128::State {
  XXH3_state_t* st = XXH3_createState();
  ~State() { XXH3_freeState(st); }
};

Hasher128::Hasher128() : state_(std::make_unique<State>()) { Reset(); }
Hasher128::~Hasher128() = default;

void Hasher128::Update(std::string_view data) {
  XXH3_128bits_update(state_->st, data.data(), data.size());
}

Hash128 Hasher128::Digest() const {
  XXH128_hash_t h = XXH3_128bits_digest(state_->st);
  return Hash128{h.high64, h.low64};
}

void Hasher128::Reset() { XXH3_128bits_reset(state_->st); }

Hash128 HashBytes(std::string_view data) {
  XXH128_hash_t h = XXH3_128bits(data.data(), data.size());
  return Hash128{h.high64, h.low64};
}

Result<Hash128> HashFile(Env* env, const std::string& path, uint64_t* size) {
  // Big enough to amortise syscalls, small enough to stay in L2.
  constexpr size_t kChunk = 256 * 1024;
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewSequentialFile(path));
  thread_local std::vector<char> scratch(kChunk);
  Hasher128 hasher;
  uint64_t total = 0;
  for (;;) {
    std::string_view got;
    FERRY_RETURN_IF_ERROR(file->Read(kChunk, &got, scratch.data()));
    if (got.empty()) break;
    hasher.Update(got);
    total += got.size();
  }
  if (size) *size = total;
  return hasher.Digest();
}

}  // namespace ferry
