// Path 2 of a sync: objects patched from deltas (docs/delta.md "Sync side").
#include "sync/fetch_paths.h"

#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "ferry/delta.h"
#include "ferry/hash.h"
#include "ferry/transfer.h"
#include "formats/delta/rdiff_format.h"
#include "formats/manifest/manifest.h"
#include "sync/deltas.h"
#include "sync/fetching.h"
#include "sync/fs_util.h"
#include "sync/layout.h"

namespace ferry::sync {
namespace {

// A delta as it arrives: counted against the size the manifest lists (a
// byte more is an error naming the key `what`: the stored object is not
// the one listed), zstd-decompressed (window capped) and fed to the
// patcher.
class DeltaSink : public ByteSink {
 public:
  DeltaSink(std::string what, uint64_t listed, delta::Patcher* patcher)
      : what_(std::move(what)),
        listed_(listed),
        patcher_(patcher),
        dctx_(ZSTD_createDCtx()),
        buf_(ZSTD_DStreamOutSize()) {
    ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kDeltaWindowLog);
  }
  ~DeltaSink() override { ZSTD_freeDCtx(dctx_); }

  Status Append(std::string_view data) override {
    read_ += data.size();
    if (read_ > listed_)
      return Status::Corruption(what_, "the object is longer than the " +
                                           std::to_string(listed_) +
                                           " bytes the manifest lists");
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    while (in.pos < in.size) {
      if (frame_done_)
        return Status::Corruption("delta", "bytes after its zstd frame");
      ZSTD_outBuffer out{buf_.data(), buf_.size(), 0};
      const size_t r = ZSTD_decompressStream(dctx_, &out, &in);
      if (ZSTD_isError(r))
        return Status::Corruption("delta",
                                  std::string("zstd: ") + ZSTD_getErrorName(r));
      frame_done_ = r == 0;
      if (out.pos > 0)
        FERRY_RETURN_IF_ERROR(
            patcher_->Update(std::string_view(buf_.data(), out.pos)));
    }
    return Status::OK();
  }

  // After the last byte: the whole listed size, one complete frame.
  Status Finish() const {
    if (read_ != listed_)
      return Status::Corruption(
          what_, "the object has " + std::to_string(read_) +
                     " bytes, the manifest lists " + std::to_string(listed_));
    if (!frame_done_)
      return Status::Corruption("delta", "its zstd frame is cut short");
    return Status::OK();
  }
  uint64_t read() const { return read_; }

 private:
  std::string what_;
  uint64_t listed_;
  delta::Patcher* patcher_;
  ZSTD_DCtx* dctx_;
  std::vector<char> buf_;
  uint64_t read_ = 0;
  bool frame_done_ = false;
};

// One patch into PatchPath; on success the file is checked, complete and
// renamed to the object's partial path. *fetched: delta bytes read.
Status PatchOne(Env* env, const Cache& cache, Backend* backend,
                const DeltaPlan& plan, bool fsync, uint64_t* fetched) {
  const CacheKey& k = plan.target;
  const std::string part = PatchPath(cache, k);
  FERRY_ASSIGN_OR_RETURN(
      auto basis, env->NewRandomAccessFile(cache.ObjectPath(plan.basis)));
  FERRY_ASSIGN_OR_RETURN(auto out, env->NewWritableFile(part));
  Hasher128 hasher;
  FERRY_ASSIGN_OR_RETURN(
      auto patcher,
      delta::Patcher::Create(basis.get(), k.size, [&](std::string_view d) {
        hasher.Update(d);
        return out->Append(d);
      }));
  if (plan.delta_size == 0)
    return Status::Corruption("delta", "the manifest lists it as empty");
  const std::string key = DeltaKey(plan.basis.hash, k.hash);
  DeltaSink sink(key, plan.delta_size, patcher.get());
  // The whole object, not a range of the listed size: a bigger object at
  // the delta's key (a lie, a mistake) is reported, not read in part as if
  // it were the delta. The sink stops the GET at the first byte past the
  // listed size (what a server sent meanwhile is at most a socket buffer).
  Status s = backend->Read(key, ByteRange{}, {}, &sink);
  *fetched = sink.read();
  FERRY_RETURN_IF_ERROR(s);
  FERRY_RETURN_IF_ERROR(sink.Finish());
  FERRY_ASSIGN_OR_RETURN(uint64_t n, patcher->Finish());
  if (n != k.size)
    return Status::Corruption("delta", "made " + std::to_string(n) +
                                           " bytes, the manifest says " +
                                           std::to_string(k.size));
  const Hash128 h = hasher.Digest();
  if (!(h == k.hash))
    return Status::Corruption("delta", "made bytes of XXH3-128 " + h.ToHex() +
                                           ", the manifest says " +
                                           k.hash.ToHex());
  if (fsync) FERRY_RETURN_IF_ERROR(out->Sync());
  FERRY_RETURN_IF_ERROR(out->Close());
  return env->RenameFile(part, cache.PartialPath(k));
}

// Runs job(0..n-1) on up to `threads` threads (this one included).
void RunJobs(size_t n, int threads, const std::function<void(size_t)>& job) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) job(i);
  };
  const size_t t = std::min<size_t>(std::max(1, threads), n);
  std::vector<std::thread> pool;
  for (size_t i = 1; i < t; ++i) pool.emplace_back(work);
  work();
  for (std::thread& th : pool) th.join();
}

