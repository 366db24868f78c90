// ferry verify: prove a dataset (or shard, or hash-listed tree) intact.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "ferry/json.h"
#include "ferry/verify.h"

namespace ferry::cli {
namespace {

struct VerifyArgs {
  CommonOptions common;
  std::string path, hashes;
  bool deep = false;
};

int RunVerify(const VerifyArgs& a) {
  VerifyOptions o;
  o.deep = a.deep;
  o.jobs = a.common.ResolvedJobs();
  o.hashes_file = a.hashes;
  auto progress = NewTerminalProgress(a.common.quiet || a.common.json);
  o.progress = progress.get();
  auto t0 = std::chrono::steady_clock::now();
  auto rep = Verify(a.path, o);
  if (!rep.ok()) return Fail(rep.status());
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (a.common.json) {
    JsonWriter j(stdout);
    j.BeginObject()
        .Key("command")
        .String("verify")
        .Key("path")
        .String(a.path)
        .Key("kind")
        .String(rep->kind);
    j.Key("clean")
        .Bool(rep->clean())
        .Key("files")
        .Uint(rep->files)
        .Key("records")
        .Uint(rep->records);
    j.Key("bytes").Uint(rep->bytes).Key("seconds").Double(secs).Key("problems");
    for (const auto* list : {&rep->problems, &rep->warnings}) {
      if (list == &rep->warnings) j.Key("warnings");
      j.BeginArray();
      for (const Problem& p : *list) {
        j.BeginObject()
            .Key("file")
            .String(p.file)
            .Key("record")
            .Int(p.record)
            .Key("offset")
            .Int(p.offset);
        j.Key("what").String(p.what).Key("detail").String(p.detail).EndObject();
      }
      j.EndArray();
    }
    j.EndObject();
  } else {
    for (const auto* list : {&rep->problems, &rep->warnings}) {
      for (const Problem& p : *list) {
        std::string where = p.file;
        if (p.record >= 0) where += ": record " + std::to_string(p.record);
        if (p.offset >= 0)
          where += (p.record >= 0 ? " at offset " : ": offset ") +
                   std::to_string(p.offset);
        std::printf("%s%s: %s: %s\n",
                    list == &rep->warnings ? "warning (declared): " : "",
                    Printable(where).c_str(), p.what.c_str(),
                    Printable(p.detail).c_str());
      }
    }
    if (!a.common.quiet) {
      std::fprintf(
          stderr,
          "ferry verify: %s, %llu files, %llu records, %.1f MB in %.2f s: %s\n",
          rep->kind.c_str(), (unsigned long long)rep->files,
          (unsigned long long)rep->records, rep->bytes / 1e6, secs,
          rep->clean()
              ? (rep->warnings.empty()
                     ? std::string("OK")
                     : "OK, " + std::to_string(rep->warnings.size()) +
                           " warnings (leakage declared by the pack)")
                    .c_str()
              : (std::to_string(rep->problems.size()) + " problems").c_str());
    }
  }
  return rep->clean() ? kExitOk : kExitIntegrity;
}

}  // namespace

Runner RegisterVerify(CLI::App* app) {
  auto a = std::make_shared<VerifyArgs>();
  CLI::App* cmd = app->add_subcommand(
      "verify", "Check a pack output, a shard, or a hash-listed tree");
  cmd->footer(
      "Examples:\n"
      "  ferry verify shards/                       # everything dataset.json "
      "promises\n"
      "  ferry verify shards/ --deep -j 8           # and decode every image\n"
      "  ferry verify shards/train-00003-of-00012.tfrecord\n"
      "  ferry verify mirror/ --hashes mirror.xxh128\n"
      "Exit 0 when clean, 3 when a problem was found (each: file, record, "
      "offset, what).");
  cmd->add_option("path", a->path,
                  "A pack output directory, a shard, or a tree")
      ->required();
  cmd->add_flag("--deep", a->deep, "Decode every image and check its size");
  cmd->add_option("--hashes", a->hashes,
                  "Check PATH against this xxhsum -H2 style list");
  AddCommonOptions(cmd, &a->common);
  return [a] { return RunVerify(*a); };
}

}  // namespace ferry::cli
