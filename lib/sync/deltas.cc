// Signatures and deltas for publish (docs/delta.md, formats/delta/README.md).
#include "sync/deltas.h"

#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "delta/refine.h"
#include "ferry/delta.h"
#include "formats/delta/rdiff_delta.h"
#include "formats/delta/rdiff_format.h"
#include "sync/delta_refine.h"
#include "sync/layout.h"

namespace ferry::sync {
namespace {

Hash128 HashOf(const manifest::File& f) {
  Hash128 h;
  manifest::HashFromBytes(f.xxh3_128(), &h);
  return h;
}

// Reads a remote object into a signature loader as it arrives.
class LoaderSink : public ByteSink {
 public:
  explicit LoaderSink(delta::SignatureLoader* loader) : loader_(loader) {}
  Status Append(std::string_view data) override {
    read += data.size();
    return loader_->Update(data);
  }
  uint64_t read = 0;

 private:
  delta::SignatureLoader* loader_;
};

// zstd (level 3, content checksum) into a file; gives up with Cancelled once
// the output passes `limit` bytes (the delta would not be worth storing).
class ZstdFileSink {
 public:
  ZstdFileSink(std::unique_ptr<WritableFile> file, uint64_t limit)
      : file_(std::move(file)),
        limit_(limit),
        cctx_(ZSTD_createCCtx()),
        buf_(ZSTD_CStreamOutSize()) {
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
  }
  ~ZstdFileSink() { ZSTD_freeCCtx(cctx_); }
  Status Append(std::string_view data) { return Run(data, ZSTD_e_continue); }
  Status Finish() {
    FERRY_RETURN_IF_ERROR(Run({}, ZSTD_e_end));
    return file_->Close();
  }
  uint64_t written() const { return written_; }

 private:
  Status Run(std::string_view data, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    for (;;) {
      ZSTD_outBuffer out{buf_.data(), buf_.size(), 0};
      size_t left = ZSTD_compressStream2(cctx_, &out, &in, mode);
      if (ZSTD_isError(left))
        return Status::InvalidArgument("zstd", ZSTD_getErrorName(left));
      written_ += out.pos;
      if (written_ >= limit_) return Status::Cancelled("delta too large");
      FERRY_RETURN_IF_ERROR(
          file_->Append(std::string_view(buf_.data(), out.pos)));
      bool done = mode == ZSTD_e_end ? left == 0 : in.pos == in.size;
      if (done) return Status::OK();
    }
  }

