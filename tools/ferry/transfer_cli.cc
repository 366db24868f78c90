#include "transfer_cli.h"

#include <fnmatch.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "ferry/json.h"
#include "ferry/sync.h"

namespace ferry::cli {

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(c));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// The file name for an http(s) URL's last path segment (no query): %XX
// decoded as wget does; kept as written when decoding would give a name
// with '/' or NUL, or "." or "..".
std::string HttpFileName(std::string_view segment) {
  std::string out;
  for (size_t i = 0; i < segment.size(); ++i) {
    int hi = -1, lo = -1;
    if (segment[i] == '%' && i + 2 < segment.size()) {
      hi = HexDigit(segment[i + 1]);
      lo = HexDigit(segment[i + 2]);
    }
    if (hi < 0 || lo < 0) {
      out += segment[i];
      continue;
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (out.find_first_of(std::string_view("/\0", 2)) != std::string::npos ||
      out == "." || out == "..")
    return std::string(segment);
  return out;
}

}  // namespace

bool IsHttpUrl(std::string_view url) {
  std::string scheme(url.substr(0, url.find("://")));
  for (char& c : scheme) c = static_cast<char>(std::tolower(c));
  return url.find("://") != std::string_view::npos &&
         (scheme == "http" || scheme == "https");
}

Result<ObjectUrl> SplitObjectUrl(std::string_view url) {
  size_t scheme = url.find("://");
  size_t authority_end = 0;
  // An http(s) URL's query may hold '/' (presigned credentials).
  const bool http = IsHttpUrl(url);
  std::string_view path = url;
  if (http) path = url.substr(0, url.find_first_of("?#", scheme + 3));
  if (scheme != std::string_view::npos) {
    authority_end = path.find('/', scheme + 3);
    if (authority_end == std::string_view::npos) authority_end = path.size();
  }
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos ||
      (scheme != std::string_view::npos && slash < authority_end)) {
    if (scheme != std::string_view::npos || url.empty())
      return Status::InvalidArgument(std::string(url), "names no object");
    return ObjectUrl{".", std::string(url), std::string(url)};
  }
  if (slash + 1 == path.size())
    return Status::InvalidArgument(std::string(url),
                                   "names a folder, not an object (use -R)");
  std::string parent(url.substr(0, slash));
  if (parent.empty()) parent = "/";
  std::string key(url.substr(slash + 1));
  std::string name = http ? HttpFileName(path.substr(slash + 1)) : key;
  return ObjectUrl{parent, std::move(key), std::move(name)};
}

std::string KeyUrl(std::string_view base, std::string_view key) {
  std::string url(base);
  if (url.empty() || url.back() != '/') url += '/';
  return url.append(key);
}

Result<std::optional<ObjectInfo>> EmptyListingNames(Backend* backend,
                                                    const std::string& url,
                                                    bool told) {
  if (!url.empty() && url.back() != '/') {
    auto one = backend->Stat("");
    if (one.ok()) return std::optional<ObjectInfo>(std::move(*one));
    if (!one.status().IsNotFound() && !one.status().IsInvalidArgument())
      return one.status();
  }
  if (told) return std::optional<ObjectInfo>();
  FERRY_ASSIGN_OR_RETURN(bool folder, backend->FolderExists());
  if (!folder) return Status::NotFound(url, "no such object or prefix");
  return std::optional<ObjectInfo>();
}

