#include "sync/fetching.h"

#include <map>
#include <string_view>

#include "ferry/hash.h"
#include "sync/layout.h"

namespace ferry::sync {
namespace {

Hash128 Where(const CacheKey& k) {
  return HashBytes(k.remote_key + "/" + k.hash.ToHex());
}
uint64_t Offset(const CacheKey& k) { return Where(k).low >> 1; }

}  // namespace

Status ObjectLocks::Lock(const CacheKey& k, bool wait) {
  FERRY_ASSIGN_OR_RETURN(ByteLockSet * set, SetOf(k));
  return set->Lock(Offset(k), wait);
}

Status ObjectLocks::Unlock(const CacheKey& k) {
  FERRY_ASSIGN_OR_RETURN(ByteLockSet * set, SetOf(k));
  return set->Unlock(Offset(k));
}

Status ObjectLocks::UnlockAll() {
  for (auto& set : sets_)
    if (set) FERRY_RETURN_IF_ERROR(set->UnlockAll());
  return Status::OK();
}

Result<ByteLockSet*> ObjectLocks::SetOf(const CacheKey& k) {
  const int stripe = static_cast<int>(Where(k).high % kLockStripes);
  if (!sets_[stripe]) {
    if (!made_dir_) {
      FERRY_RETURN_IF_ERROR(env_->CreateDirs(dir_));
      made_dir_ = true;
    }
    FERRY_ASSIGN_OR_RETURN(
        sets_[stripe],
        ByteLockSet::Open(JoinPath(dir_, "objects-" + std::to_string(stripe))));
  }
  return sets_[stripe].get();
}

Status MakeRoomForMissing(
    Cache* cache, uint64_t limit, std::vector<CacheKey> use,
    const std::function<Result<bool>(std::vector<CacheKey>*)>& still,
    EvictReport* report) {
  Status room = cache->MakeRoom(limit, use, report);
  if (room.code() != Status::Code::kResourceExhausted || !still) return room;
  FERRY_ASSIGN_OR_RETURN(bool found, still(&use));
  if (found) room = cache->MakeRoom(limit, use, report);
  return room;
}

size_t RemoveUnderObjectLocks(
    Env* env, const std::string& cache_dir, const std::string& rk,
    const std::string& dir,
    const std::map<std::string, std::vector<std::string>>& by_object) {
  size_t removed = 0;
  ObjectLocks locks(env, JoinPath(cache_dir, "locks"));
  for (const auto& [hex, names] : by_object) {
    auto hash = Hash128::FromHex(hex);
    if (!hash.ok()) continue;
    const CacheKey k{rk, *hash, 0};  // the size is no part of a lock
    if (!locks.Lock(k, /*wait=*/false).ok()) continue;
    for (const std::string& name : names)
      removed += env->RemoveFile(JoinPath(dir, name)).ok();
    (void)locks.Unlock(k);
  }
  return removed;
}

size_t RemoveStaleManagedPartials(Env* env, const std::string& cache_dir,
                                  const std::string& rk) {
  const std::string dir = JoinPath(cache_dir, "partial/" + rk);
  // Only the cache's own folder: one a link put in its place (to anywhere)
  // is not swept.
  auto kind = LinkKind(dir);
  if (!kind.ok() || *kind != PathKind::kDir) return 0;
  auto children = env->GetChildren(dir);
  if (!children.ok()) return 0;
  std::map<std::string, std::vector<std::string>> by_object;  // hex: names
  for (const DirEntry& c : *children) {
    const std::string_view name = c.name;
    // <32 hex>[.suffix]: an object's.
    Hash128 hash;
    if (name.size() >= 32 && ParseHashHex(name.substr(0, 32), &hash) &&
        (name.size() == 32 || name[32] == '.'))
      by_object[c.name.substr(0, 32)].push_back(c.name);
  }
  return RemoveUnderObjectLocks(env, cache_dir, rk, dir, by_object);
}

void CountTransfer(const TransferReport& r, SyncReport* report) {
  report->requests += r.requests;
  report->bytes_fetched += r.bytes;
  report->bytes_resumed += r.bytes_resumed;
  for (const auto& [cause, n] : r.retries) report->retries[cause] += n;
  for (const std::string& w : r.warnings) report->warnings.push_back(w);
}

}  // namespace ferry::sync
