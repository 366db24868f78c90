// Hashing trees of files and checking hash lists, in exactly the formats of
// `xxhsum -H2` ("<32 hex>  <path>") and `xxhsum -c`. This is `ferry hash`.
//
// Thread-safety: each call is independent; callbacks run on the calling
// thread, in input order.
#ifndef FERRY_HASH_LIST_H_
#define FERRY_HASH_LIST_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/hash.h"
#include "ferry/progress.h"

namespace ferry {

struct HashOptions {
  Env* env = Env::Default();
  int jobs = 1;                  // worker threads
  Progress* progress = nullptr;  // may be null
  std::string
      root;  // CheckHashList: listed paths are relative to this ("" = as given)
};

struct HashEntry {
  std::string path;  // as it is printed: input path, or input/relative
  Hash128 hash;
  uint64_t size = 0;
  // Non-OK: the file could not be read (hash unset), or, NotSupported, it
  // was skipped (a FIFO, device or socket, a link to a directory).
  Status status;
};

struct HashSummary {
  uint64_t files = 0;  // hashed successfully
  uint64_t bytes = 0;
  uint64_t failed = 0;   // missing or unreadable
  uint64_t skipped = 0;  // walked entries that are not files
};

// Hashes every input: a file as named, a directory walked recursively in
// sorted order (WalkTree, hidden files included). on_entry sees each file in
// that order, whatever the thread count. Failing files are reported, not fatal.
FERRY_EXPORT Result<HashSummary> HashPaths(
    const std::vector<std::string>& inputs, const HashOptions& options,
    const std::function<void(const HashEntry&)>& on_entry);

// "<hex>  <path>\n" as xxhsum -H2 prints. A path holding '\n' is escaped
// and the line starts with '\\', as GNU coreutils does.
FERRY_EXPORT std::string FormatHashLine(const Hash128& hash,
                                        std::string_view path);

struct HashListLine {
  Hash128 hash;
  std::string path;
};
// Parses "<32 hex>  <path>" (also "<hex> *<path>", the escaped '\\' form) and
// the BSD form "XXH128 (<path>) = <hex>".
FERRY_EXPORT Result<HashListLine> ParseHashLine(std::string_view line);

struct CheckEntry {
  enum class Outcome { kOk, kMismatch, kMissing, kUnreadable };
  std::string path;
  Outcome outcome = Outcome::kOk;
  Hash128 expected, actual;  // actual: when the file was read
  Status detail;             // why, for kMissing / kUnreadable
};

struct CheckSummary {
  uint64_t ok = 0;
  uint64_t mismatched = 0;
  uint64_t missing = 0;    // includes unreadable
  uint64_t bad_lines = 0;  // lines that are not hash lines
  // Bad lines are warnings, as in xxhsum (the CLI fails on them with --strict).
  bool clean() const { return mismatched == 0 && missing == 0; }
};

// Verifies every file named in the list (paths relative to the current
// directory, as xxhsum -c does). on_bad_line gets the line number and text of
// lines that do not parse.
FERRY_EXPORT Result<CheckSummary> CheckHashList(
    const std::string& list_path, const HashOptions& options,
    const std::function<void(const CheckEntry&)>& on_entry,
    const std::function<void(uint64_t, std::string_view)>& on_bad_line);

}  // namespace ferry

#endif  // FERRY_HASH_LIST_H_
