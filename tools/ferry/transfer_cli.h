// What `ferry get` and `ferry put` share: object URLs split into the
// backend's URL and a key, TransferOptions from the remote flags, progress
// on a terminal, the --json summary and the exit code of a run.
#ifndef FERRY_TOOLS_TRANSFER_CLI_H_
#define FERRY_TOOLS_TRANSFER_CLI_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli.h"
#include "ferry/progress.h"
#include "ferry/remote.h"
#include "ferry/transfer.h"

namespace ferry::cli {

// http:// or https:// (any case): a remote that cannot be listed.
bool IsHttpUrl(std::string_view url);

// "s3://b/dir/x.bin" -> {"s3://b/dir", "x.bin"}; a plain "x.bin" ->
// {".", "x.bin"}. An http(s) URL is split before its query, and its key is
// kept as written ("https://h/d/a%20b?sig=1" -> {"https://h/d",
// "a%20b?sig=1"}, name "a b"). InvalidArgument when the URL names no object.
struct ObjectUrl {
  std::string parent;
  std::string key;
  std::string name;  // the file name a download gets
};
Result<ObjectUrl> SplitObjectUrl(std::string_view url);

// The URL of key below base, as --dry-run prints it: one '/' between them,
// also when base ends with one as given ("s3://b/p/" + "x" ->
// "s3://b/p/x", not "s3://b/p//x").
std::string KeyUrl(std::string_view base, std::string_view key);

// What a URL whose listing found nothing names (ls, get -R): the object
// itself when the URL does not end in '/' (s3://b/data/x.bin, which lists
// nothing as a prefix), else nullopt for a folder that is there and empty.
// NotFound "URL: no such object or prefix" when it is neither (on s3:// an
// empty key prefix is no folder, as `aws s3 ls` has it), unless told: a
// problem the listing reported names it already (a FIFO, a dangling link).
Result<std::optional<ObjectInfo>> EmptyListingNames(Backend* backend,
                                                    const std::string& url,
                                                    bool told);

TransferOptions TransferOptionsFrom(const RemoteOptions& remote, bool dry_run);

// --include GLOB / --exclude GLOB, each repeatable, kept in command-line
// order (as `aws s3 cp` and `aws s3 sync`): a path is taken unless the last
// filter that matches it is an --exclude. GLOB is fnmatch(3) on the path
// relative to the source, without FNM_PATHNAME ('*' also matches '/').
class PathFilters {
 public:
  // Adds the two options; `what` ends their help ("with -R").
  void AddOptions(CLI::App* cmd, std::string_view what);
  // (true for --include, GLOB) in the order given.
  std::vector<std::pair<bool, std::string>> List() const;
  bool empty() const;
  bool Takes(std::string_view path) const;

 private:
  CLI::App* cmd_ = nullptr;
  CLI::Option* include_ = nullptr;
  CLI::Option* exclude_ = nullptr;
};

// What walking a local source (put -R, or a file:// listing) met besides
// files, by the rules of ferry/walk.h and said as `ferry hash` says it: a
// skipped entry (NotSupported: a FIFO, a device, a link to a folder) on
// stderr unless quiet, "ferry: PATH: skipped: why", and counted as the
// transfer's files_skipped; anything else (a dangling link, an unreadable
// folder) is a failed item, reported and counted with the transfer's
// failures (MoveInto).
struct SourceProblems {
  explicit SourceProblems(bool quiet) : quiet(quiet) {}
  void Add(const std::string& path, const Status& why);
  // n files skipped for one reason, said in one line naming the first.
  void AddSkipped(uint64_t n, const std::string& first, std::string_view why);
  void MoveInto(TransferReport* report);

  bool quiet;
  std::vector<std::pair<std::string, Status>> failures;
  uint64_t skipped = 0;  // said on stderr, counted as files_skipped
};

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

// Prints each failure ("ferry: KEY: why"), then each of the run's warnings
// ("ferry: warning: ..."), and, with json, the summary (with a "warnings"
// array); returns the exit code: 3 when an integrity check failed, 4 for any
// other failure left after retries, else 0.
int ReportTransfer(std::string_view command, const TransferReport& report,
                   bool json, std::chrono::steady_clock::time_point t0);

}  // namespace ferry::cli

#endif  // FERRY_TOOLS_TRANSFER_CLI_H_
