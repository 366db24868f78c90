// lib/delta: applying an untrusted delta to a basis (docs/delta.md).
#include <cstring>

#include "delta/job.h"

namespace ferry::delta {

struct Patcher::Impl {
  const RandomAccessFile* basis = nullptr;
  uint64_t basis_size = 0;
  uint64_t max_output = 0;
  uint64_t written = 0;
  ByteSink out;
  std::unique_ptr<Job> job;

  // librsync's copy callback: the bytes of one COPY command, in pieces no
  // larger than its output space. A piece reaching past the basis end is
  // refused (librsync would otherwise rely on the callback to notice).
  static rs_result Copy(void* arg, rs_long_t pos, size_t* len, void** buf) {
    auto* self = static_cast<Impl*>(arg);
    const uint64_t size = self->basis_size;
    if (pos < 0 || static_cast<uint64_t>(pos) > size ||
        *len > size - static_cast<uint64_t>(pos)) {
      self->job->set_callback_error(Status::Corruption(
          "delta", "COPY reaches byte " +
                       std::to_string(static_cast<uint64_t>(pos) + *len) +
                       ", past the end of the basis (" + std::to_string(size) +
                       " bytes)"));
      return RS_CORRUPT;
    }
    std::string_view got;
    Status s = self->basis->Read(static_cast<uint64_t>(pos), *len, &got,
                                 static_cast<char*>(*buf));
    if (s.ok() && got.size() != *len)
      s = Status::IOError("basis", "shorter than when the patch began");
    if (!s.ok()) {
      self->job->set_callback_error(s);
      return RS_IO_ERROR;
    }
    if (got.data() != *buf && !got.empty())
      std::memcpy(*buf, got.data(), got.size());
    return RS_DONE;
  }

  Status Emit(std::string_view data) {
    if (data.size() > max_output - written)
      return Status::Corruption("delta", "makes more than the expected " +
                                             std::to_string(max_output) +
                                             " bytes");
    written += data.size();
    return out(data);
  }
};

Patcher::Patcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Patcher::~Patcher() = default;

Result<std::unique_ptr<Patcher>> Patcher::Create(const RandomAccessFile* basis,
                                                 uint64_t max_output,
                                                 ByteSink out) {
  QuietLibrsync();
  FERRY_ASSIGN_OR_RETURN(uint64_t size, basis->Size());
  auto impl = std::make_unique<Impl>();
  impl->basis = basis;
  impl->basis_size = size;
  impl->max_output = max_output;
  impl->out = std::move(out);
  Impl* raw = impl.get();
  impl->job = std::make_unique<Job>(
      rs_patch_begin(&Impl::Copy, raw), "delta",
      [raw](std::string_view data) { return raw->Emit(data); });
  return std::unique_ptr<Patcher>(new Patcher(std::move(impl)));
}

Status Patcher::Update(std::string_view delta_bytes) {
  return impl_->job->Feed(delta_bytes, false);
}

Result<uint64_t> Patcher::Finish() {
  FERRY_RETURN_IF_ERROR(impl_->job->Feed({}, true));
  return impl_->written;
}

}  // namespace ferry::delta
