#include "sync/plan.h"

#include <fnmatch.h>
#include <sys/mman.h>

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "formats/manifest/manifest.h"
#include "sync/layout.h"

namespace ferry::sync {

static_assert(sizeof(Entry) <= 96, "a million entries held twice");

namespace {

// Asks for transparent huge pages over the whole 2 MiB pages of [p, p+n):
// a 1,000,000-file table is ~96 MB, whose 23,000 first touches of 4 KiB
// pages cost a fifth of reading the manifest (page faults are dear in a
// VM). Where THP is off or "never", a no-op.
void AdviseHugePages(void* p, size_t n) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin =
      (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kHuge - 1);
  if (end > begin)
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace

Result<ManifestInfo> ReadManifest(std::string_view bytes, const Hash128& id) {
  // The id first: nothing of a manifest that is not the one asked for is
  // even parsed.
  Status v = manifest::VerifyId(bytes, id);
  if (!v.ok()) return Status::Corruption("manifest " + id.ToHex(), v.message());
  manifest::StringSource source(bytes);
  manifest::ManifestReader reader(&source);
  reader.ExpectId(id);
  FERRY_RETURN_IF_ERROR(reader.Open());
  ManifestInfo info;
  info.id = id;
  info.part_size = reader.header().part_size();
  // Room for exactly its files, counted first (a pass that decompresses
  // and steps over the records): the vector neither doubles its way up
  // (touching 1.5 times its size at each step) nor holds room a guess left
  // unused (bytes / 24 undercounted a manifest of duplicate files, whose
  // hashes compress). At most 2^24 entries up front (1.5 GiB): the count
  // is of records not yet checked.
  {
    manifest::StringSource counting(bytes);
    manifest::ManifestReader counter(&counting);
    FERRY_RETURN_IF_ERROR(counter.Open());
    uint64_t n = 0;
    for (bool done = false; n < (uint64_t{1} << 24); ++n) {
      FERRY_RETURN_IF_ERROR(counter.Skip(&done));
      if (done) break;
    }
    info.files.reserve(static_cast<size_t>(n));
    AdviseHugePages(info.files.data(), info.files.capacity() * sizeof(Entry));
  }
  manifest::File f;
  std::unordered_map<Hash128, uint32_t, Hash128Hasher> pack_of;
  auto is_file = [&](std::string_view p) {  // files so far are sorted
    auto it = std::lower_bound(
        info.files.begin(), info.files.end(), p,
        [](const Entry& e, std::string_view v) { return e.path < v; });
    return it != info.files.end() && it->path == p;
  };
  while (true) {
    bool done = false;
    FERRY_RETURN_IF_ERROR(reader.Next(&f, &done));
    if (done) break;
    Entry e;
    e.path = f.path();
    e.size = f.size();
    if (!manifest::HashFromBytes(f.xxh3_128(), &e.hash))
      return Status::Corruption(e.path, "hash is not 16 bytes");
    e.mode = static_cast<uint16_t>(f.mode());  // <= 0777: the reader checked
    e.sig_block_len = f.sig_block_len();
    e.sig_strong_len = static_cast<uint8_t>(f.sig_strong_len());  // <= 32
    e.first_delta = static_cast<uint32_t>(info.deltas.size());
    e.delta_count = static_cast<uint32_t>(f.deltas_size());
    for (const manifest::Delta& d : f.deltas()) {
      DeltaSource src;
      if (!manifest::HashFromBytes(d.from_xxh3_128(), &src.from))
        return Status::Corruption(e.path, "a delta's source is not 16 bytes");
      src.size = d.size();
      info.deltas.push_back(src);
    }
    if (!f.pack().empty()) {
      PackRef p;
      manifest::HashFromBytes(f.pack(), &p.id);  // 16 bytes: the reader checked
      p.size = f.pack_size();
      auto [it, added] =
          pack_of.emplace(p.id, static_cast<uint32_t>(info.packs.size() + 1));
      if (added) {
        info.packs.push_back(p);
      } else if (info.packs[it->second - 1].size != p.size) {
        return Status::Corruption(
            "manifest " + id.ToHex(),
            "'" + e.path + "' gives pack " + p.id.ToHex() + " " +
                std::to_string(p.size) + " bytes, an earlier file " +
                std::to_string(info.packs[it->second - 1].size));
      }
      e.pack = it->second;
      e.pack_offset = f.pack_offset();
    }
    if (info.part_hashes.size() + f.part_xxh3_64_size() > UINT32_MAX)
      return Status::Corruption("manifest " + id.ToHex(),
                                "'" + e.path + "' takes its parts past 2^32");
    e.first_part = static_cast<uint32_t>(info.part_hashes.size());
    info.part_hashes.insert(info.part_hashes.end(), f.part_xxh3_64().begin(),
                            f.part_xxh3_64().end());
    // Sorted order puts "a" before "a/b": a file that is also a folder of a
    // later path is refused here, so no path can lead through a file (or
    // a link made in its place). Looked up in the files so far (sorted, as
    // the reader checks): a set of every path cost ~100 bytes per entry.
    // A path in the same folder as the one before has the same prefixes,
    // checked then (and that file is no prefix of this one).
    const size_t dir_end = e.path.rfind('/');
    const bool same_dir =
        !info.files.empty() && dir_end != std::string::npos &&
        info.files.back().path.rfind('/') == dir_end &&
        info.files.back().path.compare(0, dir_end, e.path, 0, dir_end) == 0;
    for (size_t slash = same_dir ? std::string::npos : e.path.find('/');
         slash != std::string::npos; slash = e.path.find('/', slash + 1)) {
      if (is_file(std::string_view(e.path).substr(0, slash)))
        return Status::Corruption("manifest " + id.ToHex(),
                                  "'" + e.path + "' leads through the file '" +
                                      e.path.substr(0, slash) + "'");
    }
    if (e.path.rfind(".ferry-sync", 0) == 0 || e.path == kViewLockName)
      return Status::Corruption("manifest " + id.ToHex(),
                                "'" + e.path +
                                    "' is the name of ferry's own file in "
                                    "every view");
    info.files.push_back(std::move(e));
  }
  return info;
}

bool IsShard(std::string_view path) {
  auto ends = [&](std::string_view s) {
    return path.size() > s.size() && path.substr(path.size() - s.size()) == s;
  };
  if (ends(".idx")) path.remove_suffix(4);
  return ends(".tfrecord") || ends(".tfrecord.gz") || ends(".tar");
}

bool GlobMatch(std::string_view pattern, std::string_view path) {
  return ::fnmatch(std::string(pattern).c_str(), std::string(path).c_str(),
                   0) == 0;
}

std::vector<Entry> Select(const std::vector<Entry>& files,
                          const SyncSelection& sel) {
  return Select(std::vector<Entry>(files), sel);
}

std::vector<Entry> Select(std::vector<Entry>&& files,
                          const SyncSelection& sel) {
  return Select(Select(std::move(files), sel, /*share=*/false), sel,
                /*share=*/true);
}

Result<std::vector<Entry>> SelectSome(std::vector<Entry>&& files,
                                      const SyncSelection& sel) {
  const size_t n = files.size();
  std::vector<Entry> kept = Select(std::move(files), sel, /*share=*/false);
  if (n > 0 && kept.empty()) {
    std::string f;
    for (const auto& [include, glob] : sel.filters)
      f += std::string(f.empty() ? "" : " ") +
           (include ? "--include '" : "--exclude '") + glob + "'";
    return Status::InvalidArgument(
        f, "select none of the " + std::to_string(n) +
               " files of the dataset (nothing was changed)");
  }
  return Select(std::move(kept), sel, /*share=*/true);
}

std::vector<Entry> Select(std::vector<Entry>&& files, const SyncSelection& sel,
                          bool share) {
  std::vector<Entry> kept = std::move(files);
  if (!sel.filters.empty() && !share) {
    std::erase_if(kept, [&](const Entry& e) {
      bool in = true;
      for (const auto& [include, glob] : sel.filters)
        if (GlobMatch(glob, e.path)) in = include;
      return !in;
    });
  }
  if (!share) return kept;
  if (sel.world_size <= 1) return kept;
  // Shards (without their .idx) by size, largest first.
  std::vector<size_t> shards;
  for (size_t i = 0; i < kept.size(); ++i) {
    const std::string& p = kept[i].path;
    if (IsShard(p) && !(p.size() > 4 && p.substr(p.size() - 4) == ".idx"))
      shards.push_back(i);
  }
  std::sort(shards.begin(), shards.end(), [&](size_t a, size_t b) {
    if (kept[a].size != kept[b].size) return kept[a].size > kept[b].size;
    return kept[a].path < kept[b].path;
  });
  std::vector<uint64_t> load(sel.world_size, 0);
  std::unordered_set<std::string> mine;
  for (size_t i : shards) {
    size_t r = std::min_element(load.begin(), load.end()) - load.begin();
    load[r] += kept[i].size;
    if (static_cast<int>(r) == sel.rank) mine.insert(kept[i].path);
  }
  std::vector<Entry> out;
  for (Entry& e : kept) {
    if (IsShard(e.path)) {
      std::string shard = e.path;
      if (shard.size() > 4 && shard.substr(shard.size() - 4) == ".idx")
        shard.resize(shard.size() - 4);
      if (!mine.count(shard)) continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<size_t> UniqueObjects(const std::vector<Entry>& files) {
  // Sorted as a compact array (not through indices into the entries: a
  // million random reads of 64-byte entries per comparison pass).
  struct Key {
    uint64_t high, low, size;
    size_t index;
    bool operator<(const Key& o) const {
      return std::tie(high, low, size, index) <
             std::tie(o.high, o.low, o.size, o.index);
    }
  };
  std::vector<Key> keys;
  keys.reserve(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    keys.push_back(
        Key{files[i].hash.high, files[i].hash.low, files[i].size, i});
  std::sort(keys.begin(), keys.end());
  std::vector<size_t> first;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (k > 0 && keys[k].high == keys[k - 1].high &&
        keys[k].low == keys[k - 1].low && keys[k].size == keys[k - 1].size)
      continue;
    first.push_back(keys[k].index);
  }
  std::sort(first.begin(), first.end());
  return first;
}

std::string SelectionKey(const SyncSelection& sel) {
  if (sel.world_size <= 1 && sel.filters.empty()) return "";
  std::string key =
      "rank " + std::to_string(sel.rank) + "/" + std::to_string(sel.world_size);
  for (const auto& [include, glob] : sel.filters)
    key += std::string(include ? "\n+" : "\n-") + glob;
  return HashBytes(key).ToHex().substr(0, 16);
}

}  // namespace ferry::sync
