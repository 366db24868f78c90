// Publishing a dataset as versions in a bucket: `ferry publish`, `log`, `gc`
// (docs/sync.md, the layout in formats/manifest/README.md). Every version is a
// manifest of content-addressed objects; refs (HEAD, tags) name manifests.
// The node side (`ferry sync`) is ferry/sync.h.
//
// Thread-safety: each call is independent; the Backend is thread-safe.
#ifndef FERRY_PUBLISH_H_
#define FERRY_PUBLISH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/export.h"
#include "ferry/hash.h"
#include "ferry/remote.h"
#include "ferry/status.h"

namespace ferry {

// One published version, as `ferry log` shows it.
struct VersionInfo {
  Hash128 id;
  bool has_parent = false;
  Hash128 parent;
  int64_t created_unix_s = 0;
  uint64_t files = 0;
  uint64_t bytes = 0;  // total size of the files
  std::string message;
  std::vector<std::string> tags;  // tag names pointing at this version
};

// Visits the versions from `ref` ("HEAD" or "tags/<name>") back through their
// parents, newest first, at most `max` of them (0: all). NotFound when the
// remote has no such ref or the manifest it names is missing; Corruption when
// a manifest does not match its id or breaks the format. A missing parent
// (removed by gc) ends the history: the last version visited then has
// has_parent set.
FERRY_EXPORT Status
ListVersions(Backend* backend, std::string_view ref, uint64_t max,
             const std::function<Status(const VersionInfo&)>& visit);

}  // namespace ferry

#endif  // FERRY_PUBLISH_H_
