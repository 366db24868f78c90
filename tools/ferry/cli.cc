#include "cli.h"

#include <cstdio>
#include <thread>

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
  cmd->add_option("-j,--jobs", common->jobs,
                  "Worker threads (default: one per core)")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--json", common->json,
                "Print a machine-readable summary on stdout");
  cmd->add_flag("-q,--quiet", common->quiet, "Print only errors");
  cmd->add_flag("-v,--verbose", common->verbose, "Print more detail");
}

int Fail(const Status& s) {
  std::fprintf(stderr, "ferry: %s\n", s.ToString().c_str());
  return ExitCodeFor(s);
}

}  // namespace ferry::cli
