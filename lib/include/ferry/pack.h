// Pack: the one streaming pass from a source tree to training shards:
// decode -> resize -> encode -> split -> shard, TFRecord (tf.train.Example)
// or WebDataset tar, with DALI / wids index sidecars and OUT/dataset.json.
//
// Same input and options give byte-identical files whatever the thread
// count: records are ordered inside each split by a seeded hash of their
// path, and shard boundaries follow that order. Shards are written under a
// temporary name and renamed when complete; a rerun keeps completed shards
// whose bytes still hash as recorded and redoes the rest. dataset.json is
// written last. Bad images are skipped and listed.
// Thread-safety: one Pack per output directory at a time (a lock enforces it).
#ifndef FERRY_PACK_H_
#define FERRY_PACK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/env.h"
#include "ferry/image.h"
#include "ferry/progress.h"
#include "ferry/split.h"

namespace ferry {

enum class ShardFormat { kTfRecord, kWebDataset };

struct PackOptions {
  Env* env = Env::Default();
  image::TranscodeOptions transcode;
  SplitSpec split;
  ShardFormat format = ShardFormat::kTfRecord;
  uint64_t shard_bytes = 256ull << 20;  // a shard closes at this size...
  uint64_t shard_records = 0;           // ...or this many records (0: no limit)
  bool gzip = false;                    // TFRecord only: TF's "GZIP" option
  std::string list_path;        // a CSV/JSONL listing instead of the tree
  bool include_hidden = false;  // tree: take dot-files and dot-folders
  int jobs = 1;
  bool dry_run = false;
  Progress* progress = nullptr;
};

struct PackShard {
  std::string name;
  uint64_t records = 0, bytes = 0;
  Hash128 xxh3;
};

struct PackSplit {
  std::string name;
  uint64_t records = 0;
  std::vector<PackShard> shards;
};

struct PackFailure {
  std::string input;
  Status error;
};

struct PackSummary {
  std::vector<std::string> labels;
  std::vector<PackSplit> splits;
  std::vector<PackFailure> failed;
  std::vector<PackFailure> skipped;  // not inputs, with the reason
  uint64_t records = 0;
  uint64_t reused_shards = 0;  // kept from an earlier, interrupted run
  uint64_t cross_split_duplicates = 0;
  uint64_t dropped_duplicates = 0;  // --drop-duplicates: inputs left out
};

FERRY_EXPORT Result<PackSummary> Pack(const std::string& src,
                                      const std::string& out,
                                      const PackOptions& options);

// Shard file name: "<split>-00003-of-00012.tfrecord" (or ".tar").
FERRY_EXPORT std::string ShardName(const std::string& split, size_t index,
                                   size_t count, ShardFormat format, bool gzip);

}  // namespace ferry

#endif  // FERRY_PACK_H_