  std::unique_ptr<WritableFile> file_;
  uint64_t limit_;
  uint64_t written_ = 0;
  ZSTD_CCtx* cctx_;
  std::vector<char> buf_;
};

// The parent object's stored signature, checked against its size. Errors
// (missing, damaged, unreachable) cost only the delta.
Result<std::unique_ptr<delta::Signature>> ParentSignature(
    Backend* backend, const manifest::File& old) {
  return FetchSignature(backend, HashOf(old), old.size(), old.sig_block_len(),
                        old.sig_strong_len());
}

// Refines a delta (docs/delta.md "Refining a delta"): the old object's blocks
// next to its literals, read from the bucket and checked against the old
// object's signature, let its copies grow into the literals. Writes the
// refined delta to out_path and returns its compressed size, or 0 when
// nothing was gained (nothing left at out_path). An error (a read that
// failed) leaves the caller's delta as it was.
Result<uint64_t> RefineDelta(Backend* backend, const manifest::File& old,
                             const delta::Signature& sig,
                             const delta::format::DeltaReader& made, Env* env,
                             const std::string& path,
                             const std::string& out_path, uint64_t limit,
                             const std::function<void(std::string_view)>& note,
                             DeltaWork* work) {
  if (made.literal_bytes() == 0) return 0;
  const std::vector<uint64_t> blocks =
      delta::BlocksAround(made.commands(), sig.params().block_len, old.size());
  if (blocks.empty()) return 0;
  const Hash128 from = HashOf(old);
  RefineReads reads;
  auto old_blocks =
      ReadOldBlocks(backend, ObjectKey(from), old.size(),
                    sig.params().block_len, blocks, kMaxRefineRead, &reads);
  work->refine_bytes_read += reads.bytes;
  work->refine_requests += reads.requests;
  FERRY_RETURN_IF_ERROR(old_blocks.status());
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewRandomAccessFile(path));
  delta::RefineStats stats;
  FERRY_ASSIGN_OR_RETURN(auto refined,
                         delta::RefineCommands(made.commands(), sig, old.size(),
                                               *old_blocks, *file, &stats));
  if (stats.blocks_refused > 0 && note)
    note(path + ": " + std::to_string(stats.blocks_refused) +
         " block(s) of the parent object " + from.ToHex() +
         " read from the bucket do not match its signature: not used");
  if (stats.literal_bytes_after >= stats.literal_bytes_before) return 0;
  FERRY_ASSIGN_OR_RETURN(auto out, env->NewWritableFile(out_path));
  ZstdFileSink zstd(std::move(out), limit);
  Status s = delta::WriteDelta(
      refined, *file, [&](std::string_view d) { return zstd.Append(d); });
  if (s.ok()) s = zstd.Finish();
  if (!s.ok()) {
    (void)env->RemoveFile(out_path);
    if (s.code() == Status::Code::kCancelled) return 0;  // not smaller
    return s;
  }
  ++work->deltas_refined;
  work->literal_bytes_saved +=
      stats.literal_bytes_before - stats.literal_bytes_after;
  return zstd.written();
}

// The delta from the old object (whose signature is `sig`) to the local
// file, refined, compressed into out_path: its compressed size, or Cancelled
// when that is not below half the file's size.
Result<uint64_t> MakeDelta(Backend* backend, const manifest::File& old,
                           const delta::Signature& sig, Env* env,
                           const LocalFile& now, const std::string& path,
                           const std::string& out_path,
                           const std::function<void(std::string_view)>& note,
                           DeltaWork* work) {
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewWritableFile(out_path));
  ZstdFileSink zstd(std::move(file), now.info.size / 2);
  delta::format::DeltaReader made;  // its commands, for the refinement
  Status s = delta::DeltaFile(sig, env, path, [&](std::string_view d) {
    FERRY_RETURN_IF_ERROR(made.Update(d));
    return zstd.Append(d);
  });
  if (s.ok()) s = made.Finish();
  if (s.ok()) s = zstd.Finish();
  if (!s.ok()) {
    (void)env->RemoveFile(out_path);
    return s;
  }
  const std::string refined_path = out_path + ".refined";
  auto refined = RefineDelta(backend, old, sig, made, env, path, refined_path,
                             zstd.written(), note, work);
  if (!refined.ok()) {
    (void)env->RemoveFile(refined_path);
    if (note)
      note(path + ": delta from " + HashOf(old).ToHex() + " not refined (" +
           refined.status().ToString() + ")");
    return zstd.written();
  }
  if (*refined == 0) return zstd.written();
  FERRY_RETURN_IF_ERROR(env->RenameFile(refined_path, out_path));
  return *refined;
}

// The signature file of a file: the one the scan made while hashing it, else
// one made now (a file the stat cache answered for is read for it).
Result<std::string> SignatureOf(Env* env, const LocalFile& f,
                                const std::string& path, DeltaWork* work) {
  if (!f.signature.empty()) return f.signature;
  Hash128 h;
  manifest::HashFromBytes(f.entry.xxh3_128(), &h);
  std::string tmp = JoinPath(work->tmp_dir, "sig-" + h.ToHex());
  FERRY_ASSIGN_OR_RETURN(auto out, env->NewWritableFile(tmp));
  FERRY_RETURN_IF_ERROR(delta::SignFile(
      env, path, [&](std::string_view d) { return out->Append(d); }));
  FERRY_RETURN_IF_ERROR(out->Close());
  auto st = env->Stat(path);
  if (!st.ok() || !SameFile(f.info, *st))
    return Status::IOError(path,
                           "changed while it was published: "
                           "nothing published; rerun");
  return tmp;
}

}  // namespace

namespace {

// What the signature of an object of `size` bytes may be (its manifest's
// sig_block_len and sig_strong_len, 0 meaning 32).
delta::SignatureLimits LimitsFor(uint64_t size, uint32_t sig_block_len,
                                 uint32_t sig_strong_len) {
  delta::SignatureLimits limits;
  limits.file_size = static_cast<int64_t>(size);
  limits.strong_len =
      sig_strong_len != 0 ? sig_strong_len : delta::format::kLegacyStrongLen;
  limits.max_bytes = SignatureBytes(size, sig_block_len, sig_strong_len);
  return limits;
}

}  // namespace