// The object's bytes, in order, into its part file one part at a time:
// a part is held until complete and checked against the manifest's XXH3-64
// before it is written (and hashed for the whole XXH3-128). A part that
// does not match is dropped (bad_part; the file still ends at its first
// byte). Without part hashes the bytes go in 1 MiB at a time, unchecked.
class PartWriter : public ByteSink {
 public:
  PartWriter(WritableFile* out, Hasher128* hasher, uint64_t size,
             const std::vector<uint64_t>& hashes, uint64_t part_size)
      : out_(out),
        hasher_(hasher),
        size_(size),
        hashes_(hashes),
        unit_(hashes.empty() ? uint64_t{1} << 20 : part_size) {
    // One part's room, taken once: grown by appends, a 8 MiB part held
    // 16 MiB (4 objects at once: +52 MB of peak RSS on 16 MB shards).
    buf_.reserve(static_cast<size_t>(std::min(unit_, size_)));
  }

  Status Append(std::string_view data) override {
    while (!data.empty()) {
      const uint64_t end = std::min(size_, written_ + unit_);
      if (pos() == end)
        return Status::Corruption(
            "blocks", "more bytes than the object's " + std::to_string(size_));
      const size_t n =
          static_cast<size_t>(std::min<uint64_t>(end - pos(), data.size()));
      buf_.append(data.substr(0, n));
      data.remove_prefix(n);
      if (pos() == end) FERRY_RETURN_IF_ERROR(Flush());
    }
    return Status::OK();
  }

  uint64_t pos() const { return written_ + buf_.size(); }
  bool checks() const { return !hashes_.empty(); }
  uint64_t unit() const { return unit_; }
  // The bytes of part p: [p * unit, min((p + 1) * unit, size)); none
  // past the end.
  ByteRange Part(uint64_t p) const {
    if (p >= (size_ + unit_ - 1) / unit_) return ByteRange{size_, 0};
    return ByteRange{p * unit_, std::min(unit_, size_ - p * unit_)};
  }
  // The part that failed its check last (dropped), if any.
  std::optional<uint64_t> bad_part;

 private:
  Status Flush() {
    const uint64_t p = written_ / unit_;
    if (checks() && manifest::PartHash(buf_) != hashes_[p]) {
      bad_part = p;
      buf_.clear();
      return Status::Corruption("blocks", "part " + std::to_string(p) +
                                              " does not match its XXH3-64");
    }
    hasher_->Update(buf_);
    FERRY_RETURN_IF_ERROR(out_->Append(buf_));
    written_ += buf_.size();
    buf_.clear();
    return Status::OK();
  }

  WritableFile* out_;
  Hasher128* hasher_;
  uint64_t size_;
  const std::vector<uint64_t>& hashes_;
  uint64_t unit_;
  uint64_t written_ = 0;
  std::string buf_;
};

// Passes bytes on, counting them.
class CountingSink : public ByteSink {
 public:
  explicit CountingSink(ByteSink* out) : out_(out) {}
  Status Append(std::string_view data) override {
    n += data.size();
    return out_->Append(data);
  }
  uint64_t n = 0;

 private:
  ByteSink* out_;
};

struct BlockJob {
  CacheKey target;
  uint32_t sig_block_len = 0, sig_strong_len = 0;
  std::vector<std::string> bases;
  uint64_t window = 0;  // of each basis, the bytes scanned and copied from
  // The manifest's XXH3-64 of each part of part_size bytes (or none).
  std::vector<uint64_t> part_hashes;
  uint64_t part_size = 0;
};

// What one object's block reuse did.
struct BlockCounts {
  uint64_t fetched = 0;  // signature and range bytes read
  uint64_t copied = 0;   // from the bases
  uint64_t resumed = 0;  // a killed run's checked parts kept
  uint64_t refetched_parts = 0;
  uint64_t part_matched = 0;  // of copied: blocks confirmed by part hashes
  uint64_t requests = 0;      // Backend::Read's (not the engine's)
};

// A file seen only up to `limit` bytes: as if it ended there.
class WindowFile : public RandomAccessFile {
 public:
  WindowFile(std::unique_ptr<RandomAccessFile> file, uint64_t limit)
      : file_(std::move(file)), limit_(limit) {}
  Status Read(uint64_t offset, size_t n, std::string_view* result,
              char* scratch) const override {
    if (offset >= limit_) {
      *result = {};
      return Status::OK();
    }
    return file_->Read(
        offset, static_cast<size_t>(std::min<uint64_t>(n, limit_ - offset)),
        result, scratch);
  }
  Result<uint64_t> Size() const override {
    FERRY_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    return std::min(size, limit_);
  }

