// Other cached objects as bases for block reuse (cached_bases.h).
#include "sync/cached_bases.h"

#include <algorithm>
#include <tuple>
#include <unordered_set>

#include "formats/manifest/manifest.h"
#include "sync/fs_util.h"

namespace ferry::sync {
namespace {

// The part hashes of e in m (none if they do not fit its size).
std::pair<const uint64_t*, size_t> PartsOf(const ManifestInfo& m,
                                           const Entry& e) {
  if (m.part_size == 0) return {nullptr, 0};
  const uint64_t n = manifest::PartCount(e.size, m.part_size);
  if (e.first_part + n > m.part_hashes.size()) return {nullptr, 0};
  return {m.part_hashes.data() + e.first_part, static_cast<size_t>(n)};
}

// (directory, base name) of a manifest path.
std::pair<std::string_view, std::string_view> SplitPath(std::string_view p) {
  const size_t slash = p.rfind('/');
  if (slash == std::string_view::npos) return {{}, p};
  return {p.substr(0, slash), p.substr(slash + 1)};
}

// The common prefix and the common suffix of a and b (not overlapping).
std::pair<size_t, size_t> CommonEnds(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t pre = 0;
  while (pre < n && a[pre] == b[pre]) ++pre;
  size_t suf = 0;
  while (pre + suf < n && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  return {pre, suf};
}

}  // namespace

uint64_t CachedBases::PathHash(std::string_view path) {
  return manifest::PartHash(path);
}

CachedBases::CachedBases(Env* env, const Cache* cache, std::string remote_key,
                         const ManifestInfo* current,
                         std::vector<Hash128> prefer,
                         std::vector<uint64_t> listed)
    : env_(env),
      cache_(cache),
      remote_key_(std::move(remote_key)),
      current_(current),
      prefer_(std::move(prefer)),
      listed_(std::move(listed)) {}

uint32_t CachedBases::Add(const Hash128& hash, uint64_t size) {
  auto [it, added] =
      by_hash_.emplace(hash, static_cast<uint32_t>(candidates_.size()));
  if (added) candidates_.push_back(Candidate{hash, size});
  return it->second;
}

void CachedBases::Load() {
  loaded_ = true;
  if (cache_ == nullptr) return;
  // DEST's current version first, then the newest by mtime.
  std::vector<Hash128> ids;
  auto listed = [&](const Hash128& h) {
    return h == current_->id ||
           std::find(ids.begin(), ids.end(), h) != ids.end();
  };
  for (const Hash128& h : prefer_)
    if (!listed(h) && ids.size() < kMaxCachedManifests) ids.push_back(h);
  const std::string dir = JoinPath(cache_->dir(), "manifests");
  std::vector<std::pair<int64_t, Hash128>> by_age;
  if (auto children = env_->GetChildren(dir); children.ok()) {
    for (const DirEntry& c : *children) {
      if (!c.is_regular || c.name.size() != 32) continue;  // temporaries
      auto h = Hash128::FromHex(c.name);
      if (!h.ok() || listed(*h)) continue;
      auto st = env_->Stat(JoinPath(dir, c.name));
      if (st.ok()) by_age.emplace_back(st->mtime_ns, *h);
    }
  }
  std::sort(by_age.begin(), by_age.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [mtime, h] : by_age) {
    if (ids.size() >= kMaxCachedManifests) break;
    ids.push_back(h);
  }
  uint64_t budget = kMaxBasesManifestBytes;
  for (const Hash128& id : ids) {
    if (postings_.size() >= kMaxPostings || paths_.size() >= kMaxPostings)
      break;
    // One that would take the bytes read past the budget is passed over
    // (a smaller one after it may fit), and so is one that is not there, or
    // damaged: it only suggests bases (the object's hash is the gate).
    const std::string path = cache_->ManifestPath(id);
    auto st = env_->Stat(path);
    if (!st.ok() || st->size > budget) continue;
    budget -= st->size;
    auto bytes = ReadOwnFile(env_, path);
    if (!bytes.ok()) continue;
    auto m = ReadManifest(*bytes, id);
    if (!m.ok()) continue;
    ++manifests_read_;
    const bool same_parts = m->part_size == current_->part_size;
    // DEST's current version: its paths the new one no longer lists.
    const bool previous =
        !prefer_.empty() && id == prefer_[0] && !listed_.empty();
    for (const Entry& e : m->files) {
      if (e.size == 0) continue;
      const uint32_t c = Add(e.hash, e.size);
      if (previous && gone_.size() < kMaxGonePaths &&
          !std::binary_search(listed_.begin(), listed_.end(), PathHash(e.path)))
        gone_.push_back(Gone{e.size, c, e.path});
      if (paths_.size() < kMaxPostings)
        paths_.emplace_back(PathHash(e.path), c);
      if (!same_parts) continue;
      auto [parts, n] = PartsOf(*m, e);
      for (size_t i = 0; i < n && postings_.size() < kMaxPostings; ++i)
        postings_.emplace_back(parts[i], c);
    }
  }
  for (auto* v : {&postings_, &paths_}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
    v->shrink_to_fit();
  }
  std::sort(gone_.begin(), gone_.end(), [](const Gone& a, const Gone& b) {
    return std::tie(a.size, a.candidate) < std::tie(b.size, b.candidate);
  });
  listed_ = {};
}

std::vector<uint32_t> CachedBases::ChooseGone(const Entry& e) const {
  std::vector<uint32_t> out;
  if (gone_.empty() || e.size == 0) return out;
  // Sizes within a factor of 1.25: [size * 4 / 5, size * 5 / 4].
  const uint64_t lo = e.size - e.size / 5;
  const uint64_t hi =
      e.size > UINT64_MAX / 2 ? UINT64_MAX : e.size + e.size / 4;
  const auto [dir, base] = SplitPath(e.path);
  // Those that qualify, looking outward from e's size (the closest first).
  struct Ranked {
    bool same_dir;
    size_t common, longest_end;  // of the base names
    uint64_t distance;           // of the sizes
    uint32_t candidate;
  };
  std::vector<Ranked> ranked;
  auto up = std::lower_bound(
      gone_.begin(), gone_.end(), e.size,
      [](const Gone& g, uint64_t size) { return g.size < size; });
  auto down = up;
  for (size_t scanned = 0; scanned < kMaxGoneScanned; ++scanned) {
    const bool can_up = up != gone_.end() && up->size <= hi;
    const bool can_down = down != gone_.begin() && (down - 1)->size >= lo;
    if (!can_up && !can_down) break;
    const Gone* g;
    if (can_up && (!can_down || up->size - e.size <= e.size - (down - 1)->size))
      g = &*up++;
    else
      g = &*--down;
    const auto [gdir, gbase] = SplitPath(g->path);
    const auto [pre, suf] = CommonEnds(base, gbase);
    if (2 * (pre + suf) < std::max(base.size(), gbase.size())) continue;
    ranked.push_back(Ranked{
        gdir == dir, pre + suf, std::max(pre, suf),
        g->size > e.size ? g->size - e.size : e.size - g->size, g->candidate});
  }
  // Same directory, then the longer common ends, then the longer one of
  // them (shard-000004-v2.tar is as near shard-000002.tar, 11 + 5, as
  // shard-000004.tar, 12 + 4), then the closest size.
  auto better = [](const Ranked& a, const Ranked& b) {
    if (a.same_dir != b.same_dir) return a.same_dir;
    if (a.common != b.common) return a.common > b.common;
    if (a.longest_end != b.longest_end) return a.longest_end > b.longest_end;
    return std::tie(a.distance, a.candidate) <
           std::tie(b.distance, b.candidate);
  };
  const size_t top = std::min(ranked.size(), 8 * kMaxCachedBases);
  std::partial_sort(ranked.begin(), ranked.begin() + top, ranked.end(), better);
  for (size_t i = 0; i < top; ++i)
    if (std::find(out.begin(), out.end(), ranked[i].candidate) == out.end())
      out.push_back(ranked[i].candidate);
  return out;
}

std::vector<std::string> CachedBases::Choose(const CacheKey& key,
                                             const Entry& e) {
  if (!loaded_) Load();
  std::vector<std::string> out;
  if (candidates_.empty()) return out;
  // Score: shared part hashes (each distinct one of e's counted once).
  std::unordered_map<uint32_t, uint64_t> shared;
  auto [parts, n] = PartsOf(*current_, e);
  std::vector<uint64_t> mine(parts, parts + n);
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  for (uint64_t h : mine) {
    auto it = std::lower_bound(postings_.begin(), postings_.end(),
                               std::make_pair(h, uint32_t{0}));
    // A part hash many objects share (zeros, a common header) says little:
    // at most 64 of them are counted.
    for (size_t k = 0; it != postings_.end() && it->first == h && k < 64;
         ++it, ++k)
      ++shared[it->second];
  }
  std::unordered_set<uint32_t> same_path;
  const uint64_t ph = PathHash(e.path);
  for (auto it = std::lower_bound(paths_.begin(), paths_.end(),
                                  std::make_pair(ph, uint32_t{0}));
       it != paths_.end() && it->first == ph; ++it)
    same_path.insert(it->second);
  // (shared parts, same path, same size, candidate) of those that qualify.
  std::vector<std::tuple<uint64_t, bool, bool, uint32_t>> ranked;
  for (const auto& [c, s] : shared)
    ranked.emplace_back(s, same_path.count(c) > 0,
                        candidates_[c].size == e.size, c);
  for (uint32_t c : same_path)
    if (!shared.count(c))
      ranked.emplace_back(0, true, candidates_[c].size == e.size, c);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (std::get<0>(a) != std::get<0>(b))
      return std::get<0>(a) > std::get<0>(b);
    if (std::get<1>(a) != std::get<1>(b)) return std::get<1>(a);
    if (std::get<2>(a) != std::get<2>(b)) return std::get<2>(a);
    return std::get<3>(a) < std::get<3>(b);  // the newer manifest's
  });
  auto add = [&](uint32_t i) {
    const Candidate& c = candidates_[i];
    if (c.hash == key.hash) return;  // the object itself is not cached
    if (out.size() < 4 * kMaxCachedBases)
      out.push_back(cache_->ObjectPath(CacheKey{remote_key_, c.hash, c.size}));
  };
  for (const auto& r : ranked) add(std::get<3>(r));
  // Nothing shares a part or the path: a rename's deleted path, perhaps.
  if (out.empty())
    for (uint32_t c : ChooseGone(e)) add(c);
  return out;
}

}  // namespace ferry::sync