Result<std::unique_ptr<delta::Signature>> FetchSignature(
    Backend* backend, const Hash128& hash, uint64_t size,
    uint32_t sig_block_len, uint32_t sig_strong_len, uint64_t* bytes) {
  const delta::SignatureLimits limits =
      LimitsFor(size, sig_block_len, sig_strong_len);
  delta::SignatureLoader loader(limits);
  LoaderSink sink(&loader);
  // Never more than that asked: a bigger object there costs nothing.
  Status s =
      backend->Read(SigKey(hash), ByteRange{0, limits.max_bytes}, {}, &sink);
  if (!s.ok() && sink.read == 0 && !s.IsNotFound()) {
    // Refused before a byte came (shorter than such a signature, or a
    // server that ignores Range): read whole, for the loader to say what is
    // wrong (it refuses bytes past max_bytes as they come).
    s = backend->Read(SigKey(hash), {}, {}, &sink);
  }
  if (bytes != nullptr) *bytes = sink.read;
  FERRY_RETURN_IF_ERROR(s);
  return loader.Finish();
}

Result<std::unique_ptr<delta::Signature>> LoadSignatureFile(
    Env* env, const std::string& path, uint64_t size, uint32_t sig_block_len,
    uint32_t sig_strong_len) {
  const delta::SignatureLimits limits =
      LimitsFor(size, sig_block_len, sig_strong_len);
  delta::SignatureLoader loader(limits);
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewRandomAccessFile(path));
  std::vector<char> buf(static_cast<size_t>(
      std::min<uint64_t>(limits.max_bytes, uint64_t{1} << 20)));
  for (uint64_t at = 0; at < limits.max_bytes;) {
    const size_t n = static_cast<size_t>(
        std::min<uint64_t>(limits.max_bytes - at, buf.size()));
    std::string_view got;
    FERRY_RETURN_IF_ERROR(file->Read(at, n, &got, buf.data()));
    if (got.empty()) break;  // shorter: the loader says what is missing
    FERRY_RETURN_IF_ERROR(loader.Update(got));
    at += got.size();
  }
  return loader.Finish();
}

uint64_t SignatureBytes(uint64_t size, uint32_t sig_block_len,
                        uint32_t sig_strong_len) {
  const uint32_t strong =
      sig_strong_len != 0 ? sig_strong_len : delta::format::kLegacyStrongLen;
  return delta::format::kSigHeaderBytes +
         delta::format::BlockCount(size, sig_block_len) *
             (4 + uint64_t{strong});
}

std::string SigKey(const Hash128& hash) {
  return std::string(kSigsDir) + hash.ToHex();
}

bool ParseSigKey(std::string_view key, Hash128* hash) {
  if (key.substr(0, kSigsDir.size()) != kSigsDir) return false;
  return ParseHashHex(key.substr(kSigsDir.size()), hash);
}

std::string DeltaKey(const Hash128& from, const Hash128& to) {
  return std::string(kDeltasDir) + from.ToHex() + "-" + to.ToHex();
}

bool ParseDeltaKey(std::string_view key, Hash128* from, Hash128* to) {
  if (key.substr(0, kDeltasDir.size()) != kDeltasDir) return false;
  key.remove_prefix(kDeltasDir.size());
  return key.size() == 65 && key[32] == '-' &&
         ParseHashHex(key.substr(0, 32), from) &&
         ParseHashHex(key.substr(33), to);
}

uint32_t SigBlockLen(uint64_t size) {
  return size < kMinDeltaObject ? 0 : delta::format::RecommendedBlockLen(size);
}

uint32_t SigStrongLen(uint64_t size) {
  return SigBlockLen(size) == 0 ? 0
                                : delta::SignatureParamsFor(size).strong_len;
}

bool SignWhileHashing(const std::vector<manifest::File>& parent,
                      std::string_view path, uint64_t size) {
  if (SigBlockLen(size) == 0) return false;
  auto p = std::lower_bound(
      parent.begin(), parent.end(), path,
      [](const manifest::File& f, std::string_view p) { return f.path() < p; });
  return p == parent.end() || p->path() != path || p->size() != size ||
         p->sig_block_len() == 0;
}