 private:
  std::unique_ptr<RandomAccessFile> file_;
  uint64_t limit_;
};

// Opens every file as a WindowFile of `limit` bytes.
class WindowEnv : public EnvWrapper {
 public:
  WindowEnv(Env* target, uint64_t limit) : EnvWrapper(target), limit_(limit) {}
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    FERRY_ASSIGN_OR_RETURN(auto file, target()->NewRandomAccessFile(path));
    return std::unique_ptr<RandomAccessFile>(
        std::make_unique<WindowFile>(std::move(file), limit_));
  }

 private:
  uint64_t limit_;
};

// Copies [offset, offset + length) of basis to out (1 MiB at a time).
Status CopyRange(const RandomAccessFile& basis, uint64_t offset,
                 uint64_t length, std::vector<char>* buf, ByteSink* out) {
  while (length > 0) {
    const size_t n =
        static_cast<size_t>(std::min<uint64_t>(length, buf->size()));
    std::string_view got;
    FERRY_RETURN_IF_ERROR(basis.Read(offset, n, &got, buf->data()));
    if (got.size() != n)
      return Status::IOError("basis", "shorter than when it was scanned");
    FERRY_RETURN_IF_ERROR(out->Append(got));
    offset += n;
    length -= n;
  }
  return Status::OK();
}

// Where a plan's ranges come from: the file the transfer engine filled
// (each range at its offset in the object) from `from` on; before that (a
// resume that kept fewer parts than were planned), Backend::Read.
struct RangeSource {
  const RandomAccessFile* file = nullptr;  // null: all by Backend::Read
  uint64_t from = std::numeric_limits<uint64_t>::max();
};

// Writes the plan's bytes from `from` on (where w is) to w: blocks copied
// from the bases, ranges from src.
Status Assemble(const delta::BlockPlan& plan, uint64_t from,
                const std::vector<std::unique_ptr<RandomAccessFile>>& bases,
                const RangeSource& src, Backend* backend, const CacheKey& k,
                std::vector<char>* buf, PartWriter* w, BlockCounts* counts) {
  size_t c = 0, f = 0;
  while (c < plan.copies.size() || f < plan.fetches.size()) {
    const bool copy = f == plan.fetches.size() ||
                      (c < plan.copies.size() &&
                       plan.copies[c].new_offset < plan.fetches[f].offset);
    const uint64_t at =
        copy ? plan.copies[c].new_offset : plan.fetches[f].offset;
    const uint64_t length =
        copy ? plan.copies[c].length : plan.fetches[f].length;
    if (at + length <= from) {
      (copy ? c : f)++;
      continue;
    }
    const uint64_t skip = from > at ? from - at : 0;
    if (at + skip != w->pos())
      return Status::Corruption("block plan",
                                "leaves a gap at " + std::to_string(w->pos()));
    if (copy) {
      const delta::BlockPlan::Copy& cp = plan.copies[c++];
      if (cp.basis < 0 || static_cast<size_t>(cp.basis) >= bases.size())
        return Status::Corruption("block plan", "names no basis");
      FERRY_RETURN_IF_ERROR(CopyRange(*bases[cp.basis], cp.basis_offset + skip,
                                      cp.length - skip, buf, w));
      counts->copied += cp.length - skip;
      continue;
    }
    const delta::BlockPlan::Range& r = plan.fetches[f++];
    uint64_t p = r.offset + skip;
    const uint64_t end = r.offset + r.length;
    if (p < src.from) {  // not fetched by the engine
      const uint64_t stop = std::min(end, src.from);
      CountingSink got(w);
      ++counts->requests;
      Status s =
          backend->Read(ObjectKey(k.hash), ByteRange{p, stop - p}, {}, &got);
      counts->fetched += got.n;
      FERRY_RETURN_IF_ERROR(s);
      if (got.n != stop - p)
        return Status::Corruption("object", "a range came short");
      p = stop;
    }
    if (p < end) {
      if (src.file == nullptr)
        return Status::Corruption("block plan", "a range was not fetched");
      FERRY_RETURN_IF_ERROR(CopyRange(*src.file, p, end - p, buf, w));
    }
  }
  return Status::OK();
}

// What a killed run left in BlocksPath (part) is moved to prev, unless
// prev is longer (a killed resume leaves both): the longer start is kept.
Status KeepAside(Env* env, const std::string& part, const std::string& prev) {
  (void)RegularFileOrRemove(env, prev);  // never open a FIFO left there
  if (!RegularFileOrRemove(env, part)) return Status::OK();
  auto a = env->Stat(part);
  auto b = env->Stat(prev);
  if (b.ok() && (!a.ok() || b->size > a->size)) return env->RemoveFile(part);
  return env->RenameFile(part, prev);
}

