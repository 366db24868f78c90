// The options every command that talks to remote storage takes (get, put,
// ls): where and how to reach S3 and HTTP(S) remotes, and how hard to push
// the transfers. They fill a RemoteOptions (ferry/remote.h); flags beat the
// environment and ~/.aws, which OpenBackend resolves (docs/remote.md).
#ifndef FERRY_TOOLS_REMOTE_OPTIONS_H_
#define FERRY_TOOLS_REMOTE_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string_view>

#include "ferry/remote.h"
#include "ferry/result.h"

namespace ferry::cli {

// --endpoint-url, --region, --profile, --ca-bundle, --s3-addressing,
// --no-sign-request, --header (repeatable), --connections, --part-size,
// --bwlimit, --retries. Also -v (one line per request on stderr, secrets
// redacted) unless the command already has a -v: call it after
// AddCommonOptions and that -v turns the request log on too.
void AddRemoteOptions(CLI::App* cmd, RemoteOptions* options);

// A byte count: digits with an optional unit K, M, G or T (powers of 1024;
// "KiB", "KB", "k" spell the same unit), e.g. 8M, 64MiB, 1048576.
// InvalidArgument naming `name` for anything else or outside [lo, hi].
Result<uint64_t> ParseByteSize(std::string_view text, std::string_view name,
                               uint64_t lo, uint64_t hi);

}  // namespace ferry::cli

#endif  // FERRY_TOOLS_REMOTE_OPTIONS_H_
