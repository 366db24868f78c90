#include "sync/adoption.h"

#include <algorithm>
#include <utility>

namespace ferry::sync {

void ListRegularFiles(Env* env, const std::string& root, const std::string& rel,
                      std::map<std::string, uint64_t>* out) {
  auto children = env->GetChildren(rel.empty() ? root : JoinPath(root, rel));
  if (!children.ok()) return;
  for (const DirEntry& e : *children) {
    if (e.is_link) continue;
    std::string r = rel.empty() ? e.name : rel + "/" + e.name;
    if (e.is_dir) {
      ListRegularFiles(env, root, r, out);
    } else if (e.is_regular) {
      auto info = env->Stat(JoinPath(root, r));
      if (info.ok()) (*out)[r] = info->size;
    }
  }
}

Adoption::Adoption(Env* env, Cache* cache, std::string remote_key,
                   DestKind kind, const std::string& dest,
                   const std::string& cur_view)
    : env_(env),
      cache_(cache),
      remote_key_(std::move(remote_key)),
      root_(kind == DestKind::kView ? cur_view : dest),
      possible_(kind == DestKind::kDir || kind == DestKind::kInPlace ||
                kind == DestKind::kView),
      placed_by_ferry_(kind == DestKind::kView || kind == DestKind::kInPlace) {}

void Adoption::List() {
  if (possible_) ListRegularFiles(env_, root_, "", &files_);
}

void Adoption::Prepare(const std::vector<Entry>& files) {
  if (files_.empty()) return;
  for (const Entry& e : files) by_hash_paths_[e.hash.ToHex()].push_back(e.path);
  for (const auto& [p, size] : files_) by_size_.emplace(size, p);
  if (placed_by_ferry_) {
    auto st = ReadStamps(env_, root_, &placed_hashes_);
    if (st.ok()) placed_stamps_ = std::move(*st);
  }
}

Result<bool> Adoption::HoldsOther(const std::string& p, const CacheKey& want) {
  auto h = placed_hashes_.find(p);
  auto rec = placed_stamps_.find(p);
  if (h == placed_hashes_.end() || rec == placed_stamps_.end() ||
      h->second == want.hash)
    return false;
  auto now = StampOf(JoinPath(root_, p));
  if (!now.ok()) return false;
  if (*now == rec->second) return true;
  if (now->ino != rec->second.ino || now->size != rec->second.size ||
      now->mtime_ns != rec->second.mtime_ns)
    return false;
  return cache_->StampMatches(CacheKey{remote_key_, h->second, now->size},
                              *now);
}

Result<std::vector<std::string>> Adoption::Tries(const CacheKey& k) {
  std::vector<std::string> tries;
  if (files_.empty()) return tries;
  auto same = by_hash_paths_.find(k.hash.ToHex());
  if (same != by_hash_paths_.end())
    for (const std::string& p : same->second) {
      auto c = files_.find(p);
      if (c != files_.end() && c->second == k.size) tries.push_back(p);
    }
  auto [lo, hi] = by_size_.equal_range(k.size);
  for (auto it = lo; it != hi && tries.size() < kMaxTries; ++it)
    if (std::find(tries.begin(), tries.end(), it->second) == tries.end())
      tries.push_back(it->second);
  std::vector<std::string> out;
  for (std::string& p : tries) {
    FERRY_ASSIGN_OR_RETURN(bool other, HoldsOther(p, k));
    if (!other) out.push_back(std::move(p));
  }
  return out;
}

Result<bool> Adoption::Adopt(const CacheKey& k) {
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> tries, Tries(k));
  for (const std::string& p : tries) {
    FERRY_ASSIGN_OR_RETURN(bool ok, cache_->Adopt(k, JoinPath(root_, p)));
    if (ok) return true;
  }
  return false;
}

Result<bool> Adoption::WouldAdopt(const CacheKey& k) {
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> tries, Tries(k));
  for (const std::string& p : tries) {
    uint64_t size = 0;
    FERRY_ASSIGN_OR_RETURN(Hash128 h,
                           HashFile(env_, JoinPath(root_, p), &size));
    if (h == k.hash && size == k.size) return true;
  }
  return false;
}

}  // namespace ferry::sync
