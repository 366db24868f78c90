// Path 2 of a sync: objects patched from deltas (docs/delta.md "Sync side").
#include "sync/fetch_paths.h"

#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "ferry/delta.h"
#include "ferry/hash.h"
#include "sync/deltas.h"

namespace ferry::sync {
namespace {

// A delta as it arrives: counted against the size the manifest lists,
// zstd-decompressed (window capped) and fed to the patcher.
class DeltaSink : public ByteSink {
 public:
  DeltaSink(uint64_t listed, delta::Patcher* patcher)
      : listed_(listed),
        patcher_(patcher),
        dctx_(ZSTD_createDCtx()),
        buf_(ZSTD_DStreamOutSize()) {
    ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kDeltaWindowLog);
  }
  ~DeltaSink() override { ZSTD_freeDCtx(dctx_); }

  Status Append(std::string_view data) override {
    read_ += data.size();
    if (read_ > listed_)
      return Status::Corruption("delta", "longer than the " +
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
      return Status::Corruption("delta", std::to_string(read_) +
                                             " bytes, the manifest lists " +
                                             std::to_string(listed_));
    if (!frame_done_)
      return Status::Corruption("delta", "its zstd frame is cut short");
    return Status::OK();
  }
  uint64_t read() const { return read_; }

 private:
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
  DeltaSink sink(plan.delta_size, patcher.get());
  Status s = backend->Read(DeltaKey(plan.basis.hash, k.hash), {}, {}, &sink);
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

}  // namespace

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
    const std::unordered_map<std::string, const Entry*>& first_entry,
    const std::vector<DeltaSource>& deltas, const PatchOptions& options,
    const std::function<std::string(const CacheKey&)>& name,
    SyncReport* report) {
  std::vector<DeltaPlan> plans;
  std::vector<CacheKey> whole;
  for (const CacheKey& k : keys) {
    auto e = first_entry.find(k.hash.ToHex());
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
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < plans.size();) {
      results[i] =
          PatchOne(env, *cache, backend, plans[i], options.fsync, &fetched[i]);
      if (!results[i].ok())
        (void)env->RemoveFile(PatchPath(*cache, plans[i].target));
    }
  };
  const size_t n = std::min<size_t>(std::max(1, options.threads), plans.size());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();

  std::vector<std::pair<CacheKey, std::string>> done;
  for (size_t i = 0; i < plans.size(); ++i) {
    const CacheKey& k = plans[i].target;
    ++report->requests;
    report->delta_bytes_fetched += fetched[i];
    report->bytes_fetched += fetched[i];
    if (!results[i].ok()) {
      ++report->delta_fallbacks;
      report->warnings.push_back(name(k) + ": delta from " +
                                 plans[i].basis.hash.ToHex() + " not used (" +
                                 results[i].ToString() + "): fetched whole");
      whole.push_back(k);
      continue;
    }
    ++report->objects_patched;
    ++report->objects_fetched;
    report->bytes_patched += k.size;
    // A whole-object download a killed run began is not needed now.
    (void)env->RemoveFile(cache->PartialPath(k) + ".ferry-part");
    (void)env->RemoveFile(cache->PartialPath(k) + ".ferry-part.journal");
    done.emplace_back(k, cache->PartialPath(k));
  }
  FERRY_RETURN_IF_ERROR(cache->InsertAll(done));
  return whole;
}

}  // namespace ferry::sync