// The bytes of prev's whole parts, from the first, that match their
// XXH3-64 (hashes: the manifest's, each part_size bytes of an object of
// size bytes): what Resume will keep.
uint64_t ResumablePrefix(Env* env, const std::string& prev, uint64_t size,
                         const std::vector<uint64_t>& hashes,
                         uint64_t part_size, std::vector<char>* buf) {
  if (hashes.empty() || !RegularFileOrRemove(env, prev)) return 0;
  auto file = env->NewRandomAccessFile(prev);
  if (!file.ok()) return 0;
  auto have = (*file)->Size();
  if (!have.ok()) return 0;
  uint64_t kept = 0;
  XXH3_state_t* state = XXH3_createState();
  for (uint64_t p = 0; p < hashes.size(); ++p) {
    const uint64_t length = std::min(part_size, size - kept);
    if (kept + length > *have) break;
    XXH3_64bits_reset(state);
    bool read = true;
    for (uint64_t done = 0; read && done < length;) {
      const size_t n =
          static_cast<size_t>(std::min<uint64_t>(length - done, buf->size()));
      std::string_view got;
      read = (*file)->Read(kept + done, n, &got, buf->data()).ok() &&
             got.size() == n;
      if (read) XXH3_64bits_update(state, got.data(), got.size());
      done += n;
    }
    if (!read || XXH3_64bits_digest(state) != hashes[p]) break;
    kept += length;
  }
  XXH3_freeState(state);
  return kept;
}

// Copies prev's whole parts into w, from the first, while they match their
// XXH3-64 (w checks them); *resumed: the bytes kept.
void Resume(Env* env, const std::string& prev, std::vector<char>* buf,
            PartWriter* w, uint64_t* resumed) {
  if (!RegularFileOrRemove(env, prev)) return;  // nothing (usable) to keep
  auto file = env->NewRandomAccessFile(prev);
  if (!file.ok()) return;  // nothing to keep
  auto size = (*file)->Size();
  if (!size.ok()) return;
  for (uint64_t p = 0;; ++p) {
    const ByteRange r = w->Part(p);
    if (r.length == 0 || r.offset + r.length > *size) break;
    if (!CopyRange(**file, r.offset, r.length, buf, w).ok()) break;
    *resumed += r.length;
  }
  w->bad_part.reset();
}

// One object's block reuse between its steps.
struct BlockWork {
  delta::BlockPlan plan;
  bool checked = false;  // parts checked against the manifest's XXH3-64
  uint64_t from = 0;     // a killed run's checked parts end here
  std::vector<ByteRange> ranges;  // the plan's ranges from `from` on
  bool fetched = false;           // the engine brought them into RangesPath
  // A part that failed its check, to be fetched again (the .blocks file
  // holds the checked parts before it); each part once.
  std::optional<uint64_t> refetch;
  bool refetched = false;  // the engine brought it into AgainPath
  std::set<uint64_t> again;
  int rounds = 0;  // of step 3
};

// Step 1 of one object's block reuse (its signature fetched into SigPath):
// the signature loaded, the scan of the bases,
// the plan, and (a killed run's BlocksPath set aside as .prev) where its
// checked parts end. Cancelled: no basis holds any of its blocks.
Status PlanOne(Env* env, const Cache& cache, const BlockJob& job, uint64_t gap,
               BlockWork* work, BlockCounts* counts) {
  const CacheKey& k = job.target;
  WindowEnv window(env, job.window);
  auto sig = LoadSignatureFile(env, SigPath(cache, k), k.size,
                               job.sig_block_len, job.sig_strong_len);
  FERRY_RETURN_IF_ERROR(sig.status());
  delta::BlockMatchOptions mo;
  mo.threads = 1;  // objects run in parallel already
  // The manifest's part hashes let the scan take whole unchanged parts
  // without summing their blocks (same map; the checks below stay).
  const bool has_parts =
      !job.part_hashes.empty() && job.part_size > 0 &&
      job.part_hashes.size() == manifest::PartCount(k.size, job.part_size);
  if (has_parts) {
    mo.part_hashes = job.part_hashes;
    mo.part_size = job.part_size;
  }
  delta::BlockMatchStats stats;
  FERRY_ASSIGN_OR_RETURN(
      delta::BlockMap map,
      delta::MatchBlocks(**sig, k.size, &window, job.bases, mo, &stats));
  counts->part_matched = stats.part_bytes;
  if (map.found_bytes() == 0)
    return Status::Cancelled("no block of it in the local files");
  work->plan = delta::PlanRanges(map, gap);
  // Parts are held in memory until checked: none above 64 MiB.
  work->checked = has_parts && job.part_size <= (uint64_t{64} << 20);
  const std::string part = BlocksPath(cache, k);
  const std::string prev = part + ".prev";
  FERRY_RETURN_IF_ERROR(KeepAside(env, part, prev));
  (void)env->RemoveFile(RangesPath(cache, k));  // a killed run's
  std::vector<char> buf(1 << 20);
  if (work->checked)
    work->from = ResumablePrefix(env, prev, k.size, job.part_hashes,
                                 job.part_size, &buf);
  for (const delta::BlockPlan::Range& r : work->plan.fetches) {
    const uint64_t end = r.offset + r.length;
    if (end <= work->from) continue;
    const uint64_t at = std::max(r.offset, work->from);
    work->ranges.push_back(ByteRange{at, end - at});
  }
  return Status::OK();
}

