#include "cli.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <thread>

#include "ferry/remote.h"

namespace ferry::cli {

int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case Status::Code::kOk:
      return kExitOk;
    case Status::Code::kCorruption:
      return kExitIntegrity;
    case Status::Code::kInvalidArgument:
    case Status::Code::kNotSupported:
      return kExitUsage;
    default:
      return kExitIo;
  }
}

int CommonOptions::ResolvedJobs() const {
  if (jobs > 0) return jobs;
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

void AddCommonOptions(CLI::App* cmd, CommonOptions* common) {
  AddUintOption(cmd, "-j,--jobs", &common->jobs,
                "Worker threads (default: one per core)", 1, 1024)
      ->default_str("");
  cmd->add_flag("--json", common->json,
                "Print a machine-readable summary on stdout");
  cmd->add_flag("-q,--quiet", common->quiet, "Print only errors");
  cmd->add_flag("-v,--verbose", common->verbose, "Print more detail");
}

Result<uint64_t> ParseUint(std::string_view text, std::string_view name,
                           uint64_t lo, uint64_t hi) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  const bool digits =
      !text.empty() && text.front() >= '0' && text.front() <= '9' && ptr == end;
  if (!digits || ec == std::errc::invalid_argument) {
    return Status::InvalidArgument(std::string(name) + ": '" +
                                   std::string(text) +
                                   "' is not a whole number");
  }
  if (ec == std::errc::result_out_of_range || v < lo || v > hi) {
    return Status::InvalidArgument(
        std::string(name) + ": " + std::string(text) + " is out of range (" +
        std::to_string(lo) + " to " + std::to_string(hi) + ")");
  }
  return v;
}

int FinishStdout(int rc) {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) ||
      std::fclose(stdout) != 0) {
    std::fprintf(stderr, "ferry: error writing to stdout: %s\n",
                 errno ? std::strerror(errno) : "write failed");
    return kExitIo;
  }
  return rc;
}

int Fail(const Status& s) {
  std::fprintf(stderr, "ferry: %s\n",
               Printable(RedactUrls(s.ToString())).c_str());
  return ExitCodeFor(s);
}

}  // namespace ferry::cli
