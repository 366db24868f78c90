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
#include <functional>
#include <string>
#include <vector>

#include "ferry/env.h"
#include "ferry/image.h"
#include "ferry/progress.h"
#include "ferry/split.h"

namespace ferry {

class Backend;  // ferry/remote.h

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
  // A distributed pack into a bucket (docs/scale.md, "OUT in a bucket"):
  // OUT's backend (not owned; out is then its URL, for messages), the local
  // folder that holds a worker's shard until it is uploaded ("": $TMPDIR,
  // else /tmp), and whether the merge reads every shard back and hashes it
  // rather than checking its size and ETag by HEAD.
  Backend* out_backend = nullptr;
  std::string tmp_dir;
  bool verify_remote = false;
  // Tests: called after each shard (with its index) and each list a worker
  // writes into a local OUT.
  std::function<void()> after_worker_write;
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
  bool merged_already = false;      // PackMerge of a merged out: nothing done
};

FERRY_EXPORT Result<PackSummary> Pack(const std::string& src,
                                      const std::string& out,
                                      const PackOptions& options);

// Distributed pack (docs/scale.md), all three with the same src, out and
// options, which need shard_records > 0 (InvalidArgument otherwise).
// PackPlan scans and hashes the inputs once, splits them and writes the
// plan, out/.ferry-pack-plan; it fixes every shard: shard k of a split
// holds the records of items [k * shard_records, (k + 1) * shard_records)
// of the split's order. PackWorker writes worker's share (of `workers`) of
// the shards under their final names, keeping those a rerun finds intact.
// PackMerge checks that every planned shard is there intact (Corruption
// naming those that are not) and writes the indexes, labels, assignment
// and dataset.json. When no input fails to convert and no shard reaches
// shard_bytes first (a worker stops with InvalidArgument then), out is byte
// for byte what Pack writes; a failed input leaves its shard one record
// short instead of moving every later record.
FERRY_EXPORT Result<PackSummary> PackPlan(const std::string& src,
                                          const std::string& out,
                                          const PackOptions& options);
FERRY_EXPORT Result<PackSummary> PackWorker(const std::string& src,
                                            const std::string& out,
                                            const PackOptions& options,
                                            int worker, int workers);
FERRY_EXPORT Result<PackSummary> PackMerge(const std::string& src,
                                           const std::string& out,
                                           const PackOptions& options);

// Shard file name: "<split>-00003-of-00012.tfrecord" (or ".tar").
FERRY_EXPORT std::string ShardName(const std::string& split, size_t index,
                                   size_t count, ShardFormat format, bool gzip);

}  // namespace ferry

#endif  // FERRY_PACK_H_
