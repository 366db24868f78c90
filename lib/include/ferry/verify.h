// Verify: prove a dataset intact and say exactly where it is not. Reads,
// never writes. Works on a `ferry pack` output directory (dataset.json), a
// single shard, or any tree with a hash list (xxhsum -H2 format).
//
// Checks: files named in dataset.json exist with the recorded size and
// XXH3-128, no unnamed files, record counts per shard and split; TFRecord
// framing and both CRCs of every record, every record a tf.train.Example
// with the same feature keys and types as the first (schema drift), the
// .idx sidecar; tar header checksums, 512-byte structure, end blocks,
// samples complete, contiguous and unique, the wds2idx and wids indexes;
// with deep, every image decodes and has the recorded size; no source file
// (path or content) in two splits. Files are streamed: memory stays flat
// but for a few bytes per record for the split check.
// Thread-safety: independent calls are safe; shards are read on `jobs` threads.
#ifndef FERRY_VERIFY_H_
#define FERRY_VERIFY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/env.h"
#include "ferry/progress.h"

namespace ferry {

struct VerifyOptions {
  Env* env = Env::Default();
  bool deep = false;
  int jobs = 1;
  std::string hashes_file;  // verify PATH against this hash list instead
  Progress* progress = nullptr;
};

struct Problem {
  std::string file;     // relative to the verified path
  int64_t record = -1;  // record (or sample) index, -1 when not about one
  int64_t offset = -1;  // byte offset in the file, -1 when not about one
  std::string what;  // missing | extra | size | hash | length_crc | data_crc |
                     // truncated | parse | schema | decode | index | tar |
                     // count | leakage | labels | gzip
  std::string detail;
};

struct VerifyReport {
  std::string kind;  // "dataset", "tfrecord", "webdataset", "hash-list"
  uint64_t files = 0, records = 0, bytes = 0;
  std::vector<Problem> problems;
  // Found but declared by the output (identical contents in two splits of a
  // pack made with --allow-leakage): reported, the output is still clean.
  std::vector<Problem> warnings;
  bool clean() const { return problems.empty(); }
};

FERRY_EXPORT Result<VerifyReport> Verify(const std::string& path,
                                         const VerifyOptions& options);

}  // namespace ferry

#endif  // FERRY_VERIFY_H_