void CarryDeltaFields(std::vector<LocalFile>* files,
                      const std::vector<manifest::File>& parent) {
  auto p = parent.begin();
  for (LocalFile& f : *files) {
    f.entry.set_sig_block_len(SigBlockLen(f.info.size));
    f.entry.set_sig_strong_len(SigStrongLen(f.info.size));
    f.entry.clear_deltas();
    while (p != parent.end() && p->path() < f.path) ++p;
    if (p != parent.end() && p->path() == f.path &&
        p->xxh3_128() == f.entry.xxh3_128())
      *f.entry.mutable_deltas() = p->deltas();
  }
}

Status DeltaWork::Begin(Env* env, const std::string& tmp_base) {
  tmp_dir = JoinPath(tmp_base, "tmp-" + std::to_string(::getpid()) + "-" +
                                   std::to_string(env->NowMicros()));
  Status s = env->CreateDirs(tmp_dir);
  if (!s.ok()) tmp_dir.clear();
  return s;
}

void DeltaWork::Cleanup(Env* env) {
  if (tmp_dir.empty()) return;
  if (auto children = env->GetChildren(tmp_dir); children.ok()) {
    for (const DirEntry& e : *children)
      (void)env->RemoveFile(JoinPath(tmp_dir, e.name));
  }
  (void)env->RemoveDir(tmp_dir);
  tmp_dir.clear();
}

Status MakeSignaturesAndDeltas(
    Backend* backend, Env* env, const std::string& root,
    std::vector<LocalFile>* files, const std::vector<manifest::File>& parent,
    const std::function<void(std::string_view)>& note, DeltaWork* work) {
  // raw 16 bytes -> the strong sum length of its stored signature
  std::map<std::string, uint32_t> signed_hashes;
  for (const manifest::File& f : parent)
    if (f.sig_block_len() != 0)
      signed_hashes.emplace(f.xxh3_128(), f.sig_strong_len());
  // (from, to) -> compressed size (0: dropped); two paths with the same
  // change share one delta.
  std::map<std::pair<std::string, std::string>, uint64_t> made;
  auto p = parent.begin();
  for (LocalFile& f : *files) {
    while (p != parent.end() && p->path() < f.path) ++p;
    if (f.entry.sig_block_len() == 0) continue;
    const std::string path = JoinPath(root, f.path);
    Hash128 h;
    manifest::HashFromBytes(f.entry.xxh3_128(), &h);
    auto [known, made_now] =
        signed_hashes.emplace(f.entry.xxh3_128(), f.entry.sig_strong_len());
    if (made_now) {
      FERRY_ASSIGN_OR_RETURN(std::string sig, SignatureOf(env, f, path, work));
      work->puts.push_back(PutItem{sig, SigKey(h)});
      ++work->signatures;
    }
    // The stored signature says how long its strong sums are (32 for one
    // published before File.sig_strong_len).
    f.entry.set_sig_strong_len(known->second);
    bool changed = p != parent.end() && p->path() == f.path &&
                   p->xxh3_128() != f.entry.xxh3_128();
    if (!changed || p->sig_block_len() == 0) continue;
    auto add = [&](uint64_t size) {
      manifest::Delta* d = f.entry.add_deltas();
      d->set_from_xxh3_128(p->xxh3_128());
      d->set_size(size);
    };
    auto seen = made.find({p->xxh3_128(), f.entry.xxh3_128()});
    if (seen != made.end()) {
      if (seen->second != 0) add(seen->second);
      continue;
    }
    const Hash128 from = HashOf(*p);
    auto sig = ParentSignature(backend, *p);
    if (!sig.ok()) {
      if (note)
        note(path + ": no delta from " + from.ToHex() + " (" +
             std::string(sig.status().message()) + ")");
      continue;
    }
    std::string tmp =
        JoinPath(work->tmp_dir, "delta-" + from.ToHex() + "-" + h.ToHex());
    auto size = MakeDelta(backend, *p, **sig, env, f, path, tmp, note, work);
    if (!size.ok()) {
      if (size.status().code() != Status::Code::kCancelled)
        return size.status();
      ++work->deltas_dropped;
      made[{p->xxh3_128(), f.entry.xxh3_128()}] = 0;
      continue;
    }
    made[{p->xxh3_128(), f.entry.xxh3_128()}] = *size;
    work->puts.push_back(PutItem{tmp, DeltaKey(from, h)});
    add(*size);
    ++work->deltas;
    work->delta_bytes += *size;
  }
  return Status::OK();
}

}  // namespace ferry::sync
