// rsync deltas inside files (docs/delta.md, formats/delta/README.md): rdiff-
// compatible signatures (RabinKarp + BLAKE2), deltas made from a signature
// and the new bytes, and patching a basis with a delta. Built on librsync's
// streaming job API: every job takes its input in pieces and hands its
// output to a sink as it is produced, so memory stays flat whatever the
// file size (a loaded signature is the one thing held whole: 4 + strong_len
// bytes per block, 12 for the signatures ferry makes, under 0.1 % of a
// 256 MB file).
//
// Untrusted input: signatures are checked before librsync reads them (MD4
// and other kinds refused, lengths bounded, block count against the file
// size); a patch bounds-checks every COPY against the basis and caps its
// output. A delta says nothing of the basis it was made for: the caller
// verifies the output's hash.
//
// Thread-safety: each object is used by one thread at a time; distinct
// objects are independent. A Signature is read-only once loaded and may be
// shared by several DeltaBuilders on different threads.
#ifndef FERRY_DELTA_H_
#define FERRY_DELTA_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/export.h"
#include "ferry/result.h"
#include "ferry/status.h"

namespace ferry::delta {

// Where a job's output goes, piece by piece. An error stops the job.
using ByteSink = std::function<Status(std::string_view)>;

struct SignatureParams {
  uint32_t magic = 0;  // always 0x72730147 (RabinKarp + BLAKE2)
  uint32_t block_len = 0;
  uint32_t strong_len = 0;
};

// librsync's recommended parameters for a file of `size` bytes, as `rdiff
// signature` picks them: block length 256 up to 64 KiB, else sqrt(size)
// rounded down to a multiple of 128; strong sums of librsync's minimum length
// for the size (`rdiff signature -S -1`), at least 8 bytes
// (formats/delta/README.md).
FERRY_EXPORT SignatureParams SignatureParamsFor(uint64_t size);

// Makes the signature of a file of `size` bytes (the same bytes rdiff makes).
class FERRY_EXPORT SignatureBuilder {
 public:
  static Result<std::unique_ptr<SignatureBuilder>> Create(uint64_t size,
                                                          ByteSink out);
  ~SignatureBuilder();
  // The file's bytes, in order. Feeding more or fewer than `size` bytes
  // makes a valid signature of what was fed, but Finish refuses it.
  Status Update(std::string_view data);
  Status Finish();
  const SignatureParams& params() const;

 private:
  struct Impl;
  explicit SignatureBuilder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A checked signature in memory, indexed for making deltas.
class FERRY_EXPORT Signature {
 public:
  ~Signature();
  const SignatureParams& params() const;
  uint64_t blocks() const;

