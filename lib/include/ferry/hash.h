// Content hashes: XXH3-128 (xxHash), the identity of every file and record in
// ferry's manifests, printed exactly as `xxhsum -H2` prints it.
//
// Thread-safety: Hasher128 is used by one thread at a time; the free
// functions are safe from any thread.
#ifndef FERRY_HASH_H_
#define FERRY_HASH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/env.h"

namespace ferry {

struct FERRY_EXPORT Hash128 {
  uint64_t high = 0;
  uint64_t low = 0;

  // 32 lowercase hex digits, canonical (big-endian) order as xxhsum prints.
  std::string ToHex() const;
  // Accepts 32 hex digits, either case.
  static Result<Hash128> FromHex(std::string_view hex);
  friend bool operator==(const Hash128&, const Hash128&) = default;
};

// Streaming XXH3-128.
class FERRY_EXPORT Hasher128 {
 public:
  Hasher128();
  ~Hasher128();
  Hasher128(const Hasher128&) = delete;
  Hasher128& operator=(const Hasher128&) = delete;

  void Update(std::string_view data);
  // The digest of everything passed so far; Update may continue after.
  Hash128 Digest() const;
  void Reset();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One-shot XXH3-128 of a buffer.
FERRY_EXPORT Hash128 HashBytes(std::string_view data);

// Streams a file through XXH3-128 in constant memory. *size gets its length.
FERRY_EXPORT Result<Hash128> HashFile(Env* env, const std::string& path,
                                      uint64_t* size = nullptr);

}  // namespace ferry

#endif  // FERRY_HASH_H_
