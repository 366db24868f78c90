// lib/delta: making and reading signatures (formats/delta/README.md).
#include <algorithm>

#include "delta/job.h"
#include "delta/signature_impl.h"
#include "formats/delta/rdiff_format.h"

namespace ferry::delta {

SignatureParams SignatureParamsFor(uint64_t size) {
  rs_magic_number magic = RS_RK_BLAKE2_SIG_MAGIC;
  size_t block_len = 0, strong_len = static_cast<size_t>(-1);  // minimum
  rs_result r = rs_sig_args(static_cast<rs_long_t>(size), &magic, &block_len,
                            &strong_len);
  SignatureParams p;
  p.magic = magic;
  p.block_len = static_cast<uint32_t>(block_len);
  p.strong_len = std::clamp(static_cast<uint32_t>(strong_len),
                            format::kMinStrongLen, format::kMaxStrongLen);
  (void)r;  // the recommended arguments are valid for every size
  return p;
}

struct SignatureBuilder::Impl {
  Impl(rs_job_t* job, ByteSink out) : job(job, "signature", std::move(out)) {}
  Job job;
  SignatureParams params;
  uint64_t size = 0, fed = 0;
};

SignatureBuilder::SignatureBuilder(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
SignatureBuilder::~SignatureBuilder() = default;

Result<std::unique_ptr<SignatureBuilder>> SignatureBuilder::Create(
    uint64_t size, ByteSink out) {
  QuietLibrsync();
  SignatureParams p = SignatureParamsFor(size);
  rs_job_t* job = rs_sig_begin(p.block_len, p.strong_len,
                               static_cast<rs_magic_number>(p.magic));
  if (!job) return Status::ResourceExhausted("signature", "rs_sig_begin");
  auto impl = std::make_unique<Impl>(job, std::move(out));
  impl->params = p;
  impl->size = size;
  return std::unique_ptr<SignatureBuilder>(
      new SignatureBuilder(std::move(impl)));
}

Status SignatureBuilder::Update(std::string_view data) {
  impl_->fed += data.size();
  return impl_->job.Feed(data, false);
}

Status SignatureBuilder::Finish() {
  FERRY_RETURN_IF_ERROR(impl_->job.Feed({}, true));
  if (impl_->fed != impl_->size)
    return Status::InvalidArgument(
        "signature", "made of " + std::to_string(impl_->fed) +
                         " bytes for a file of " + std::to_string(impl_->size) +
                         " (it changed while it was read?)");
  return Status::OK();
}

const SignatureParams& SignatureBuilder::params() const {
  return impl_->params;
}

Signature::Signature(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Signature::~Signature() = default;
const SignatureParams& Signature::params() const { return impl_->params; }
uint64_t Signature::blocks() const { return impl_->blocks; }

// The header is checked before librsync sees a byte of the stream; the
// length as bytes arrive (the cap) and at the end (whole blocks, count).
struct SignatureLoader::Impl {
  explicit Impl(const SignatureLimits& l) : limits(l) {}
  SignatureLimits limits;
  std::string head;  // the first 12 bytes, until they are checked
  format::SignatureHeader header;
  uint64_t total = 0;
  rs_signature_t* sig = nullptr;
  std::unique_ptr<Job> job;
  Status error;
  std::string record;  // a block's sums cut between two pieces
  std::vector<uint32_t> weak;
  std::vector<uint8_t> strong;
  void TakeSums(std::string_view data);
  ~Impl() {
    job.reset();
    if (sig) rs_free_sumset(sig);
  }
};

// Keeps each block's sums as they stream by (after the header).
void SignatureLoader::Impl::TakeSums(std::string_view data) {
  const size_t n = 4 + header.strong_len;
  auto take = [&](const unsigned char* r) {
    weak.push_back(uint32_t{r[0]} << 24 | uint32_t{r[1]} << 16 |
                   uint32_t{r[2]} << 8 | r[3]);
    strong.insert(strong.end(), r + 4, r + n);
  };
  if (!record.empty()) {
    size_t fill = std::min(data.size(), n - record.size());
    record.append(data.substr(0, fill));
    data.remove_prefix(fill);
    if (record.size() < n) return;
    take(reinterpret_cast<const unsigned char*>(record.data()));
    record.clear();
  }
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t whole = data.size() / n * n;
  for (size_t i = 0; i < whole; i += n) take(p + i);
  record.assign(data.substr(whole));
}

SignatureLoader::SignatureLoader(const SignatureLimits& limits)
    : impl_(std::make_unique<Impl>(limits)) {
  QuietLibrsync();
}
SignatureLoader::~SignatureLoader() = default;

Status SignatureLoader::Update(std::string_view data) {
  Impl& m = *impl_;
  if (!m.error.ok()) return m.error;
  m.total += data.size();
  if (m.total > m.limits.max_bytes) {
    m.error = Status::Corruption(
        "signature", "larger than its limit of " +
                         std::to_string(m.limits.max_bytes) + " bytes");
    return m.error;
  }
  if (!m.job) {
    size_t take =
        std::min(data.size(), format::kSigHeaderBytes - m.head.size());
    m.head.append(data.substr(0, take));
    data.remove_prefix(take);
    if (m.head.size() < format::kSigHeaderBytes) return Status::OK();
    m.error = format::ParseSignatureHeader(m.head, &m.header);
    if (!m.error.ok()) return m.error;
    if (m.limits.strong_len != 0 && m.header.strong_len != m.limits.strong_len)
      m.error = Status::Corruption("signature",
                                   "strong sum length " +
                                       std::to_string(m.header.strong_len) +
                                       " where its manifest says " +
                                       std::to_string(m.limits.strong_len));
    if (!m.error.ok()) return m.error;
    m.job =
        std::make_unique<Job>(rs_loadsig_begin(&m.sig), "signature",
                              [](std::string_view) { return Status::OK(); });
    m.error = m.job->Feed(m.head, false);
    if (!m.error.ok()) return m.error;
  }
  m.TakeSums(data);
  m.error = m.job->Feed(data, false);
  return m.error;
}

Result<std::unique_ptr<Signature>> SignatureLoader::Finish() {
  Impl& m = *impl_;
  if (!m.error.ok()) return m.error;
  if (!m.job) return format::ParseSignatureHeader(m.head, &m.header);
  FERRY_RETURN_IF_ERROR(
      format::CheckSignatureLength(m.header, m.total, m.limits.file_size));
  FERRY_RETURN_IF_ERROR(m.job->Feed({}, true));
  m.job.reset();
  FERRY_RETURN_IF_ERROR(RsStatus(rs_build_hash_table(m.sig), "signature"));
  auto impl = std::make_unique<Signature::Impl>();
  impl->sig = m.sig;
  m.sig = nullptr;
  impl->params = {m.header.magic, m.header.block_len, m.header.strong_len};
  impl->blocks =
      (m.total - format::kSigHeaderBytes) / (4 + m.header.strong_len);
  impl->weak = std::move(m.weak);
  impl->strong = std::move(m.strong);
  return std::unique_ptr<Signature>(new Signature(std::move(impl)));
}

}  // namespace ferry::delta
