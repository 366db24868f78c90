#include "sync/fetching.h"

#include "ferry/hash.h"

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

void CountTransfer(const TransferReport& r, SyncReport* report) {
  report->requests += r.requests;
  report->bytes_fetched += r.bytes;
  report->bytes_resumed += r.bytes_resumed;
  for (const auto& [cause, n] : r.retries) report->retries[cause] += n;
  for (const std::string& w : r.warnings) report->warnings.push_back(w);
}

}  // namespace ferry::sync
