// formats/delta/README.md: the signature header rules.
#include "formats/delta/rdiff_format.h"

#include <cmath>
#include <string>

namespace ferry::delta::format {
namespace {

uint32_t BigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} << 24 | uint32_t{u[1]} << 16 | uint32_t{u[2]} << 8 |
         uint32_t{u[3]};
}

std::string Hex32(uint32_t v) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) s += kDigits[(v >> shift) & 15];
  return s;
}

}  // namespace

Status ParseSignatureHeader(std::string_view bytes, SignatureHeader* header) {
  if (bytes.size() < kSigHeaderBytes)
    return Status::Corruption("signature",
                              "truncated: " + std::to_string(bytes.size()) +
                                  " bytes, shorter than its 12-byte header");
  SignatureHeader h;
  h.magic = BigEndian32(bytes.data());
  h.block_len = BigEndian32(bytes.data() + 4);
  h.strong_len = BigEndian32(bytes.data() + 8);
  switch (h.magic) {
    case kRkBlake2SigMagic:
      break;
    case kMd4SigMagic:
    case kRkMd4SigMagic:
      return Status::Corruption(
          "signature", "uses MD4 strong sums (magic " + Hex32(h.magic) +
                           "), which are refused: forgeable blocks "
                           "(CVE-2014-8242); make it with BLAKE2");
    case kBlake2SigMagic:
      return Status::Corruption(
          "signature", "uses the old rollsum (magic " + Hex32(h.magic) +
                           "): only RabinKarp + BLAKE2 (0x72730147) is "
                           "accepted");
    case kDeltaMagic:
      return Status::Corruption("signature", "is a delta, not a signature");
    default:
      return Status::Corruption(
          "signature", "bad magic " + Hex32(h.magic) + " (want 0x72730147)");
  }
  if (h.block_len < kMinBlockLen || h.block_len > kMaxBlockLen)
    return Status::Corruption(
        "signature", "block length " + std::to_string(h.block_len) +
                         " outside " + std::to_string(kMinBlockLen) + ".." +
                         std::to_string(kMaxBlockLen));
  if (h.strong_len < kMinStrongLen || h.strong_len > kMaxStrongLen)
    return Status::Corruption(
        "signature", "strong sum length " + std::to_string(h.strong_len) +
                         " outside " + std::to_string(kMinStrongLen) + ".." +
                         std::to_string(kMaxStrongLen));
  *header = h;
  return Status::OK();
}

uint32_t RecommendedBlockLen(uint64_t size) {
  if (size <= 256 * 256) return 256;
  uint64_t r = static_cast<uint64_t>(std::sqrt(static_cast<double>(size)));
  while (r * r > size) --r;  // exact floor(sqrt) whatever the rounding
  while ((r + 1) * (r + 1) <= size) ++r;
  return static_cast<uint32_t>(r & ~uint64_t{127});
}

uint64_t BlockCount(uint64_t file_size, uint32_t block_len) {
  return file_size / block_len + (file_size % block_len != 0);
}

Status CheckSignatureLength(const SignatureHeader& header, uint64_t total_bytes,
                            int64_t file_size) {
  const uint64_t per_block = 4 + uint64_t{header.strong_len};
  const uint64_t body = total_bytes - kSigHeaderBytes;
  if (total_bytes < kSigHeaderBytes || body % per_block != 0)
    return Status::Corruption("signature",
                              "truncated: " + std::to_string(total_bytes) +
                                  " bytes is not a header plus whole " +
                                  std::to_string(per_block) + "-byte blocks");
  if (file_size >= 0) {
    uint64_t want =
        BlockCount(static_cast<uint64_t>(file_size), header.block_len);
    if (body / per_block != want)
      return Status::Corruption("signature",
                                "has " + std::to_string(body / per_block) +
                                    " blocks; a " + std::to_string(file_size) +
                                    "-byte file has " + std::to_string(want));
  }
  return Status::OK();
}

}  // namespace ferry::delta::format
