// Splitting a dataset into train/val/test (or any named splits) so that it is
// deterministic, stratified by label, keeps groups together, stays stable as
// the dataset grows, and reports duplicate content that leaks across splits.
//
// How an item is placed (the documented hash; golden tests pin it):
//   u = XXH3_64bits_withSeed(group key bytes, seed) / 2^64, a number in [0,1)
//   stable mode: the first split i with u < (r_0 + ... + r_i) / sum(r).
//     Each item depends on its own group key and the seed only, so adding or
//     removing items never moves another one. Per class the shares follow
//     the ratios within binomial spread: for n items of a class, a split of
//     ratio r gets n*r +- 2*sqrt(n*r*(1-r)) in 95% of datasets.
//   exact mode: within each class, groups are ordered by u and cut so that
//     the item counts match the ratios (largest remainder; each split within
//     one item of its share when groups are single items).
// The group key hashed is "p:" + the item's path, or "g:" + its group (the
// --group-by capture, or the listing's group column) when it has one.
// Thread-safety: pure functions; MakeSplit hashes file contents on `jobs`
// threads when asked to.
#ifndef FERRY_SPLIT_H_
#define FERRY_SPLIT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/hash.h"
#include "ferry/input.h"
#include "ferry/result.h"

namespace ferry {

struct SplitItem {
  std::string path;   // relative, '/' separated; the identity of the item
  std::string label;  // class; "" when unlabelled
  std::string group;  // group key; "" = the item is its own group
};

enum class SplitMode { kStable, kExact };

struct SplitSpec {
  std::vector<std::string> names = {"train", "val", "test"};
  std::vector<double> ratios = {7, 2, 1};  // any scale; normalised
  uint64_t seed = 0;
  SplitMode mode = SplitMode::kStable;
  bool stratify = true;  // exact mode: cut per class (stable mode is per item)
  std::string group_regex;  // capture group 1 of the path is the group key
  bool dedup = false;       // keep identical files in one split
};

// Parses "7:2:1" or "0.7,0.2,0.1" (non-negative, sum > 0).
FERRY_EXPORT Result<std::vector<double>> ParseRatios(std::string_view text);
// Parses "train,val,test".
FERRY_EXPORT Result<std::vector<std::string>> ParseSplitNames(
    std::string_view text);
// Checks names against ratios (same count, distinct, usable as file names).
FERRY_EXPORT Status ValidateSpec(const SplitSpec& spec);

// The fraction u above for one group key.
FERRY_EXPORT double SplitHashFraction(std::string_view group_key,
                                      uint64_t seed);
// The stable-mode split index for one group key.
FERRY_EXPORT int StableSplitIndex(std::string_view group_key, uint64_t seed,
                                  const std::vector<double>& ratios);

struct TreeItems {
  std::vector<SplitItem> items;      // sorted by path
  std::vector<WalkProblem> skipped;  // not inputs (ScanInputs), or no class
  std::vector<WalkProblem> failed;   // unreadable, or named as a bad image
};

// Items from an ImageFolder tree: every image below root (ScanInputs in
// ferry/input.h), label = its first directory. When any image is in a class
// folder, an image directly in root has no class and is skipped with that
// reason; when none is, the dataset is unlabelled (label "").
FERRY_EXPORT Result<TreeItems> ItemsFromTree(Env* env, const std::string& root,
                                             const InputScanOptions& options);
// Items from a listing: CSV with a header naming the columns path, label,
// group (label and group optional; read as Python's csv module reads it),
// or JSONL objects with those keys (numbers kept as written). A UTF-8 byte
// order mark is skipped. A malformed line, an empty path, a path with a
// line break or NUL, or a path listed twice refuses the whole listing
// (InvalidArgument naming file:line); a read error is an IOError.
FERRY_EXPORT Result<std::vector<SplitItem>> ItemsFromList(
    Env* env, const std::string& list_path);

// XXH3-128 of each item's file (root/path), on `jobs` threads, in order.
// With errors == nullptr the first unreadable file fails the call;
// otherwise (*errors)[i] says why item i could not be read (hash left 0).
FERRY_EXPORT Result<std::vector<Hash128>> HashItemContents(
    Env* env, const std::string& root, const std::vector<SplitItem>& items,
    int jobs, std::vector<Status>* errors = nullptr);

struct SplitResult {
  std::vector<std::string> names;
  std::vector<std::string> classes;  // sorted
  // For each item (in the order given): its split index.
  std::vector<int> assignment;
  // counts[split][class]
  std::vector<std::vector<uint64_t>> counts;
  std::vector<uint64_t> groups_per_split;
  // Sets of identical files (by XXH3-128) found in more than one split.
  struct Leak {
    Hash128 hash;
    std::vector<size_t> items;  // indexes into the items
  };
  std::vector<Leak> leaks;
  uint64_t duplicate_sets = 0;  // sets of 2+ identical files, leaking or not
  bool hashed = false;          // contents were hashed (leakage was checked)
};

// Assigns every item. content_hashes: one per item to check leakage (and to
// dedup), or empty to skip both.
FERRY_EXPORT Result<SplitResult> AssignSplits(
    const std::vector<SplitItem>& items, const SplitSpec& spec,
    const std::vector<Hash128>& content_hashes);

// Writes <dir>/<name>.txt (sorted paths, one a line) for every split and
// <dir>/split.json (spec, counts per split and class, leakage), atomically.
FERRY_EXPORT Status WriteSplit(Env* env, const std::string& dir,
                               const std::vector<SplitItem>& items,
                               const SplitSpec& spec,
                               const SplitResult& result);

}  // namespace ferry

#endif  // FERRY_SPLIT_H_
