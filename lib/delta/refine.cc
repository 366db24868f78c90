// lib/delta: boundary refinement of a delta (docs/delta.md).
#include "delta/refine.h"

#include <algorithm>

#include "delta/block_index.h"
#include "delta/rabin_karp.h"
#include "delta/signature_impl.h"
#include "formats/delta/rdiff_format.h"

namespace ferry::delta {
namespace {

// librsync's patch reads a literal's length into an int: longer literals go
// as several commands.
constexpr uint64_t kMaxLiteralCommand = 0x7fffffff;
constexpr size_t kReadChunk = 64 << 10;

Status ReadExactly(const RandomAccessFile& file, uint64_t offset, size_t n,
                   std::string* out) {
  out->resize(n);
  std::string_view got;
  FERRY_RETURN_IF_ERROR(file.Read(offset, n, &got, out->data()));
  if (got.size() != n)
    return Status::IOError("delta", "the new file is shorter than its delta");
  if (got.data() != out->data()) out->assign(got);
  return Status::OK();
}

class OldBlocks {
 public:
  // The sums of the old object's signature.
  OldBlocks(const SignatureParams& params, const std::vector<uint32_t>& weak,
            const std::vector<uint8_t>& strong, uint64_t old_size,
            const std::map<uint64_t, std::string>& bytes, RefineStats* stats)
      : params_(params),
        weak_(weak),
        strong_(strong),
        old_size_(old_size),
        bytes_(bytes),
        stats_(stats) {}

  // The checked bytes of block i, or null.
  const std::string* Get(uint64_t i) {
    auto it = bytes_.find(i);
    if (it == bytes_.end()) return nullptr;
    auto [seen, fresh] = checked_.emplace(i, false);
    if (fresh) {
      seen->second = Matches(i, it->second);
      ++(seen->second ? stats_->blocks_used : stats_->blocks_refused);
    }
    return seen->second ? &it->second : nullptr;
  }

 private:
  bool Matches(uint64_t i, const std::string& b) const {
    const uint64_t bl = params_.block_len;
    if (b.size() != std::min<uint64_t>(bl, old_size_ - i * bl)) return false;
    const auto* p = reinterpret_cast<const uint8_t*>(b.data());
    if (rk::Sum(p, b.size()) != weak_[i]) return false;
    uint64_t sums = 0;
    StrongSum strong(p, b.size(), &sums);
    const uint32_t sl = params_.strong_len;
    return strong.Equals(strong_.data() + i * sl, sl);
  }

