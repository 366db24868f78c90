// lib/delta: making a delta from a signature and the new bytes.
#include "delta/job.h"
#include "delta/signature_impl.h"

namespace ferry::delta {

struct DeltaBuilder::Impl {
  Impl(rs_job_t* job, ByteSink out) : job(job, "delta", std::move(out)) {}
  Job job;
};

DeltaBuilder::DeltaBuilder(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
DeltaBuilder::~DeltaBuilder() = default;

Result<std::unique_ptr<DeltaBuilder>> DeltaBuilder::Create(
    const Signature* signature, ByteSink out) {
  QuietLibrsync();
  // librsync reads the signature only (its hash table is built), but its
  // API takes it non-const.
  rs_job_t* job = rs_delta_begin(signature->impl_->sig);
  if (!job) return Status::ResourceExhausted("delta", "rs_delta_begin");
  return std::unique_ptr<DeltaBuilder>(
      new DeltaBuilder(std::make_unique<Impl>(job, std::move(out))));
}

Status DeltaBuilder::Update(std::string_view new_bytes) {
  return impl_->job.Feed(new_bytes, false);
}

Status DeltaBuilder::Finish() { return impl_->job.Feed({}, true); }

}  // namespace ferry::delta
