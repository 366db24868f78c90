// ListVersions: HEAD (or a tag) back through the parent ids.
#include <map>
#include <set>

#include "ferry/publish.h"
#include "formats/manifest/manifest.h"
#include "sync/layout.h"
#include "sync/versions.h"

namespace ferry {

Status ListVersions(Backend* backend, std::string_view ref, uint64_t max,
                    const std::function<Status(const VersionInfo&)>& visit,
                    std::vector<std::string>* skipped) {
  FERRY_ASSIGN_OR_RETURN(sync::Ref head, sync::ReadRef(backend, ref));
  FERRY_ASSIGN_OR_RETURN(auto tags, sync::ReadTags(backend, false, skipped));
  std::set<std::string> seen;  // a parent cycle cannot be made by publish
  Hash128 id = head.id;
  for (uint64_t n = 0; max == 0 || n < max; ++n) {
    if (!seen.insert(id.ToHex()).second)
      return Status::Corruption(
          JoinPath(backend->Describe(), sync::ManifestKey(id)),
          "the parent chain loops back to this version");
    auto read = sync::ReadVersion(backend, id);
    // An old version gc removed ends the history; the ref's own is an error.
    if (n > 0 && read.status().IsNotFound()) break;
    if (!read.ok()) return read.status();
    VersionInfo v = std::move(*read);
    auto [lo, hi] = tags.equal_range(id.ToHex());
    for (auto it = lo; it != hi; ++it) v.tags.push_back(it->second);
    FERRY_RETURN_IF_ERROR(visit(v));
    if (!v.has_parent) break;
    id = v.parent;
  }
  return Status::OK();
}

}  // namespace ferry