// Step 3 of one object's block reuse (step 2: its ranges fetched into
// RangesPath): into BlocksPath, going on from what a killed run (or the
// round before) left there, copies from the bases and ranges from the
// fetched file, each part checked as it completes, the whole checked,
// renamed to its partial path. A part that fails its check stops the round
// with work->refetch set: the caller fetches it into AgainPath through the
// transfer engine (with the other objects' parts), and the next round takes
// it from there (a part that fails again is an error).
Status AssembleOne(Env* env, const Cache& cache, Backend* backend,
                   const BlockJob& job, BlockWork* work, bool fsync,
                   BlockCounts* counts) {
  const CacheKey& k = job.target;
  WindowEnv window(env, job.window);
  std::vector<std::unique_ptr<RandomAccessFile>> bases;
  for (const std::string& b : job.bases) {
    FERRY_ASSIGN_OR_RETURN(auto f, window.NewRandomAccessFile(b));
    bases.push_back(std::move(f));
  }
  RangeSource src;
  std::unique_ptr<RandomAccessFile> ranges;
  if (work->fetched) {
    FERRY_ASSIGN_OR_RETURN(ranges,
                           env->NewRandomAccessFile(RangesPath(cache, k)));
    src.file = ranges.get();
    src.from = work->from;
  }
  static const std::vector<uint64_t> kNone;
  const std::string part = BlocksPath(cache, k);
  const std::string prev = part + ".prev";
  // After a round that stopped at a bad part: its checked parts go on.
  if (work->rounds++ > 0) FERRY_RETURN_IF_ERROR(KeepAside(env, part, prev));
  FERRY_ASSIGN_OR_RETURN(auto out, env->NewWritableFile(part));
  Hasher128 hasher;
  PartWriter w(out.get(), &hasher, k.size,
               work->checked ? job.part_hashes : kNone, job.part_size);
  std::vector<char> buf(1 << 20);
  uint64_t kept = 0;
  if (work->checked) Resume(env, prev, &buf, &w, &kept);
  if (work->rounds == 1) counts->resumed = kept;  // a killed run's
  (void)env->RemoveFile(prev);  // (a kill from here on leaves part longer)
  if (work->refetch) {
    const ByteRange r = w.Part(*work->refetch);
    const bool fetched = work->refetched;
    work->refetch.reset();
    work->refetched = false;
    if (fetched && w.pos() == r.offset) {
      FERRY_ASSIGN_OR_RETURN(auto got,
                             env->NewRandomAccessFile(AgainPath(cache, k)));
      FERRY_RETURN_IF_ERROR(CopyRange(*got, r.offset, r.length, &buf, &w));
    }
    (void)env->RemoveFile(AgainPath(cache, k));
  }
  Status s =
      Assemble(work->plan, w.pos(), bases, src, backend, k, &buf, &w, counts);
  if (!s.ok()) {
    if (!w.bad_part || work->again.count(*w.bad_part)) return s;
    work->refetch = *w.bad_part;
    work->again.insert(*work->refetch);
    ++counts->refetched_parts;
    return out->Close();  // the checked parts before it, for the next round
  }
  if (w.pos() != k.size)
    return Status::Corruption("blocks", "made " + std::to_string(w.pos()) +
                                            " bytes, the manifest says " +
                                            std::to_string(k.size));
  const Hash128 h = hasher.Digest();
  if (!(h == k.hash))
    return Status::Corruption("blocks", "made bytes of XXH3-128 " + h.ToHex() +
                                            ", the manifest says " +
                                            k.hash.ToHex());
  if (fsync) FERRY_RETURN_IF_ERROR(out->Sync());
  FERRY_RETURN_IF_ERROR(out->Close());
  return env->RenameFile(part, cache.PartialPath(k));
}

// Runs the transfer engine once over items (item i of object index[i]):
// its counts into the report (block_bytes_fetched too), each failed
// item's status into results.
void FetchThroughEngine(Env* env, Backend* backend, std::vector<GetItem> items,
                        const std::vector<size_t>& index,
                        const PatchOptions& options, SyncReport* report,
                        std::vector<Status>* results) {
  if (items.empty()) return;
  std::unordered_map<std::string, size_t> by_key;
  for (size_t j = 0; j < items.size(); ++j) by_key[items[j].key] = index[j];
  TransferOptions topt =
      options.transfer ? *options.transfer : TransferOptions();
  topt.dry_run = false;
  topt.fsync = false;  // scratch files, read back at once
  topt.progress = nullptr;
  topt.on_installed = nullptr;
  auto r = GetObjects(backend, std::move(items), topt, env);
  if (!r.ok()) {
    for (const auto& [key, i] : by_key) (*results)[i] = r.status();
    return;
  }
  CountTransfer(*r, report);
  report->block_bytes_fetched += r->bytes;
  for (const auto& [key, s] : r->failures) {
    auto it = by_key.find(key);
    if (it != by_key.end()) (*results)[it->second] = s;
  }
}

}  // namespace

