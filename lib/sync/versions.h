// Reading versions back from a bucket: a manifest by id with every rule
// checked, its summary, and the tags that name versions.
//
// Thread-safety: pure functions of the backend's state.
#ifndef FERRY_LIB_SYNC_VERSIONS_H_
#define FERRY_LIB_SYNC_VERSIONS_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ferry/publish.h"
#include "ferry/remote.h"
#include "formats/manifest/manifest.h"

namespace ferry::sync {

// Parses a manifest's bytes (already checked against id), visiting each
// file in path order; *info gets the summary. Corruption naming `where`.
Status ReadManifest(std::string_view bytes, const Hash128& id,
                    std::string_view where, VersionInfo* info,
                    const std::function<Status(const manifest::File&)>& file);

// Fetches manifest `id` and summarises it (tags left empty).
Result<VersionInfo> ReadVersion(Backend* backend, const Hash128& id);

// Every tag of the remote: manifest id (hex) -> tag name, names in order.
// A tag object that is not a ref is Corruption naming it. strict (gc): an
// entry of the tags folder that cannot be read as a tag — not a regular
// file (a FIFO, a device, a link out of the bucket, a folder, an empty one
// too), or no tag's name — is
// FailedPrecondition naming it, never left out (gc would delete its version).
// Not strict: such an entry is left out, and told in *skipped (if given) as
// "<remote>/<key>: <why>".
Result<std::multimap<std::string, std::string>> ReadTags(
    Backend* backend, bool strict = false,
    std::vector<std::string>* skipped = nullptr);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_VERSIONS_H_
