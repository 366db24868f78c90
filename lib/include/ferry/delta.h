// rsync deltas inside files (docs/delta.md, formats/delta/README.md): rdiff-
// compatible signatures (RabinKarp + BLAKE2), deltas made from a signature
// and the new bytes, and patching a basis with a delta. Built on librsync's
// streaming job API: every job takes its input in pieces and hands its
// output to a sink as it is produced, so memory stays flat whatever the
// file size (a loaded signature is the one thing held whole: 36 bytes per
// block, about 0.2 % of a 256 MB file).
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
#include <string>
#include <string_view>

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
// rounded down to a multiple of 128; strong sums of 32 bytes.
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

}  // namespace ferry::delta

#endif  // FERRY_DELTA_H_
