// Shared pieces of the ferry command line: the exit-code table, the options
// every command has, and how each command registers itself.
#ifndef FERRY_TOOLS_CLI_H_
#define FERRY_TOOLS_CLI_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "ferry/status.h"

namespace ferry::cli {

// Exit codes, documented in README.md.
enum ExitCode : int {
  kExitOk = 0,
  kExitItemsFailed = 1,  // some items failed, each reported
  kExitUsage = 2,
  kExitIntegrity = 3,  // an integrity failure was found
  kExitIo = 4,         // IO or network failure
};

int ExitCodeFor(const Status& s);

// Options every command takes.
struct CommonOptions {
  int jobs = 0;  // 0: one per core
  bool json = false;
  bool quiet = false;
  bool verbose = false;
  int ResolvedJobs() const;
};
void AddCommonOptions(CLI::App* cmd, CommonOptions* common);

// Prints "ferry: <status>" on stderr and returns its exit code.
int Fail(const Status& s);

// Each command registers itself; the callback runs once parsing succeeded and
// returns the exit code.
using Runner = std::function<int()>;
Runner RegisterHash(CLI::App* app);
Runner RegisterConvert(CLI::App* app);
Runner RegisterSplit(CLI::App* app);
Runner RegisterPack(CLI::App* app);
Runner RegisterInspect(CLI::App* app);
Runner RegisterVerify(CLI::App* app);

}  // namespace ferry::cli

#endif  // FERRY_TOOLS_CLI_H_
