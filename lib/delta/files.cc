// lib/delta: whole files through Env, streamed in constant memory.
#include <vector>

#include "ferry/delta.h"

namespace ferry::delta {
namespace {

constexpr size_t kReadBuffer = 64 << 10;

// Feeds every byte of the file at path to `take`, in order.
template <typename Take>
Status StreamFile(Env* env, const std::string& path, Take take) {
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewSequentialFile(path));
  std::vector<char> scratch(kReadBuffer);
  for (;;) {
    std::string_view got;
    FERRY_RETURN_IF_ERROR(file->Read(scratch.size(), &got, scratch.data()));
    if (got.empty()) return Status::OK();
    FERRY_RETURN_IF_ERROR(take(got));
  }
}

}  // namespace

Status SignFile(Env* env, const std::string& path, ByteSink out) {
  FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(path));
  FERRY_ASSIGN_OR_RETURN(auto builder,
                         SignatureBuilder::Create(info.size, std::move(out)));
  FERRY_RETURN_IF_ERROR(StreamFile(
      env, path, [&](std::string_view d) { return builder->Update(d); }));
  Status s = builder->Finish();
  return s.ok() ? s : s.WithContext(path);
}

Result<std::unique_ptr<Signature>> LoadSignatureFile(
    Env* env, const std::string& path, const SignatureLimits& limits) {
  SignatureLoader loader(limits);
  Status s = StreamFile(env, path,
                        [&](std::string_view d) { return loader.Update(d); });
  if (!s.ok()) return s.IsCorruption() ? s.WithContext(path) : s;
  auto sig = loader.Finish();
  if (!sig.ok()) return sig.status().WithContext(path);
  return sig;
}

Status DeltaFile(const Signature& signature, Env* env,
                 const std::string& new_path, ByteSink out) {
  FERRY_ASSIGN_OR_RETURN(auto builder,
                         DeltaBuilder::Create(&signature, std::move(out)));
  FERRY_RETURN_IF_ERROR(StreamFile(
      env, new_path, [&](std::string_view d) { return builder->Update(d); }));
  return builder->Finish();
}

Result<uint64_t> PatchFile(Env* env, const std::string& basis_path,
                           const std::string& delta_path, uint64_t max_output,
                           ByteSink out) {
  FERRY_ASSIGN_OR_RETURN(auto basis, env->NewRandomAccessFile(basis_path));
  FERRY_ASSIGN_OR_RETURN(
      auto patcher, Patcher::Create(basis.get(), max_output, std::move(out)));
  Status s = StreamFile(env, delta_path,
                        [&](std::string_view d) { return patcher->Update(d); });
  if (!s.ok()) return s.IsCorruption() ? s.WithContext(delta_path) : s;
  auto n = patcher->Finish();
  if (!n.ok()) return n.status().WithContext(delta_path);
  return n;
}

}  // namespace ferry::delta
