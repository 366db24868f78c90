#include "sync/versions.h"

#include "ferry/transfer.h"
#include "sync/layout.h"

namespace ferry::sync {

Status ReadManifest(std::string_view bytes, const Hash128& id,
                    std::string_view where, VersionInfo* info,
                    const std::function<Status(const manifest::File&)>& file) {
  manifest::StringSource source(bytes);
  manifest::ManifestReader reader(&source);
  reader.ExpectId(id);
  auto fail = [&](const Status& s) {
    return Status::Corruption(where, s.message());
  };
  Status s = reader.Open();
  if (!s.ok()) return fail(s);
  const manifest::Header& h = reader.header();
  *info = VersionInfo{};
  info->id = id;
  if (!h.parent_id().empty()) {
    info->has_parent = manifest::HashFromBytes(h.parent_id(), &info->parent);
  }
  info->created_unix_s = h.created_unix_s();
  info->part_size = h.part_size();
  info->message = h.message();
  manifest::File f;
  for (bool done = false;;) {
    s = reader.Next(&f, &done);
    if (!s.ok()) return s.IsCorruption() ? fail(s) : s;
    if (done) break;
    if (file) FERRY_RETURN_IF_ERROR(file(f));
  }
  info->files = reader.footer().file_count();
  info->bytes = reader.footer().total_bytes();
  return Status::OK();
}

Result<VersionInfo> ReadVersion(Backend* backend, const Hash128& id) {
  FERRY_ASSIGN_OR_RETURN(std::string bytes, FetchManifest(backend, id));
  VersionInfo info;
  FERRY_RETURN_IF_ERROR(
      ReadManifest(bytes, id, JoinPath(backend->Describe(), ManifestKey(id)),
                   &info, nullptr));
  return info;
}

Result<std::multimap<std::string, std::string>> ReadTags(
    Backend* backend, bool strict, std::vector<std::string>* skipped) {
  std::multimap<std::string, std::string> tags;
  if (!backend->caps().listing) return tags;  // http: tags are not listed
  std::vector<std::string> names;
  Status odd;
  auto unreadable = [&](const std::string& key, const std::string& why) {
    if (strict && odd.ok())
      odd = Status::FailedPrecondition(JoinPath(backend->Describe(), key),
                                       why + ": not read as a tag");
    if (!strict && skipped)
      skipped->push_back(JoinPath(backend->Describe(), key) + ": " + why +
                         ": not read as a tag");
  };
  ListOptions lo;
  lo.problem = [&](const std::string& key, const Status& why) {
    unreadable(key, std::string(why.message()));
  };
  // One level: a folder there is seen (an empty one too, which a recursive
  // listing passes over without a word), refused when strict, told if not.
  lo.recursive = false;
  FERRY_RETURN_IF_ERROR(backend->List(kTagsDir, lo, [&](const ObjectInfo& o) {
    // The tags folder's own marker (an empty "tags/" object an S3 console
    // or tool made): no tag, and nothing wrong.
    if (IsFolderMarker(o) && o.key == kTagsDir) return Status::OK();
    if (o.is_prefix) {
      unreadable(o.key, "a folder");
      return Status::OK();
    }
    std::string_view name(o.key);
    name.remove_prefix(kTagsDir.size());
    if (CheckTagName(name).ok())
      names.emplace_back(name);
    else
      unreadable(o.key, "no tag's name");
    return Status::OK();
  }));
  FERRY_RETURN_IF_ERROR(odd);
  for (const std::string& name : names) {
    auto ref = ReadRef(backend, "tags/" + name);
    if (!ref.ok()) {
      if (ref.status().IsNotFound() && !strict) continue;  // deleted meanwhile
      // Not strict, told: one tag that holds no id (empty, garbage) failed
      // the whole log.
      if (!strict && skipped) {
        skipped->push_back(ref.status().ToString() + ": not read as a tag");
        continue;
      }
      return ref.status();
    }
    tags.emplace(ref->id.ToHex(), name);
  }
  return tags;
}

}  // namespace ferry::sync
