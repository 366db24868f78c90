// CollectGarbage (docs/sync.md "gc"): keep the last N versions from HEAD and
// every tagged one; delete the objects and manifests none of them references
// once they are older than the grace period.
#include <algorithm>
#include <functional>
#include <set>

#include "ferry/publish.h"
#include "remote/file_backend.h"
#include "remote/s3_backend.h"
#include "sync/deltas.h"
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
  std::vector<Hash128> packs;      // sorted, unique
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
        if (manifest::HashFromBytes(f.pack(), &h)) kept->packs.push_back(h);
        return Status::OK();
      });
}

}  // namespace

Status CollectGarbage(Backend* backend, const GcOptions& o, Env* env,
                      GcReport* out) {
  *out = GcReport{};
  GcReport& report = *out;
  if (o.keep < 1)
    return Status::InvalidArgument("--keep", "must keep at least HEAD (1)");
  if (o.grace_s < 0)
    return Status::InvalidArgument("--grace", "must not be negative");
  if (o.grace_s > kMaxGraceS)
    return Status::InvalidArgument("--grace", "must be at most 100 years");
  if (!backend->caps().listing || (!o.dry_run && !backend->caps().writes))
    return Status::NotSupported(backend->Describe(),
                                "gc needs a remote that lists and deletes");
  Kept kept;
  // Which versions stay: every error here stops gc before it deletes.
  std::set<std::string> done;
  auto head = sync::ReadRef(backend, sync::kHead);
  if (!head.ok() && !head.status().IsNotFound()) return head.status();
  FERRY_ASSIGN_OR_RETURN(auto tags, sync::ReadTags(backend, /*strict=*/true));
  if (!head.ok() && tags.empty())
    return Status::NotFound(backend->Describe(),
                            "has no .ferry/refs/HEAD and no tags: not a "
                            "published remote; nothing deleted");
  // Every publish writes HEAD: tags without it are a remote whose HEAD was
  // lost or cannot be read (a file:// HEAD that became a folder, a FIFO, a
  // link out of the bucket), and keeping only the tags would delete the
  // versions HEAD named.
  if (!head.ok())
    return Status::FailedPrecondition(
        backend->Describe(),
        "has tags but no readable .ferry/refs/HEAD (" +
            std::string(head.status().message()) +
            "): nothing deleted; restore HEAD or publish again");
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
  std::sort(kept.packs.begin(), kept.packs.end(), HashLess);
  kept.packs.erase(std::unique(kept.packs.begin(), kept.packs.end()),
                   kept.packs.end());

  const int64_t now = static_cast<int64_t>(env->NowMicros()) * 1000;
  const int64_t cutoff = now - o.grace_s * 1000000000;
  auto kept_object = [&](const Hash128& h) {
    return std::binary_search(kept.objects.begin(), kept.objects.end(), h,
                              HashLess);
  };
  enum class Verdict { kNotOurs, kKeep, kDrop };
  // Streams a folder: each entry judged; one that is ferry's and not kept
  // is deleted unless young (unknown age counts as young). `deleted` counts
  // what this run removed (never before the backend said so: a run that
  // stops reports what it did), and with count_bytes its bytes go to
  // bytes_deleted; one found gone (another gc's) counts in already_gone.
  report.sweeping = true;
  auto sweep = [&](std::string_view dir,
                   const std::function<Verdict(const std::string&)>& judge,
                   uint64_t* deleted, bool count_bytes = true) -> Status {
    return backend->List(dir, {}, [&](const ObjectInfo& info) -> Status {
      Verdict v = judge(info.key);
      if (v != Verdict::kDrop) return Status::OK();  // kept, or not ferry's
      if (info.mtime_ns == 0 || info.mtime_ns >= cutoff) {
        ++report.young_kept;
        return Status::OK();
      }
      bool removed = true;
      if (!o.dry_run) {
        // A listing is a page old (S3: up to 1000 keys and their deletes
        // ago): a publish may have uploaded the key again since, as it does
        // with an old unreferenced object it reuses ("Why the grace"), and
        // its new HEAD will reference it. The key's age now decides; the
        // window left is this one round trip.
        auto now_info = backend->Stat(info.key);
        if (!now_info.ok() && now_info.status().IsNotFound()) {
          ++report.already_gone;
          return Status::OK();
        }
        FERRY_RETURN_IF_ERROR(now_info.status());
        if (now_info->mtime_ns == 0 || now_info->mtime_ns >= cutoff) {
          ++report.young_kept;
          return Status::OK();
        }
        FERRY_ASSIGN_OR_RETURN(removed, backend->DeleteIfPresent(info.key));
      }
      if (!removed) {
        ++report.already_gone;
        return Status::OK();
      }
      ++*deleted;
      if (count_bytes) report.bytes_deleted += info.size;
      if (o.deleted) o.deleted(info.key, info.size);
      return Status::OK();
    });
  };
  // Manifests first: a version is gone before its objects are; signatures
  // and deltas (docs/delta.md) go with the objects they belong to.
  FERRY_RETURN_IF_ERROR(sweep(
      sync::kManifestsDir,
      [&](const std::string& key) {
        Hash128 h;
        if (!sync::ParseManifestKey(key, &h)) return Verdict::kNotOurs;
        return std::binary_search(kept.manifests.begin(), kept.manifests.end(),
                                  h, HashLess)
                   ? Verdict::kKeep
                   : Verdict::kDrop;
      },
      &report.manifests_deleted, false));
  FERRY_RETURN_IF_ERROR(sweep(
      sync::kObjectsDir,
      [&](const std::string& key) {
        Hash128 h;
        if (!sync::ParseObjectKey(key, &h)) return Verdict::kNotOurs;
        if (!kept_object(h)) return Verdict::kDrop;
        ++report.objects_kept;
        return Verdict::kKeep;
      },
      &report.objects_deleted));
  FERRY_RETURN_IF_ERROR(sweep(
      sync::kPacksDir,
      [&](const std::string& key) {
        Hash128 h;
        if (!sync::ParsePackKey(key, &h)) return Verdict::kNotOurs;
        if (!std::binary_search(kept.packs.begin(), kept.packs.end(), h,
                                HashLess))
          return Verdict::kDrop;
        ++report.packs_kept;
        return Verdict::kKeep;
      },
      &report.packs_deleted));
  FERRY_RETURN_IF_ERROR(sweep(
      sync::kSigsDir,
      [&](const std::string& key) {
        Hash128 h;
        if (!sync::ParseSigKey(key, &h)) return Verdict::kNotOurs;
        return kept_object(h) ? Verdict::kKeep : Verdict::kDrop;
      },
      &report.sigs_deleted));
  FERRY_RETURN_IF_ERROR(sweep(
      sync::kDeltasDir,
      [&](const std::string& key) {
        Hash128 from, to;
        if (!sync::ParseDeltaKey(key, &from, &to)) return Verdict::kNotOurs;
        return kept_object(from) && kept_object(to) ? Verdict::kKeep
                                                    : Verdict::kDrop;
      },
      &report.deltas_deleted));
  // Killed uploads' temporary files (file://): never listed, so swept apart.
  // One it cannot remove (a read-only bucket) fails gc as an object would.
  if (auto* sweeper = dynamic_cast<remote::StaleTempSweeper*>(backend)) {
    StaleTempSweep temps = sweeper->RemoveStaleTempsBelow(".ferry", o.dry_run);
    report.temps_deleted = temps.removed;
    if (temps.failed > 0)
      return temps.first_failure.WithContext(
          "gc: " + std::to_string(temps.failed) +
          " temporary files killed uploads left could not be removed, the "
          "first");
  }
  // Killed multipart uploads (S3): invisible in listings and billed, of
  // keys of ferry's layout only. Not every server lists them, nor every
  // policy allows it: then a note, not a failure (the versions above are
  // what gc is for); so is an abort that fails.
  if (auto* sweeper = dynamic_cast<remote::IncompleteUploadSweeper*>(backend)) {
    auto ours = [](std::string_view key) {
      Hash128 a, b;
      return sync::ParseObjectKey(key, &a) || sync::ParsePackKey(key, &a) ||
             sync::ParseManifestKey(key, &a) || sync::ParseSigKey(key, &a) ||
             sync::ParseDeltaKey(key, &a, &b);
    };
    remote::UploadSweep swept;
    Status listed =
        sweeper->AbortUploadsBelow(".ferry/", cutoff, o.dry_run, ours, &swept);
    // What it aborted counts also when the listing failed on a later page.
    report.uploads_aborted = swept.aborted;
    report.young_kept += swept.young_kept;
    if (swept.failed > 0)
      report.uploads_note =
          std::to_string(swept.failed) +
          " could not be aborted, the first: " + swept.first_failure.ToString();
    if (listed.IsUnavailable()) return listed;
    if (!listed.ok()) {
      const bool seen = swept.aborted + swept.young_kept + swept.failed > 0;
      report.uploads_note =
          (seen ? "not all looked at: " : "not looked at: ") +
          listed.ToString() +
          (report.uploads_note.empty() ? "" : "; " + report.uploads_note);
    }
  }
  return Status::OK();
}

}  // namespace ferry