uint64_t BasisWindow(uint64_t size) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (size > (kMax - kBasisMargin) / 4) return kMax;
  return 4 * size + kBasisMargin;
}

std::vector<std::pair<std::string, uint64_t>> BlockBases(
    Env* env, const Cache* cache, const CacheKey& key, const Entry& e,
    const std::vector<DeltaSource>& deltas,
    const std::vector<std::string>& roots, CachedBases* others) {
  std::vector<std::string> paths;
  for (const std::string& root : roots) paths.push_back(JoinPath(root, e.path));
  const uint64_t end = uint64_t{e.first_delta} + e.delta_count;
  for (uint64_t i = e.first_delta; cache && i < end && i < deltas.size(); ++i)
    paths.push_back(
        cache->ObjectPath(CacheKey{key.remote_key, deltas[i].from, 0}));
  std::vector<std::pair<std::string, uint64_t>> out;
  std::set<std::pair<uint64_t, uint64_t>> seen;  // (device, inode)
  auto add = [&](const std::string& p) {
    auto st = env->Stat(p);
    if (st.ok() && !st->is_dir && st->type == FileType::kRegular &&
        st->size > 0 && seen.emplace(st->dev, st->ino).second)
      out.emplace_back(p, st->size);
  };
  for (const std::string& p : paths) add(p);
  if (out.empty() && cache && others) {
    for (const std::string& p : others->Choose(key, e)) {
      if (out.size() >= kMaxCachedBases) break;
      add(p);
    }
  }
  return out;
}

std::optional<uint64_t> PlanBlockReuse(Env* env, const Cache* cache,
                                       const CacheKey& key, const Entry& e,
                                       const std::vector<DeltaSource>& deltas,
                                       const std::vector<std::string>& roots,
                                       CachedBases* others) {
  if (e.sig_block_len == 0 ||
      BlockBases(env, cache, key, e, deltas, roots, others).empty())
    return std::nullopt;
  return SignatureBytes(key.size, e.sig_block_len, e.sig_strong_len);
}

std::string BlocksPath(const Cache& cache, const CacheKey& key) {
  return cache.PartialPath(key) + ".blocks";
}

std::string RangesPath(const Cache& cache, const CacheKey& key) {
  return BlocksPath(cache, key) + ".ranges";
}

std::string SigPath(const Cache& cache, const CacheKey& key) {
  return cache.PartialPath(key) + ".sig";
}

std::string AgainPath(const Cache& cache, const CacheKey& key) {
  return BlocksPath(cache, key) + ".again";
}

namespace {
// A file the transfer engine fills, and what it leaves beside it.
void RemoveEngineFile(Env* env, const std::string& path) {
  (void)env->RemoveFile(path);
  (void)env->RemoveFile(path + ".ferry-part");
  (void)env->RemoveFile(path + ".ferry-part.journal");
}
}  // namespace

void RemoveKilledWork(Env* env, const Cache& cache, const CacheKey& key) {
  (void)env->RemoveFile(PatchPath(cache, key));
  // An object a killed run was cutting out of a pack (landing.h).
  (void)env->RemoveFile(cache.PartialPath(key) + ".cut");
  // Signatures, ranges and parts fetched again are not resumed (the
  // .blocks file is).
  RemoveEngineFile(env, SigPath(cache, key));
  RemoveEngineFile(env, RangesPath(cache, key));
  RemoveEngineFile(env, AgainPath(cache, key));
}

void RemoveBlocksLeft(Env* env, const Cache& cache, const CacheKey& key) {
  (void)env->RemoveFile(BlocksPath(cache, key));
  (void)env->RemoveFile(BlocksPath(cache, key) + ".prev");
  RemoveEngineFile(env, SigPath(cache, key));
  RemoveEngineFile(env, RangesPath(cache, key));
  RemoveEngineFile(env, AgainPath(cache, key));
}

