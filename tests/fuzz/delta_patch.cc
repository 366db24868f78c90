// Fuzz target: the patch applier (lib/delta), fed an untrusted delta against
// a fixed 4 KiB basis (byte i is (i * 7 + 3) mod 256, as the corpus was made
// against). Each input ends OK or refused with Corruption, and the output
// never exceeds the cap.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "ferry/delta.h"

namespace {

class StringFile : public ferry::RandomAccessFile {
 public:
  explicit StringFile(std::string data) : data_(std::move(data)) {}
  ferry::Status Read(uint64_t offset, size_t n, std::string_view* result,
                     char* scratch) const override {
    if (offset > data_.size()) offset = data_.size();
    n = std::min<uint64_t>(n, data_.size() - offset);
    std::memcpy(scratch, data_.data() + offset, n);
    *result = std::string_view(scratch, n);
    return ferry::Status::OK();
  }
  ferry::Result<uint64_t> Size() const override { return data_.size(); }

 private:
  std::string data_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferry::delta;
  static const StringFile* basis = [] {
    std::string b(4096, '\0');
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>(i * 7 + 3);
    return new StringFile(b);
  }();
  constexpr uint64_t kCap = 1 << 16;
  uint64_t out = 0;
  auto patcher = Patcher::Create(basis, kCap, [&](std::string_view d) {
    out += d.size();
    return ferry::Status::OK();
  });
  if (!patcher.ok()) std::abort();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ferry::Status s = (*patcher)->Update(bytes);
  auto n = s.ok() ? (*patcher)->Finish() : ferry::Result<uint64_t>(s);
  if (out > kCap) std::abort();
  if (!n.ok() && !n.status().IsCorruption()) std::abort();
  if (n.ok() && *n != out) std::abort();
  return 0;
}
