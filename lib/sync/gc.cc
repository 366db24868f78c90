// CollectGarbage (docs/sync.md "gc"): keep the last N versions from HEAD and
// every tagged one; delete the objects and manifests none of them references
// once they are older than the grace period.
#include <algorithm>
#include <set>

#include "ferry/publish.h"
#include "sync/layout.h"
#include "sync/versions.h"

namespace ferry {
namespace {

bool HashLess(const Hash128& a, const Hash128& b) {
  return a.high != b.high ? a.high < b.high : a.low < b.low;
}

struct Kept {
  std::vector<Hash128> manifests;  // sorted
  std::vector<Hash128> objects;    // sorted, unique
};

Status KeepVersion(Backend* backend, const Hash128& id, Kept* kept,
                   VersionInfo* info) {
  FERRY_ASSIGN_OR_RETURN(std::string bytes, sync::FetchManifest(backend, id));
  kept->manifests.push_back(id);
  return sync::ReadManifest(
      bytes, id, JoinPath(backend->Describe(), sync::ManifestKey(id)), info,
      [&](const manifest::File& f) {
        Hash128 h;
        manifest::HashFromBytes(f.xxh3_128(), &h);
        kept->objects.push_back(h);
        return Status::OK();
      });
}

}  // namespace

Result<GcReport> CollectGarbage(Backend* backend, const GcOptions& o,
                                Env* env) {
  if (o.keep < 1)
    return Status::InvalidArgument("--keep", "must keep at least HEAD (1)");
  if (o.grace_s < 0)
    return Status::InvalidArgument("--grace", "must not be negative");
  if (!backend->caps().listing || (!o.dry_run && !backend->caps().writes))
    return Status::NotSupported(backend->Describe(),
                                "gc needs a remote that lists and deletes");
  GcReport report;
  Kept kept;
  // Which versions stay: every error here stops gc before it deletes.
  std::set<std::string> done;
  auto head = sync::ReadRef(backend, sync::kHead);
  if (!head.ok() && !head.status().IsNotFound()) return head.status();
  FERRY_ASSIGN_OR_RETURN(auto tags, sync::ReadTags(backend));
  if (!head.ok() && tags.empty())
    return Status::NotFound(backend->Describe(),
                            "has no .ferry/refs/HEAD and no tags: not a "
                            "published remote; nothing deleted");
  if (head.ok()) {
    Hash128 id = head->id;
    for (uint64_t n = 0; n < o.keep; ++n) {
      if (!done.insert(id.ToHex()).second) break;
      VersionInfo v;
      Status s = KeepVersion(backend, id, &kept, &v);
      if (n > 0 && s.IsNotFound()) break;  // an older gc removed it
      FERRY_RETURN_IF_ERROR(s);
      ++report.versions_kept;
      if (!v.has_parent) break;
      id = v.parent;
    }
  }
  for (const auto& [hex, name] : tags) {
    if (!done.insert(hex).second) continue;
    VersionInfo v;
    FERRY_RETURN_IF_ERROR(
        KeepVersion(backend, *Hash128::FromHex(hex), &kept, &v));
    ++report.versions_kept;
  }
  std::sort(kept.manifests.begin(), kept.manifests.end(), HashLess);
  std::sort(kept.objects.begin(), kept.objects.end(), HashLess);
  kept.objects.erase(std::unique(kept.objects.begin(), kept.objects.end()),
                     kept.objects.end());

  const int64_t now = static_cast<int64_t>(env->NowMicros()) * 1000;
  const int64_t cutoff = now - o.grace_s * 1000000000;
  // Streams a folder: each entry parsed, kept if referenced or young
  // (unknown age counts as young), else deleted.
  auto sweep = [&](std::string_view dir, bool objects,
                   const std::vector<Hash128>& keep) -> Status {
    return backend->List(dir, {}, [&](const ObjectInfo& info) -> Status {
      Hash128 h;
      bool ours = objects ? sync::ParseObjectKey(info.key, &h)
                          : sync::ParseManifestKey(info.key, &h);
      if (!ours) return Status::OK();  // not ferry's: never touched
      if (std::binary_search(keep.begin(), keep.end(), h, HashLess)) {
        if (objects) ++report.objects_kept;
        return Status::OK();
      }
      if (info.mtime_ns == 0 || info.mtime_ns >= cutoff) {
        ++report.young_kept;
        return Status::OK();
      }
      if (objects) {
        ++report.objects_deleted;
        report.bytes_deleted += info.size;
      } else {
        ++report.manifests_deleted;
      }
      if (o.deleted) o.deleted(info.key, info.size);
      if (o.dry_run) return Status::OK();
      return backend->Delete(info.key);
    });
  };
  // Manifests first: a version is gone before its objects are.
  FERRY_RETURN_IF_ERROR(sweep(sync::kManifestsDir, false, kept.manifests));
  FERRY_RETURN_IF_ERROR(sweep(sync::kObjectsDir, true, kept.objects));
  return report;
}

}  // namespace ferry
