// A Backend that forwards every call to another one (as leveldb's
// EnvWrapper does for Env): a wrapper overrides only the calls it changes —
// to count, pause or inject faults — and stays correct when Backend gains a
// call.
#ifndef FERRY_INCLUDE_FERRY_BACKEND_WRAPPER_H_
#define FERRY_INCLUDE_FERRY_BACKEND_WRAPPER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "ferry/remote.h"

namespace ferry {

class BackendWrapper : public Backend {
 public:
  // Forwards to target, which must outlive the wrapper.
  explicit BackendWrapper(Backend* target) : target_(target) {}
  // Forwards to target and owns it.
  explicit BackendWrapper(std::unique_ptr<Backend> target)
      : owned_(std::move(target)), target_(owned_.get()) {}

  Backend* target() const { return target_; }

  const BackendCaps& caps() const override { return target_->caps(); }
  std::string Describe() const override { return target_->Describe(); }
  Status List(std::string_view prefix, const ListOptions& options,
              const std::function<Status(const ObjectInfo&)>& visit) override {
    return target_->List(prefix, options, visit);
  }
  Result<ObjectInfo> Stat(std::string_view key) override {
    return target_->Stat(key);
  }
  Result<bool> FolderExists() override { return target_->FolderExists(); }
  Status Read(std::string_view key, const ByteRange& range,
              const ReadOptions& options, ByteSink* sink) override {
    return target_->Read(key, range, options, sink);
  }
  Result<SmallObject> ReadIfChanged(std::string_view key,
                                    std::string_view if_none_match,
                                    uint64_t max_bytes) override {
    return target_->ReadIfChanged(key, if_none_match, max_bytes);
  }
  Result<ObjectInfo> Write(std::string_view key, ByteSource* source,
                           const WriteOptions& options) override {
    return target_->Write(key, source, options);
  }
  Status Delete(std::string_view key) override { return target_->Delete(key); }
  Result<bool> DeleteIfPresent(std::string_view key) override {
    return target_->DeleteIfPresent(key);
  }

 private:
  std::unique_ptr<Backend> owned_;
  Backend* target_;
};

}  // namespace ferry

#endif  // FERRY_INCLUDE_FERRY_BACKEND_WRAPPER_H_
