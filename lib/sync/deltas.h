// The publish side of issue 13 (docs/delta.md): each object of at least
// kMinDeltaObject bytes gets an rdiff signature in the bucket, and each path
// whose content changed since the parent gets a zstd-compressed rdiff delta
// from the parent's object, made from the parent's stored signature (no old
// bytes needed), kept when smaller than half the object. Keys and their
// parsing for gc too.
//
// Thread-safety: functions of their arguments; one call at a time per
// DeltaWork.
#ifndef FERRY_LIB_SYNC_DELTAS_H_
#define FERRY_LIB_SYNC_DELTAS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/delta.h"
#include "ferry/env.h"
#include "ferry/hash.h"
#include "ferry/remote.h"
#include "ferry/transfer.h"
#include "formats/manifest/manifest.h"
#include "sync/tree_scan.h"

namespace ferry::sync {

inline constexpr std::string_view kSigsDir = ".ferry/sigs/";
inline constexpr std::string_view kDeltasDir = ".ferry/deltas/";
// Smaller objects are fetched whole: a signature and a delta would save less
// than their own requests cost.
inline constexpr uint64_t kMinDeltaObject = uint64_t{1} << 20;

std::string SigKey(const Hash128& hash);
bool ParseSigKey(std::string_view key, Hash128* hash);
std::string DeltaKey(const Hash128& from, const Hash128& to);
bool ParseDeltaKey(std::string_view key, Hash128* from, Hash128* to);

// The stored signature of an object of `size` bytes (its manifest's
// sig_block_len and sig_strong_len, 0 meaning 32), fetched (a ranged GET of
// exactly the length such a signature has, so a longer object sends no more;
// refused before any byte, a second GET of the whole object, the loader
// capping it), checked against the size and the strong sum length and
// loaded; *bytes gets the bytes read (also on failure).
Result<std::unique_ptr<delta::Signature>> FetchSignature(
    Backend* backend, const Hash128& hash, uint64_t size,
    uint32_t sig_block_len, uint32_t sig_strong_len, uint64_t* bytes = nullptr);

// The same checks and loading for such a signature already fetched into
// the local file at path (block reuse fetches them through the transfer
// engine): only its first SignatureBytes bytes are read (the rest of a
// longer file is not), a shorter file is refused.
Result<std::unique_ptr<delta::Signature>> LoadSignatureFile(
    Env* env, const std::string& path, uint64_t size, uint32_t sig_block_len,
    uint32_t sig_strong_len);

// The length of such a signature: 12 + blocks × (4 + strong sum length).
uint64_t SignatureBytes(uint64_t size, uint32_t sig_block_len,
                        uint32_t sig_strong_len);

// File.sig_block_len for an object of `size` bytes (0: none below the
// minimum).
uint32_t SigBlockLen(uint64_t size);

// File.sig_strong_len for a signature made now of an object of `size` bytes
// (0 when SigBlockLen is).
uint32_t SigStrongLen(uint64_t size);

// Sets sig_block_len and sig_strong_len on every file, and copies the parent's
// deltas onto the files whose path and content the parent had (so an unchanged
// tree gives the parent's records). Both lists sorted by path.
void CarryDeltaFields(std::vector<LocalFile>* files,
                      const std::vector<manifest::File>& parent);

// Whether a file of `size` bytes at `path` is worth signing while it is
// hashed, before its hash is known: an object of at least kMinDeltaObject
// bytes, unless the parent (sorted by path) has a signed file of that size
// at that path (then it most likely holds the same bytes, whose signature is
// already stored; MakeSignaturesAndDeltas reads it again if not).
bool SignWhileHashing(const std::vector<manifest::File>& parent,
                      std::string_view path, uint64_t size);

struct DeltaWork {
  std::string tmp_dir;          // made by Begin, removed by Cleanup
  std::vector<PutItem> puts;    // signatures and deltas to upload
  uint64_t signatures = 0;      // made
  uint64_t deltas = 0;          // made and kept
  uint64_t delta_bytes = 0;     // their compressed size
  uint64_t deltas_dropped = 0;  // not smaller than half the object
  // Refinement (docs/delta.md): deltas made smaller by it, the literal bytes
  // it turned into copies, and the old object's bytes and GETs it read.
  uint64_t deltas_refined = 0;
  uint64_t literal_bytes_saved = 0;
  uint64_t refine_bytes_read = 0;
  uint64_t refine_requests = 0;
  // Makes tmp_dir, a new folder under tmp_base: the scan's signatures
  // (ScanOptions::sign_dir) and the deltas are made there.
  Status Begin(Env* env, const std::string& tmp_base);
  // Removes tmp_dir and every file in it.
  void Cleanup(Env* env);
};

// Lists the signature of every file with sig_block_len whose object the
// parent did not already have a signature for (the one the scan made,
// LocalFile::signature, else made now in work->tmp_dir; a file whose object
// the parent signed takes the parent's sig_strong_len), and makes a delta
// for every changed path whose parent object has one (adding it to the
// file's entry). A missing or damaged parent signature only costs that delta
// (a note says why); a local file that cannot be read fails the call. Needs
// work->Begin.
Status MakeSignaturesAndDeltas(
    Backend* backend, Env* env, const std::string& root,
    std::vector<LocalFile>* files, const std::vector<manifest::File>& parent,
    const std::function<void(std::string_view)>& note, DeltaWork* work);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_DELTAS_H_
