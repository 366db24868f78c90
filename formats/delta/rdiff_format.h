// The rdiff (librsync) signature and delta formats as ferry accepts them
// (formats/delta/README.md): constants and the checks made on a signature's
// bytes before librsync sees them. Pure bytes in, Status out; no IO.
//
// Thread-safety: free functions, safe from any thread.
#ifndef FERRY_FORMATS_DELTA_RDIFF_FORMAT_H_
#define FERRY_FORMATS_DELTA_RDIFF_FORMAT_H_

#include <cstdint>
#include <string_view>

#include "ferry/status.h"

namespace ferry::delta::format {

// Magic numbers (big-endian u32 at offset 0).
constexpr uint32_t kDeltaMagic = 0x72730236;        // "rs\x02" "6"
constexpr uint32_t kMd4SigMagic = 0x72730136;       // rollsum + MD4
constexpr uint32_t kBlake2SigMagic = 0x72730137;    // rollsum + BLAKE2
constexpr uint32_t kRkMd4SigMagic = 0x72730146;     // RabinKarp + MD4
constexpr uint32_t kRkBlake2SigMagic = 0x72730147;  // RabinKarp + BLAKE2

constexpr size_t kSigHeaderBytes = 12;  // magic, block_len, strong_len
// Accepted block lengths: librsync's rule gives 256 .. 2^25 for the file
// sizes a manifest allows (<= 2^50 bytes); a smaller block makes the
// signature a large fraction of the file, a larger one a useless delta.
constexpr uint32_t kMinBlockLen = 128;
constexpr uint32_t kMaxBlockLen = uint32_t{1} << 26;
// Strong sums: BLAKE2b truncated to at least 5 bytes (librsync's minimum
// for an empty file) and at most its 32. Published signatures use
// librsync's own minimum for the file's size (rs_sig_args with strong_len
// -1, `rdiff signature -S -1`: 7 from 1 MiB to about 240 MiB, 8 up to
// 2^40-byte files, 12 at 2^50). A short sum is safe for ferry: the basis is
// local, and a false block match only makes a wrong candidate that the
// manifest's per-part XXH3-64 and the object's XXH3-128 refuse (then it is
// fetched).
constexpr uint32_t kMinStrongLen = 5;
constexpr uint32_t kMaxStrongLen = 32;
// The strong sum length of signatures published before File.sig_strong_len
// (a manifest's 0).
constexpr uint32_t kLegacyStrongLen = 32;

struct SignatureHeader {
  uint32_t magic = 0;
  uint32_t block_len = 0;
  uint32_t strong_len = 0;
};

// Reads the 12-byte header; refuses every magic but RabinKarp + BLAKE2 (MD4
// kinds by name: CVE-2014-8242) and lengths outside the bounds above.
Status ParseSignatureHeader(std::string_view bytes, SignatureHeader* header);

// librsync's recommended block length for a file of `size` bytes
// (rs_sig_args): 256 up to 64 KiB, else floor(sqrt(size)) rounded down to a
// multiple of 128.
uint32_t RecommendedBlockLen(uint64_t size);

// The number of blocks a file of `file_size` bytes has.
uint64_t BlockCount(uint64_t file_size, uint32_t block_len);

// Checks a whole signature's length (header included): whole blocks only,
// and, when file_size is known (>= 0), exactly BlockCount of them.
Status CheckSignatureLength(const SignatureHeader& header, uint64_t total_bytes,
                            int64_t file_size);

}  // namespace ferry::delta::format

#endif  // FERRY_FORMATS_DELTA_RDIFF_FORMAT_H_
