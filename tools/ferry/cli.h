// Shared pieces of the ferry command line: the exit-code table, the options
// every command has, and how each command registers itself.
#ifndef FERRY_TOOLS_CLI_H_
#define FERRY_TOOLS_CLI_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "ferry/result.h"
#include "ferry/status.h"
#include "ferry/text.h"

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

// A whole number written in decimal digits only (no sign, no spaces, no
// wrap-around) within [lo, hi]; `name` is the option, for the message.
Result<uint64_t> ParseUint(std::string_view text, std::string_view name,
                           uint64_t lo, uint64_t hi);

// Every numeric option goes through this: anything ParseUint refuses is a
// usage error (exit 2) that names the option and the accepted range.
template <typename T>
CLI::Option* AddUintOption(CLI::App* cmd, const std::string& flags, T* value,
                           const std::string& help, uint64_t lo, uint64_t hi) {
  std::string name = flags.substr(flags.rfind(',') + 1);
  return cmd
      ->add_option_function<std::string>(
          flags,
          [value, name, lo, hi](const std::string& text) {
            auto v = ParseUint(text, name, lo, hi);
            if (!v.ok())
              throw CLI::ValidationError(std::string(v.status().message()));
            *value = static_cast<T>(*v);
          },
          help)
      ->type_name("N")
      ->default_str(std::to_string(*value));
}

// Prints "ferry: <status>" on stderr and returns its exit code. Every line
// for a person that holds a name goes through Printable (ferry/text.h): a
// file name with a line break or bytes that are not UTF-8 stays one line.
int Fail(const Status& s);

// Flushes and closes stdout; a write error there (a full disk, a closed
// pipe) turns the command's exit code into kExitIo, so no command can
// report success for output that was lost.
int FinishStdout(int rc);

// Each command registers itself; the callback runs once parsing succeeded and
// returns the exit code.
using Runner = std::function<int()>;
Runner RegisterHash(CLI::App* app);
Runner RegisterConvert(CLI::App* app);
Runner RegisterSplit(CLI::App* app);
Runner RegisterPack(CLI::App* app);
Runner RegisterInspect(CLI::App* app);
Runner RegisterVerify(CLI::App* app);
Runner RegisterLs(CLI::App* app);
Runner RegisterGet(CLI::App* app);
Runner RegisterPut(CLI::App* app);
Runner RegisterSync(CLI::App* app);
Runner RegisterPublish(CLI::App* app);
Runner RegisterLog(CLI::App* app);
Runner RegisterGc(CLI::App* app);

}  // namespace ferry::cli

#endif  // FERRY_TOOLS_CLI_H_