Result<std::vector<CacheKey>> ReuseBlocks(
    Env* env, Cache* cache, Backend* backend, const std::vector<CacheKey>& keys,
    const FirstEntries& first_entry, const std::vector<DeltaSource>& deltas,
    const std::vector<std::string>& roots, CachedBases* others,
    const PatchOptions& options,
    const std::function<std::vector<uint64_t>(const CacheKey&)>& part_hashes,
    uint64_t part_size, const std::function<std::string(const CacheKey&)>& name,
    SyncReport* report) {
  std::vector<BlockJob> jobs;
  std::vector<CacheKey> whole;
  for (const CacheKey& k : keys) {
    auto it = first_entry.find(k.hash);
    const Entry* e = it == first_entry.end() ? nullptr : it->second;
    BlockJob job;
    job.target = k;
    job.sig_block_len = e ? e->sig_block_len : 0;
    job.sig_strong_len = e ? e->sig_strong_len : 0;
    job.window = BasisWindow(k.size);
    if (job.sig_block_len != 0) {
      for (const auto& [p, size] :
           BlockBases(env, cache, k, *e, deltas, roots, others)) {
        job.bases.push_back(p);
        if (size > job.window)
          report->warnings.push_back(
              name(k) + ": only the first " + std::to_string(job.window) +
              " bytes of the basis " + p + " (" + std::to_string(size) +
              " bytes) are searched for its blocks");
      }
    }
    if (job.bases.empty()) {
      if (cache->MayHaveLeftovers(k))
        RemoveBlocksLeft(env, *cache, k);  // a killed run's, of no use now
      whole.push_back(k);
    } else {
      job.part_hashes = part_hashes(k);
      job.part_size = part_size;
      jobs.push_back(std::move(job));
    }
  }
  if (jobs.empty()) return whole;
  std::vector<Status> results(jobs.size());
  std::vector<BlockCounts> counts(jobs.size());
  std::vector<BlockWork> works(jobs.size());
  // 1: every object's signature through the transfer engine in one run
  // (--connections and --bwlimit shared, each answer checked and retried):
  // a range of exactly the signature's length (a longer object sends no
  // more; a shorter one, a 404 or a server that ignores Range fails the
  // item, and the object falls back) into SigPath.
  std::vector<GetItem> items;
  std::vector<size_t> index;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const BlockJob& job = jobs[i];
    GetItem item;
    item.key = SigKey(job.target.hash);
    item.dest = SigPath(*cache, job.target);
    item.ranges = {
        ByteRange{0, SignatureBytes(job.target.size, job.sig_block_len,
                                    job.sig_strong_len)}};
    items.push_back(std::move(item));
    index.push_back(i);
  }
  FetchThroughEngine(env, backend, std::move(items), index, options, report,
                     &results);
  // Then the scans and plans, several objects at once.
  RunJobs(jobs.size(), options.threads, [&](size_t i) {
    if (results[i].ok())
      results[i] = PlanOne(env, *cache, jobs[i], options.range_gap, &works[i],
                           &counts[i]);
    (void)env->RemoveFile(SigPath(*cache, jobs[i].target));
  });
  // 2: every object's ranges through the transfer engine in one run: many
  // ranges (of one object and of several) in flight at once, --connections
  // and --bwlimit shared, each answer checked and retried as a part is.
  items.clear();
  index.clear();
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!results[i].ok() || works[i].ranges.empty()) continue;
    GetItem item;
    item.key = ObjectKey(jobs[i].target.hash);
    item.dest = RangesPath(*cache, jobs[i].target);
    item.have_expected_size = true;
    item.expected_size = jobs[i].target.size;
    item.ranges = works[i].ranges;
    works[i].fetched = true;
    items.push_back(std::move(item));
    index.push_back(i);
  }
  FetchThroughEngine(env, backend, std::move(items), index, options, report,
                     &results);
  // 3: each object assembled, checked and renamed, in rounds: the parts
  // that failed their checks in one round are fetched again through the
  // engine in one run (retries["part-hash"]), and their objects go on.
  std::vector<size_t> todo;
  for (size_t i = 0; i < jobs.size(); ++i)
    if (results[i].ok()) todo.push_back(i);
  while (!todo.empty()) {
    RunJobs(todo.size(), options.threads, [&](size_t t) {
      const size_t i = todo[t];
      if (results[i].ok())
        results[i] = AssembleOne(env, *cache, backend, jobs[i], &works[i],
                                 options.fsync, &counts[i]);
    });
    items.clear();
    index.clear();
    for (size_t i : todo) {
      if (!results[i].ok() || !works[i].refetch) continue;
      GetItem item;
      item.key = ObjectKey(jobs[i].target.hash);
      item.dest = AgainPath(*cache, jobs[i].target);
      item.have_expected_size = true;
      item.expected_size = jobs[i].target.size;
      // (PartWriter's part: the manifest's part size.)
      const uint64_t unit = jobs[i].part_size;
      const uint64_t at = *works[i].refetch * unit;
      item.ranges = {ByteRange{at, std::min(unit, jobs[i].target.size - at)}};
      works[i].refetched = true;
      items.push_back(std::move(item));
      index.push_back(i);
    }
    FetchThroughEngine(env, backend, std::move(items), index, options, report,
                       &results);
    std::vector<size_t> next;
    for (size_t i : todo) {
      if (results[i].ok() && works[i].refetch) {
        next.push_back(i);
      } else if (results[i].ok()) {
        (void)env->RemoveFile(RangesPath(*cache, jobs[i].target));
      }
    }
    todo.swap(next);
  }
  for (size_t i = 0; i < jobs.size(); ++i)
    if (!results[i].ok()) RemoveBlocksLeft(env, *cache, jobs[i].target);
  std::vector<std::pair<CacheKey, std::string>> done;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const CacheKey& k = jobs[i].target;
    const uint64_t fetched = counts[i].fetched;
    report->block_bytes_fetched += fetched;
    report->bytes_fetched += fetched;
    report->bytes_resumed += counts[i].resumed;
    if (counts[i].refetched_parts > 0)
      report->retries["part-hash"] += counts[i].refetched_parts;
    report->requests += counts[i].requests;
    if (!results[i].ok()) {
      if (results[i].code() != Status::Code::kCancelled) {
        ++report->block_fallbacks;
        report->warnings.push_back(name(k) + ": block reuse failed (" +
                                   results[i].ToString() +
                                   "): falling back to the whole object");
      }
      whole.push_back(k);
      continue;
    }
    ++report->objects_reused;
    ++report->objects_fetched;
    report->bytes_reused += k.size;
    report->bytes_copied += counts[i].copied;
    report->bytes_part_matched += counts[i].part_matched;
    (void)env->RemoveFile(cache->PartialPath(k) + ".ferry-part");
    (void)env->RemoveFile(cache->PartialPath(k) + ".ferry-part.journal");
    done.emplace_back(k, cache->PartialPath(k));
  }
  FERRY_RETURN_IF_ERROR(cache->InsertAll(done));
  return whole;
}

