// What `ferry get` and `ferry put` share: object URLs split into the
// backend's URL and a key, TransferOptions from the remote flags, progress
// on a terminal, the --json summary and the exit code of a run.
#ifndef FERRY_TOOLS_TRANSFER_CLI_H_
#define FERRY_TOOLS_TRANSFER_CLI_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli.h"
#include "ferry/progress.h"
#include "ferry/remote.h"
#include "ferry/transfer.h"

namespace ferry::cli {

// "s3://b/dir/x.bin" -> {"s3://b/dir", "x.bin"}; a plain "x.bin" ->
// {".", "x.bin"}. InvalidArgument when the URL names no object.
struct ObjectUrl {
  std::string parent;
  std::string key;
};
Result<ObjectUrl> SplitObjectUrl(std::string_view url);

TransferOptions TransferOptionsFrom(const RemoteOptions& remote, bool dry_run);

// Feeds TransferProgress into a terminal bar (nothing when quiet or not a
// terminal).
class TransferBar {
 public:
  TransferBar(std::string_view what, uint64_t files, bool quiet);
  ~TransferBar();
  void Update(const TransferProgress& p);

 private:
  std::unique_ptr<Progress> bar_;
  uint64_t files_ = 0, bytes_ = 0;
};

// Prints each failure ("ferry: KEY: why") and returns the exit code they
// make: 3 when an integrity check failed, else 4 (0 for none).
int ReportFailures(const std::vector<std::pair<std::string, Status>>& failures);

// Prints each failure ("ferry: KEY: why") and, with json, the summary;
// returns the exit code: 3 when an integrity check failed, 4 for any other
// failure left after retries, else 0.
int ReportTransfer(std::string_view command, const TransferReport& report,
                   bool json, std::chrono::steady_clock::time_point t0);

}  // namespace ferry::cli

#endif  // FERRY_TOOLS_TRANSFER_CLI_H_
