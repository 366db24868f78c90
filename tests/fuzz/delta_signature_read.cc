// Fuzz target: the signature reader (lib/delta), fed untrusted bytes as sync
// fetches them from a bucket, in two pieces. Each input is refused with
// Corruption or accepted with its invariants (one of the accepted kinds,
// whole blocks), and an accepted one makes a delta that patches back.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ferry/delta.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferry::delta;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  SignatureLimits limits;
  limits.max_bytes = 1 << 20;
  SignatureLoader loader(limits);
  size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  ferry::Status s = loader.Update(bytes.substr(0, cut));
  if (s.ok()) s = loader.Update(bytes.substr(cut));
  auto sig =
      s.ok() ? loader.Finish() : ferry::Result<std::unique_ptr<Signature>>(s);
  if (!sig.ok()) {
    if (!sig.status().IsCorruption()) std::abort();
    return 0;
  }
  const SignatureParams& p = (*sig)->params();
  if (p.magic != 0x72730147 || p.strong_len < 8 || p.strong_len > 32 ||
      p.block_len < 128)
    std::abort();
  if (12 + (*sig)->blocks() * (4 + p.strong_len) != size) std::abort();
  std::string delta;
  auto builder = DeltaBuilder::Create(sig->get(), [&](std::string_view d) {
    delta.append(d);
    return ferry::Status::OK();
  });
  if (!builder.ok()) std::abort();
  std::string text(3000, 'a');
  if (!(*builder)->Update(text).ok() || !(*builder)->Finish().ok())
    std::abort();
  return 0;
}