void NameFallbackPaths(
    const std::vector<std::pair<CacheKey, size_t>>& fallbacks,
    const std::vector<CacheKey>& whole, SyncReport* report) {
  std::set<std::string> left;
  for (const CacheKey& k : whole) left.insert(k.hash.ToHex());
  for (const auto& [k, i] : fallbacks)
    if (i < report->warnings.size())
      report->warnings[i] += left.count(k.hash.ToHex())
                                 ? ": falling back to the whole object"
                                 : ": made by block reuse instead";
}

std::string PatchPath(const Cache& cache, const CacheKey& key) {
  return cache.PartialPath(key) + ".patch";
}

Result<std::optional<DeltaPlan>> ChooseDelta(
    Env* env, Cache* cache, const CacheKey& key, const Entry& e,
    const std::vector<DeltaSource>& deltas, bool check) {
  std::optional<DeltaPlan> best;
  if (cache == nullptr || e.delta_count == 0) return best;
  const uint64_t end = uint64_t{e.first_delta} + e.delta_count;
  if (end > deltas.size()) return best;
  for (uint64_t i = e.first_delta; i < end; ++i) {
    const DeltaSource& d = deltas[i];
    if (best && best->delta_size <= d.size) continue;
    CacheKey basis{key.remote_key, d.from, 0};
    auto st = env->Stat(cache->ObjectPath(basis));
    if (!st.ok()) continue;
    basis.size = st->size;
    if (check) {
      FERRY_ASSIGN_OR_RETURN(bool hit, cache->Lookup(basis));
      if (!hit) continue;
    }
    best = DeltaPlan{key, basis, d.size};
  }
  return best;
}

Result<std::vector<CacheKey>> PatchWhatDeltasCan(
    Env* env, Cache* cache, Backend* backend, const std::vector<CacheKey>& keys,
    const FirstEntries& first_entry, const std::vector<DeltaSource>& deltas,
    const PatchOptions& options,
    const std::function<std::string(const CacheKey&)>& name, SyncReport* report,
    std::vector<std::pair<CacheKey, size_t>>* fallbacks) {
  std::vector<DeltaPlan> plans;
  std::vector<CacheKey> whole;
  for (const CacheKey& k : keys) {
    auto e = first_entry.find(k.hash);
    std::optional<DeltaPlan> plan;
    if (e != first_entry.end()) {
      FERRY_ASSIGN_OR_RETURN(
          plan, ChooseDelta(env, cache, k, *e->second, deltas, true));
    }
    if (plan) {
      plans.push_back(*plan);
    } else {
      whole.push_back(k);
    }
  }
  if (plans.empty()) return whole;
  std::vector<Status> results(plans.size());
  std::vector<uint64_t> fetched(plans.size(), 0);
  RunJobs(plans.size(), options.threads, [&](size_t i) {
    results[i] =
        PatchOne(env, *cache, backend, plans[i], options.fsync, &fetched[i]);
    if (!results[i].ok())
      (void)env->RemoveFile(PatchPath(*cache, plans[i].target));
  });

  std::vector<std::pair<CacheKey, std::string>> done;
  for (size_t i = 0; i < plans.size(); ++i) {
    const CacheKey& k = plans[i].target;
    ++report->requests;
    report->delta_bytes_fetched += fetched[i];
    report->bytes_fetched += fetched[i];
    if (!results[i].ok()) {
      ++report->delta_fallbacks;
      fallbacks->emplace_back(k, report->warnings.size());
      report->warnings.push_back(name(k) + ": delta from " +
                                 plans[i].basis.hash.ToHex() + " not used (" +
                                 results[i].ToString() + ")");
      whole.push_back(k);
      continue;
    }
    ++report->objects_patched;
    ++report->objects_fetched;
    report->bytes_patched += k.size;
    // A whole-object download or block reuse a killed run began is not
    // needed now.
    RemoveBlocksLeft(env, *cache, k);
    (void)env->RemoveFile(cache->PartialPath(k) + ".ferry-part");
    (void)env->RemoveFile(cache->PartialPath(k) + ".ferry-part.journal");
    done.emplace_back(k, cache->PartialPath(k));
  }
  FERRY_RETURN_IF_ERROR(cache->InsertAll(done));
  return whole;
}

}  // namespace ferry::sync