void PathFilters::AddOptions(CLI::App* cmd, std::string_view what) {
  cmd_ = cmd;
  include_ = cmd->add_option("--include")
                 ->description(
                     "Take paths matching GLOB again (after an --exclude; "
                     "repeatable, in order)" +
                     std::string(what))
                 ->type_name("GLOB")
                 ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  exclude_ = cmd->add_option("--exclude")
                 ->description(
                     "Leave out paths matching GLOB (fnmatch; '*' also "
                     "matches '/'; repeatable, in order)" +
                     std::string(what))
                 ->type_name("GLOB")
                 ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

std::vector<std::pair<bool, std::string>> PathFilters::List() const {
  std::vector<std::pair<bool, std::string>> out;
  if (cmd_ == nullptr) return out;
  std::map<const CLI::Option*, size_t> used;
  for (const CLI::Option* opt : cmd_->parse_order()) {
    if (opt != include_ && opt != exclude_) continue;
    const auto& results = opt->results();
    size_t& i = used[opt];
    if (i < results.size()) out.emplace_back(opt == include_, results[i++]);
  }
  return out;
}

bool PathFilters::empty() const {
  return include_ == nullptr ||
         (include_->count() == 0 && exclude_->count() == 0);
}

bool PathFilters::Takes(std::string_view path) const {
  bool in = true;
  const std::string p(path);
  for (const auto& [include, glob] : List())
    if (::fnmatch(glob.c_str(), p.c_str(), 0) == 0) in = include;
  return in;
}

TransferOptions TransferOptionsFrom(const RemoteOptions& r, bool dry_run) {
  TransferOptions t;
  t.connections = r.connections;
  t.part_size = r.part_size;
  t.bwlimit = r.bwlimit;
  t.max_retries = r.max_retries;
  t.low_speed_limit = r.low_speed_limit;
  t.low_speed_time = r.low_speed_time;
  t.dry_run = dry_run;
  t.unreachable_ms = r.unreachable_ms;
  return t;
}

void SourceProblems::Add(const std::string& path, const Status& why) {
  if (why.code() != Status::Code::kNotSupported) {
    failures.emplace_back(path, why);
    return;
  }
  ++skipped;
  if (!quiet) {
    std::fprintf(stderr, "ferry: %s: skipped: %s\n",
                 Printable(RedactUrls(path)).c_str(),
                 Printable(why.message()).c_str());
  }
}

void SourceProblems::AddSkipped(uint64_t n, const std::string& first,
                                std::string_view why) {
  skipped += n;
  if (quiet) return;
  if (n == 1) {
    std::fprintf(stderr, "ferry: %s: skipped: %s\n",
                 Printable(RedactUrls(first)).c_str(), Printable(why).c_str());
  } else {
    std::fprintf(stderr, "ferry: %llu files skipped, %s (the first: %s)\n",
                 static_cast<unsigned long long>(n), Printable(why).c_str(),
                 Printable(RedactUrls(first)).c_str());
  }
}

void SourceProblems::MoveInto(TransferReport* report) {
  report->files_skipped += skipped;
  skipped = 0;
  report->files_failed += failures.size();
  for (auto& f : failures) report->failures.push_back(std::move(f));
  failures.clear();
}

TransferBar::TransferBar(std::string_view what, uint64_t files, bool quiet)
    : bar_(NewTerminalProgress(quiet)) {
  bar_->Begin(what, files, 0);
}

TransferBar::~TransferBar() { bar_->End(); }

void TransferBar::Update(const TransferProgress& p) {
  bar_->Advance(p.files_done - files_, p.bytes_done - bytes_);
  files_ = p.files_done;
  bytes_ = p.bytes_done;
}

int ReportFailures(
    const std::vector<std::pair<std::string, Status>>& failures) {
  int rc = kExitOk;
  for (const auto& [key, s] : failures) {
    std::fprintf(stderr, "ferry: %s: %s\n", Printable(RedactUrls(key)).c_str(),
                 Printable(RedactUrls(s.ToString())).c_str());
    int code = ExitCodeFor(s);
    if (code == kExitUsage) code = kExitIo;  // a failed item, not a bad flag
    if (code == kExitIntegrity || rc != kExitIntegrity) rc = code;
  }
  return rc;
}

int ReportTransfer(std::string_view command, const TransferReport& r, bool json,
                   std::chrono::steady_clock::time_point t0) {
  int rc = ReportFailures(r.failures);
  // After the failures: the last line says what they have in common.
  for (const std::string& w : r.warnings)
    std::fprintf(stderr, "ferry: warning: %s\n",
                 Printable(RedactUrls(w)).c_str());
  if (json) {
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    JsonWriter w(stdout);
    w.BeginObject()
        .Key("command")
        .String(command)
        .Key("files_done")
        .Uint(r.files_done)
        .Key("files_failed")
        .Uint(r.files_failed)
        .Key("files_skipped")
        .Uint(r.files_skipped)
        .Key("bytes")
        .Uint(r.bytes)
        .Key("bytes_resumed")
        .Uint(r.bytes_resumed)
        .Key("bytes_discarded")
        .Uint(r.bytes_discarded)
        .Key("requests")
        .Uint(r.requests)
        .Key("retries")
        .BeginObject();
    for (const auto& [cause, n] : r.retries) w.Key(cause).Uint(n);
    w.EndObject().Key("failures").BeginArray();
    for (const auto& [key, s] : r.failures) {
      w.BeginObject()
          .Key("key")
          .String(RedactUrls(key))
          .Key("error")
          .String(RedactUrls(s.ToString()))
          .EndObject();
    }
    w.EndArray().Key("warnings").BeginArray();
    for (const std::string& warning : r.warnings) w.String(RedactUrls(warning));
    w.EndArray().Key("seconds").Double(secs).EndObject();
    std::fputc('\n', stdout);
  }
  return rc;
}

}  // namespace ferry::cli
