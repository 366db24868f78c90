// ferry hash: XXH3-128 of files and trees, byte-compatible with xxhsum -H2.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "ferry/hash_list.h"
#include "ferry/json.h"

namespace ferry::cli {
namespace {

struct HashArgs {
  CommonOptions common;
  std::vector<std::string> paths;
  bool check = false;
  bool strict = false;
};

const char* OutcomeName(CheckEntry::Outcome o) {
  switch (o) {
    case CheckEntry::Outcome::kOk:
      return "ok";
    case CheckEntry::Outcome::kMismatch:
      return "mismatch";
    case CheckEntry::Outcome::kMissing:
      return "missing";
    case CheckEntry::Outcome::kUnreadable:
      return "unreadable";
  }
  return "?";
}

// A listed name in a check line as GNU sha256sum -c shows it: as it is, or,
// if it needs escaping (Printable: a line break, a control byte, a byte that
// is not UTF-8, a backslash), escaped after a leading backslash, so that the
// line says which of the two forms it holds and stays one line.
std::string CheckedName(const std::string& path) {
  std::string shown = Printable(path);
  return shown == path ? shown : "\\" + shown;
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

int RunHash(const HashArgs& a) {
  auto progress = NewTerminalProgress(a.common.quiet || a.common.json);
  HashOptions opt;
  opt.jobs = a.common.ResolvedJobs();
  opt.progress = progress.get();
  JsonWriter json(stdout);
  if (a.common.json)
    json.BeginObject().Key("command").String("hash").Key("files").BeginArray();
  std::vector<HashEntry> failures;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<HashEntry> skipped;
  auto summary = HashPaths(a.paths, opt, [&](const HashEntry& e) {
    if (e.status.code() == Status::Code::kNotSupported) {
      // Not a file (a FIFO, a device, a link to a folder): said, not failed.
      if (!a.common.quiet && !a.common.json) {
        std::fprintf(stderr, "ferry: %s: skipped: %s\n",
                     Printable(e.path).c_str(),
                     Printable(e.status.message()).c_str());
      }
      skipped.push_back(e);
    } else if (!e.status.ok()) {
      std::fprintf(stderr, "ferry: %s\n",
                   Printable(e.status.ToString()).c_str());
      failures.push_back(e);
    } else if (a.common.json) {
      json.BeginObject()
          .Key("path")
          .String(e.path)
          .Key("xxh3_128")
          .String(e.hash.ToHex())
          .Key("size")
          .Uint(e.size)
          .EndObject();
    } else {
      if (e.path.find('\n') != std::string::npos) {
        std::fprintf(stderr,
                     "ferry: warning: %s holds a line break: its line is "
                     "written escaped (GNU form), which ferry hash --check "
                     "reads but xxhsum 0.8.1 -c does not\n",
                     Printable(e.path).c_str());
      }
      std::string line = FormatHashLine(e.hash, e.path);
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
  });
  if (!summary.ok()) return Fail(summary.status());
  double secs = SecondsSince(t0);
  if (a.common.json) {
    json.EndArray().Key("failed").BeginArray();
    for (const HashEntry& e : failures) {
      json.BeginObject()
          .Key("path")
          .String(e.path)
          .Key("error")
          .String(e.status.ToString())
          .EndObject();
    }
    json.EndArray().Key("skipped").BeginArray();
    for (const HashEntry& e : skipped) {
      json.BeginObject()
          .Key("path")
          .String(e.path)
          .Key("reason")
          .String(e.status.message())
          .EndObject();
    }
    json.EndArray()
        .Key("summary")
        .BeginObject()
        .Key("files")
        .Uint(summary->files)
        .Key("skipped")
        .Uint(summary->skipped)
        .Key("bytes")
        .Uint(summary->bytes)
        .Key("failed")
        .Uint(summary->failed)
        .Key("seconds")
        .Double(secs)
        .Key("mb_per_s")
        .Double(secs > 0 ? summary->bytes / secs / 1e6 : 0)
        .EndObject()
        .EndObject();
  }
  return summary->failed ? kExitItemsFailed : kExitOk;
}

int RunCheck(const HashArgs& a) {
  auto progress = NewTerminalProgress(true);  // OK lines are the progress
  HashOptions opt;
  opt.jobs = a.common.ResolvedJobs();
  opt.progress = progress.get();
  JsonWriter json(stdout);
  if (a.common.json)
    json.BeginObject()
        .Key("command")
        .String("check")
        .Key("results")
        .BeginArray();
  CheckSummary total;
  bool io_failure = false, no_hash_lines = false;
  for (const std::string& list : a.paths) {
    auto summary = CheckHashList(
        list, opt,
        [&](const CheckEntry& e) {
          if (a.common.json) {
            json.BeginObject().Key("path").String(e.path).Key("status").String(
                OutcomeName(e.outcome));
            if (!e.detail.ok()) json.Key("error").String(e.detail.ToString());
            json.EndObject();
            return;
          }
          switch (e.outcome) {
            case CheckEntry::Outcome::kOk:
              if (!a.common.quiet)
                std::printf("%s: OK\n", CheckedName(e.path).c_str());
              break;
            case CheckEntry::Outcome::kMismatch:
              std::printf("%s: FAILED\n", CheckedName(e.path).c_str());
              break;
            default:
              std::fprintf(stderr, "ferry: %s\n",
                           Printable(e.detail.ToString()).c_str());
              std::printf("%s: FAILED open or read\n",
                          CheckedName(e.path).c_str());
          }
        },
        [&](uint64_t line_no, std::string_view) {
          std::fprintf(stderr,
                       "ferry: %s:%llu: improperly formatted hash line\n",
                       Printable(list).c_str(),
                       static_cast<unsigned long long>(line_no));
        });
    if (!summary.ok()) {
      std::fprintf(stderr, "ferry: %s\n",
                   Printable(summary.status().ToString()).c_str());
      io_failure = true;
      continue;
    }
    total.ok += summary->ok;
    total.mismatched += summary->mismatched;
    total.missing += summary->missing;
    total.bad_lines += summary->bad_lines;
    if (summary->ok + summary->mismatched + summary->missing == 0) {
      std::fprintf(stderr,
                   "ferry: %s: no properly formatted hash lines found\n",
                   Printable(list).c_str());
      no_hash_lines = true;  // as xxhsum -c: exit 1
    }
  }
  if (a.common.json) {
    json.EndArray()
        .Key("summary")
        .BeginObject()
        .Key("ok")
        .Uint(total.ok)
        .Key("mismatched")
        .Uint(total.mismatched)
        .Key("missing")
        .Uint(total.missing)
        .Key("bad_lines")
        .Uint(total.bad_lines)
        .EndObject()
        .EndObject();
  } else {
    if (total.mismatched)
      std::fprintf(stderr,
                   "ferry: WARNING: %llu computed checksums did NOT match\n",
                   static_cast<unsigned long long>(total.mismatched));
    if (total.missing)
      std::fprintf(stderr,
                   "ferry: WARNING: %llu listed files could not be read\n",
                   static_cast<unsigned long long>(total.missing));
  }
  bool bad = !total.clean() || (a.strict && total.bad_lines > 0);
  if (bad) return kExitIntegrity;
  if (io_failure) return kExitIo;
  return no_hash_lines ? kExitItemsFailed : kExitOk;
}

}  // namespace

Runner RegisterHash(CLI::App* app) {
  auto args = std::make_shared<HashArgs>();
  CLI::App* cmd = app->add_subcommand(
      "hash", "XXH3-128 of files (directories walked, sorted), as xxhsum -H2");
  cmd->footer(
      "Examples:\n"
      "  ferry hash samples/ > samples.xxh128     # one '<hash>  <path>' line "
      "a file\n"
      "  ferry hash --check samples.xxh128        # exit 3 if anything "
      "differs\n");
  cmd->add_option("paths", args->paths,
                  "Files or directories (with --check: hash lists)")
      ->required();
  cmd->add_flag("-c,--check", args->check,
                "Verify hash lists as xxhsum -c does");
  cmd->add_flag("--strict", args->strict,
                "With --check: improperly formatted lines fail");
  AddCommonOptions(cmd, &args->common);
  return [args] { return args->check ? RunCheck(*args) : RunHash(*args); };
}

}  // namespace ferry::cli
