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
//     the item counts match the ratios: every class's count in every split
//     and every split's total are within one item of their quota (largest
//     remainder, ties to the earlier split, rounded jointly over classes)
//     when groups are single items.
//   auto mode (the default): exact when there is no earlier assignment;
//     with one, every earlier item that still exists keeps its split (a new
//     member of an earlier group joins it) and the new groups, in order of
//     u, fill each class's splits up to the quotas of the new total.
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

enum class SplitMode { kAuto, kStable, kExact };
// "auto", "stable", "exact".
FERRY_EXPORT const char* SplitModeName(SplitMode mode);

// What happens to sets of files with identical contents (by XXH3-128).
enum class DuplicatePolicy {
  kTogether,      // each set lands in one split (the default)
  kDrop,          // only the first member (by path) is kept; others dropped
  kAllowLeakage,  // placed one by one; sets may straddle splits (recorded)
};
// "together", "drop", "allow-leakage".
FERRY_EXPORT const char* DuplicatePolicyName(DuplicatePolicy policy);

struct SplitSpec {
  std::vector<std::string> names = {"train", "val", "test"};
  std::vector<double> ratios = {7, 2, 1};  // any scale; normalised
  uint64_t seed = 0;
  SplitMode mode = SplitMode::kAuto;
  bool stratify = true;  // exact mode: cut per class (stable mode is per item)
  std::string group_regex;  // capture group 1 of the path is the group key
  DuplicatePolicy duplicates = DuplicatePolicy::kTogether;
  // Auto mode: where the earlier assignment is (see ReadPreviousAssignment);
  // "" = the output directory, if it holds one.
  std::string previous;
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
  // For each item (in the order given): its split index, or -1 for an item
  // dropped as a duplicate (DuplicatePolicy::kDrop).
  std::vector<int> assignment;
  // Dropped items and, for each, the kept item with the same content.
  struct Dropped {
    size_t item, kept;
  };
  std::vector<Dropped> dropped;
  // Items whose split an earlier assignment gave (auto mode).
  uint64_t kept_items = 0;
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
// keep or drop duplicates), or empty to skip both. previous (auto mode
// only): one per item, the split index an earlier assignment gave it, or -1
// for a new item; empty when there is no earlier assignment.
FERRY_EXPORT Result<SplitResult> AssignSplits(
    const std::vector<SplitItem>& items, const SplitSpec& spec,
    const std::vector<Hash128>& content_hashes,
    const std::vector<int>& previous = {});

// Largest-remainder quotas of n items over the ratios (ties to the earlier
// split).
FERRY_EXPORT std::vector<uint64_t> SplitQuotas(
    uint64_t n, const std::vector<double>& ratios);

// The stored assignment: "assignment.tsv.zst" beside split.json or
// dataset.json, a zstd stream of the lines
//   # ferry-assignment-v1
//   <path>\t<split>\t<group>
// sorted by path (bytewise). In path and group a backslash, TAB and
// newline are written as a backslash followed by a backslash, 't' or 'n'.
// group is the item's group ("" when it is its own group). Dropped
// duplicates are not listed. Read and written streaming.
inline constexpr char kAssignmentFile[] = "assignment.tsv.zst";
FERRY_EXPORT Status WriteAssignment(Env* env, const std::string& path,
                                    const std::vector<SplitItem>& items,
                                    const SplitSpec& spec,
                                    const SplitResult& result);
struct PreviousAssignment {
  std::vector<int> split;      // per item: index into the names, or -1
  uint64_t listed = 0;         // lines in the file
  uint64_t found = 0;          // of them, items that still exist
  uint64_t unknown_split = 0;  // found, but in a split not in the names
};
// Reads the assignment stored at `where`: a split.json or dataset.json
// (the assignment file beside it), a directory holding one, or any other
// file as the assignment file itself. NotFound when there is none,
// Corruption when it is damaged or not one.
FERRY_EXPORT Result<PreviousAssignment> ReadPreviousAssignment(
    Env* env, const std::string& where, const std::vector<SplitItem>& items,
    const std::vector<std::string>& names);

// The earlier assignment that auto mode keeps, one entry per item (empty
// when there is none or the mode is not auto): spec.previous if given
// (NotFound if it holds none), else the one in out_dir if any. *info (may be
// null) gets the counts.
FERRY_EXPORT Result<std::vector<int>> LoadEarlierAssignment(
    Env* env, const SplitSpec& spec, const std::string& out_dir,
    const std::vector<SplitItem>& items, PreviousAssignment* info = nullptr);

// Writes <dir>/<name>.txt (sorted paths, one a line) for every split,
// <dir>/assignment.tsv.zst and <dir>/split.json (spec, counts per split and
// class, leakage) as one unit: the run is written into a new directory
// beside dir that is then exchanged with dir, so readers see either the
// whole earlier set or the whole new one, and files of an earlier set that
// this one does not have (a split no longer named) are gone. Other files in
// dir are carried over; a foreign subdirectory is an error.
FERRY_EXPORT Status WriteSplit(Env* env, const std::string& dir,
                               const std::vector<SplitItem>& items,
                               const SplitSpec& spec,
                               const SplitResult& result);

}  // namespace ferry

#endif  // FERRY_SPLIT_H_