 private:
  friend class SignatureLoader;
  friend class DeltaBuilder;
  friend struct SignatureAccess;  // lib/delta's block matcher
  struct Impl;
  explicit Signature(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct SignatureLimits {
  // Refused above this many bytes (memory holds about this much again).
  uint64_t max_bytes = uint64_t{256} << 20;
  // The size of the file it describes, when known (-1: unknown); the block
  // count must then match it, which also catches truncation at a block
  // boundary.
  int64_t file_size = -1;
  // The strong sum length it must have, when known (0: any accepted one).
  uint32_t strong_len = 0;
};

// Reads a signature from untrusted bytes fed in pieces. Every refusal is
// Corruption naming what is wrong.
class FERRY_EXPORT SignatureLoader {
 public:
  explicit SignatureLoader(const SignatureLimits& limits);
  ~SignatureLoader();
  Status Update(std::string_view data);
  Result<std::unique_ptr<Signature>> Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Makes the rdiff delta that turns the signature's file into the new bytes.
class FERRY_EXPORT DeltaBuilder {
 public:
  // `signature` must outlive the builder.
  static Result<std::unique_ptr<DeltaBuilder>> Create(
      const Signature* signature, ByteSink out);
  ~DeltaBuilder();
  Status Update(std::string_view new_bytes);
  Status Finish();

 private:
  struct Impl;
  explicit DeltaBuilder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Applies an untrusted delta to a basis. Every COPY must lie inside the
// basis; the output may not exceed max_output bytes; the delta must end with
// its END command and nothing after it. Refusals are Corruption; a basis
// that cannot be read is its IOError.
class FERRY_EXPORT Patcher {
 public:
  // `basis` must outlive the patcher.
  static Result<std::unique_ptr<Patcher>> Create(const RandomAccessFile* basis,
                                                 uint64_t max_output,
                                                 ByteSink out);
  ~Patcher();
  Status Update(std::string_view delta_bytes);
  // The number of bytes written to the sink.
  Result<uint64_t> Finish();

 private:
  struct Impl;
  explicit Patcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Whole files through Env, streamed in constant memory.
// The signature of the file at `path`.
FERRY_EXPORT Status SignFile(Env* env, const std::string& path, ByteSink out);
// A signature read from a file (limits as above).
FERRY_EXPORT Result<std::unique_ptr<Signature>> LoadSignatureFile(
    Env* env, const std::string& path, const SignatureLimits& limits);
// The delta from the signature's file to the file at `new_path`.
FERRY_EXPORT Status DeltaFile(const Signature& signature, Env* env,
                              const std::string& new_path, ByteSink out);
// Applies the delta file to the basis file; returns the output's size.
FERRY_EXPORT Result<uint64_t> PatchFile(Env* env, const std::string& basis_path,
                                        const std::string& delta_path,
                                        uint64_t max_output, ByteSink out);

// Block reuse (docs/delta.md, sync path 3): which blocks of a NEW object,
// described by its signature, a local basis already holds, and where.

// Where one block of the new object is found: basis file `basis` (an index
// into the list given to MatchBlocks) at byte `offset`; basis -1: missing.
struct BlockLocation {
  int32_t basis = -1;
  uint64_t offset = 0;
  bool found() const { return basis >= 0; }
  bool operator==(const BlockLocation&) const = default;
};

// One location per block of the new object, in order. Block i covers
// [i * block_len, min((i + 1) * block_len, size)): the last may be short.
struct BlockMap {
  uint32_t block_len = 0;
  uint64_t size = 0;  // of the new object
  std::vector<BlockLocation> blocks;
  uint64_t BlockOffset(uint64_t i) const { return i * block_len; }
  uint64_t BlockLength(uint64_t i) const;
  uint64_t found_bytes() const;  // bytes of the blocks found
};

struct BlockMatchOptions {
  // Worker threads (0: one per core). The map does not depend on it.
  int threads = 0;
  // Try each block first at the basis offset where it is expected (its own
  // offset, or right after the previous block's match) before any rolling.
  // Off: every visited offset goes through the hash table (the plain rolling
  // scan); the map is the same, only slower. For tests and benchmarks.
  bool aligned_fast_path = true;
  // Also look inside the windows the greedy scan matched (offsets it jumped
  // over) for the blocks still missing after it: finds e.g. a duplicated
  // stretch of the new object at another phase than its first copy. Costs
  // a second rolling pass over all matched bytes whenever any block is
  // missing, so off by default (rdiff does not look there either).
  bool exhaustive = false;
  // Each basis is scanned in chunks of this many bytes (rounded up to whole
  // blocks), scanned in parallel; fixed, so the map is deterministic.
  uint64_t chunk_bytes = uint64_t{32} << 20;
  // The new object's XXH3-64 of each part of part_size bytes (a manifest's
  // part_xxh3_64 and part_size; empty: none; the viewed hashes must outlive
  // the call). The aligned fast path then takes every block lying in basis
  // parts whose bytes at the same offsets have those hashes without summing
  // the blocks (XXH3 runs ~10x faster than BLAKE2b): the map is the same,
  // short of a 64-bit hash collision (the caller's check of the whole object
  // stays the gate). A count other than ceil(new_size / part_size) is
  // InvalidArgument.
  std::span<const uint64_t> part_hashes;
  uint64_t part_size = 0;
};

// What the scan did (for benchmarks and --json).
struct BlockMatchStats {
  uint64_t basis_bytes = 0;   // bytes of all bases
  uint64_t rolled_bytes = 0;  // offsets visited by the rolling hash
  uint64_t strong_sums = 0;   // BLAKE2b sums computed
  uint64_t parts_hashed = 0;  // basis parts hashed (options.part_hashes)
  uint64_t part_bytes = 0;    // bytes of the blocks taken by a part's hash
};

// Scans the basis files (paths through env) for the blocks `signature`
// (checked: it must be the signature of an object of `new_size` bytes, else
// Corruption) describes. A block is found when the basis holds bytes with
// its weak and strong sum at an offset the scan visits: every offset of each
// chunk outside the blocks already matched there (rsync's greedy scan, as
// `rdiff delta`), and with options.exhaustive every offset; the last short
// block too (at any visited offset, not only at the basis's end). Equal blocks
// of the new object (same strong sum) are all satisfied by one match (librsync
// indexes only the first of them). Of several places holding a block, the map
// gives the first (lowest basis index, then lowest offset). Streamed: memory is
// the signature plus a window per thread. A basis that cannot be read is its
// IOError.
FERRY_EXPORT Result<BlockMap> MatchBlocks(
    const Signature& signature, uint64_t new_size, Env* env,
    const std::vector<std::string>& basis_paths,
    const BlockMatchOptions& options = {}, BlockMatchStats* stats = nullptr);

// What to do to build the new object from a BlockMap: copy the found blocks
// from the bases, fetch the rest. Every byte of the new object lies in
// exactly one copy or one fetch; both lists are sorted by new offset.
struct BlockPlan {
  struct Copy {
    int32_t basis = 0;
    uint64_t basis_offset = 0;
    uint64_t new_offset = 0;
    uint64_t length = 0;
    bool operator==(const Copy&) const = default;
  };
  struct Range {
    uint64_t offset = 0;
    uint64_t length = 0;
    bool operator==(const Range&) const = default;
  };
  std::vector<Copy> copies;    // adjacent blocks adjacent in a basis: one copy
  std::vector<Range> fetches;  // byte ranges of the new object to download
  uint64_t copy_bytes = 0;
  uint64_t fetch_bytes = 0;
};

// Missing blocks become ranges to fetch; two ranges with fewer than `gap`
// bytes between them become one (the found bytes between them are fetched,
// not copied: one GET instead of two, as S3 has no multi-range requests).
FERRY_EXPORT BlockPlan PlanRanges(const BlockMap& map, uint64_t gap);

}  // namespace ferry::delta

#endif  // FERRY_DELTA_H_