  const SignatureParams& params_;
  const std::vector<uint32_t>& weak_;
  const std::vector<uint8_t>& strong_;
  uint64_t old_size_;
  const std::map<uint64_t, std::string>& bytes_;
  RefineStats* stats_;
  std::map<uint64_t, bool> checked_;
};

}  // namespace

std::vector<uint64_t> BlocksAround(const std::vector<DeltaCommand>& commands,
                                   uint32_t block_len, uint64_t old_size) {
  std::vector<uint64_t> blocks;
  if (block_len == 0) return blocks;
  for (size_t i = 0; i < commands.size(); ++i) {
    if (commands[i].copy) continue;
    if (i > 0 && commands[i - 1].copy) {
      uint64_t end = commands[i - 1].old_offset + commands[i - 1].length;
      if (end % block_len == 0 && end < old_size)
        blocks.push_back(end / block_len);
    }
    if (i + 1 < commands.size() && commands[i + 1].copy) {
      uint64_t start = commands[i + 1].old_offset;
      if (start % block_len == 0 && start > 0 && start <= old_size)
        blocks.push_back(start / block_len - 1);
    }
  }
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  return blocks;
}

Result<std::vector<DeltaCommand>> RefineCommands(
    const std::vector<DeltaCommand>& commands, const Signature& old_sig,
    uint64_t old_size, const std::map<uint64_t, std::string>& old_blocks,
    const RandomAccessFile& new_file, RefineStats* stats) {
  RefineStats ignored;
  if (stats == nullptr) stats = &ignored;
  const auto& sig = SignatureAccess::Of(old_sig);
  const uint64_t bl = sig.params.block_len;
  if (sig.blocks != format::BlockCount(old_size, sig.params.block_len))
    return Status::InvalidArgument("refine", "the signature is not that of a " +
                                                 std::to_string(old_size) +
                                                 "-byte object");
  OldBlocks blocks(sig.params, sig.weak, sig.strong, old_size, old_blocks,
                   stats);
  std::vector<DeltaCommand> out = commands;
  std::string now;
  for (size_t i = 0; i < out.size(); ++i) {
    DeltaCommand& lit = out[i];
    if (lit.copy) continue;
    stats->literal_bytes_before += lit.length;
    // The copy before grows forward into the literal's head.
    if (i > 0 && out[i - 1].copy) {
      DeltaCommand& prev = out[i - 1];
      const uint64_t end = prev.old_offset + prev.length;
      const std::string* old =
          end % bl == 0 && end < old_size ? blocks.Get(end / bl) : nullptr;
      if (old != nullptr) {
        size_t n = std::min<uint64_t>(lit.length, old->size());
        FERRY_RETURN_IF_ERROR(ReadExactly(new_file, lit.new_offset, n, &now));
        size_t k = std::mismatch(now.begin(), now.end(), old->begin()).first -
                   now.begin();
        prev.length += k;
        lit.new_offset += k;
        lit.length -= k;
      }
    }
    // The copy after grows backward into the literal's tail.
    if (lit.length > 0 && i + 1 < out.size() && out[i + 1].copy) {
      DeltaCommand& next = out[i + 1];
      const uint64_t start = next.old_offset;
      const std::string* old = start % bl == 0 && start > 0 && start <= old_size
                                   ? blocks.Get(start / bl - 1)
                                   : nullptr;
      if (old != nullptr) {
        size_t n = std::min<uint64_t>(lit.length, old->size());
        FERRY_RETURN_IF_ERROR(
            ReadExactly(new_file, lit.new_offset + lit.length - n, n, &now));
        size_t k =
            std::mismatch(now.rbegin(), now.rend(), old->rbegin()).first -
            now.rbegin();
        next.old_offset -= k;
        next.new_offset -= k;
        next.length += k;
        lit.length -= k;
      }
    }
    stats->literal_bytes_after += lit.length;
  }
  std::erase_if(out, [](const DeltaCommand& c) { return c.length == 0; });
  return out;
}

Status WriteDelta(const std::vector<DeltaCommand>& commands,
                  const RandomAccessFile& new_file, ByteSink out) {
  format::DeltaWriter writer(std::move(out));
  DeltaCommand pending;  // length 0: none
  std::vector<char> scratch(kReadChunk);
  auto flush = [&]() -> Status {
    if (pending.length == 0) return Status::OK();
    if (pending.copy) {
      FERRY_RETURN_IF_ERROR(writer.Copy(pending.old_offset, pending.length));
    } else {
      for (uint64_t done = 0; done < pending.length;) {
        uint64_t cmd = std::min(pending.length - done, kMaxLiteralCommand);
        FERRY_RETURN_IF_ERROR(writer.LiteralHeader(cmd));
        for (uint64_t left = cmd; left > 0;) {
          std::string_view got;
          size_t n = std::min<uint64_t>(left, scratch.size());
          FERRY_RETURN_IF_ERROR(new_file.Read(pending.new_offset + done, n,
                                              &got, scratch.data()));
          if (got.size() != n)
            return Status::IOError("delta",
                                   "the new file is shorter than its delta");
          FERRY_RETURN_IF_ERROR(writer.Bytes(got));
          done += n;
          left -= n;
        }
      }
    }
    pending.length = 0;
    return Status::OK();
  };
  for (const DeltaCommand& c : commands) {
    if (c.length == 0) continue;
    const bool continues =
        pending.length > 0 && c.copy == pending.copy &&
        c.new_offset == pending.new_offset + pending.length &&
        (!c.copy || c.old_offset == pending.old_offset + pending.length);
    if (continues) {
      pending.length += c.length;
      continue;
    }
    FERRY_RETURN_IF_ERROR(flush());
    pending = c;
  }
  FERRY_RETURN_IF_ERROR(flush());
  return writer.End();
}

}  // namespace ferry::delta
