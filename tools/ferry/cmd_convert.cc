// ferry convert: any PNG or JPEG below SRC -> resized JPEG below DST.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "ferry/convert.h"
#include "ferry/json.h"
#include "options.h"

namespace ferry::cli {
namespace {

struct ConvertArgs {
  CommonOptions common;
  ImageArgs image;
  std::string src, dst;
  bool dry_run = false, force = false, no_fsync = false, include_hidden = false;
};

Status FillOptions(const ConvertArgs& a, ConvertOptions* o) {
  FERRY_RETURN_IF_ERROR(FillImageOptions(a.image, &o->transcode));
  o->jobs = a.common.ResolvedJobs();
  o->dry_run = a.dry_run;
  o->force = a.force;
  o->durable = !a.no_fsync;
  o->include_hidden = a.include_hidden;
  return Status::OK();
}

int RunConvert(const ConvertArgs& a) {
  ConvertOptions opt;
  Status s = FillOptions(a, &opt);
  if (!s.ok()) return Fail(s);
  auto progress = NewTerminalProgress(a.common.quiet || a.common.json);
  opt.progress = progress.get();
  std::vector<ConvertItem> failures;
  auto t0 = std::chrono::steady_clock::now();
  auto sum = ConvertTree(a.src, a.dst, opt, [&](const ConvertItem& item) {
    using O = ConvertItem::Outcome;
    if (item.outcome == O::kFailed) {
      if (!a.common.json) {
        std::fprintf(stderr, "ferry: %s: %s\n", Printable(item.input).c_str(),
                     Printable(item.error.ToString()).c_str());
      }
      failures.push_back(item);
    } else if (item.outcome == O::kSkipped && !a.common.json &&
               a.common.verbose) {
      std::fprintf(stderr, "%s: skipped: %s\n", Printable(item.input).c_str(),
                   Printable(item.error.message()).c_str());
    } else if (a.common.verbose && !a.common.json) {
      std::fprintf(stderr, "%s: %s\n", Printable(item.input).c_str(),
                   OutcomeName(item.outcome));
    } else if (a.dry_run && item.outcome == O::kWouldConvert &&
               !a.common.json) {
      std::printf("%s -> %s\n", Printable(item.input).c_str(),
                  Printable(item.output).c_str());
    }
  });
  if (!sum.ok()) return Fail(sum.status());
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  double ips = secs > 0 ? sum->converted / secs : 0;
  if (a.common.json) {
    JsonWriter j(stdout);
    j.BeginObject().Key("command").String("convert").Key("dry_run").Bool(
        a.dry_run);
    j.Key("summary")
        .BeginObject()
        .Key("converted")
        .Uint(sum->converted)
        .Key("up_to_date")
        .Uint(sum->up_to_date)
        .Key("skipped")
        .Uint(sum->skipped)
        .Key("failed")
        .Uint(sum->failed)
        .Key("would_convert")
        .Uint(sum->would_convert)
        .Key("input_bytes")
        .Uint(sum->input_bytes)
        .Key("output_bytes")
        .Uint(sum->output_bytes)
        .Key("seconds")
        .Double(secs)
        .Key("images_per_s")
        .Double(ips)
        .EndObject();
    j.Key("failures").BeginArray();
    for (const ConvertItem& f : failures) {
      j.BeginObject()
          .Key("input")
          .String(f.input)
          .Key("error")
          .String(f.error.ToString())
          .EndObject();
    }
    j.EndArray().EndObject();
  } else if (!a.common.quiet) {
    std::fprintf(stderr,
                 "ferry convert: %llu converted, %llu up to date, %llu skipped "
                 "(not inputs; -v says why), "
                 "%llu failed in %.2f s (%.1f images/s)\n",
                 (unsigned long long)sum->converted,
                 (unsigned long long)sum->up_to_date,
                 (unsigned long long)sum->skipped,
                 (unsigned long long)sum->failed, secs, ips);
  }
  return sum->failed ? kExitItemsFailed : kExitOk;
}

}  // namespace

Runner RegisterConvert(CLI::App* app) {
  auto a = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app->add_subcommand(
      "convert", "PNG/JPEG -> resized JPEG, for a whole tree (resumable)");
  cmd->footer(
      "Examples:\n"
      "  ferry convert raw/ jpeg/ --size 512            # fit inside 512x512, "
      "q90, 4:2:0\n"
      "  ferry convert raw/ out/ --size 224 --mode cover --filter bicubic -j "
      "8\n"
      "  ferry convert raw/ out/ --size 256 --mode shorter --json\n"
      "A rerun keeps outputs newer than their inputs made with the same "
      "options.");
  cmd->add_option("src", a->src, "Source directory (or one file)")->required();
  cmd->add_option("dst", a->dst, "Destination directory (or file)")->required();
  AddImageOptions(cmd, &a->image);
  AddIncludeHiddenFlag(cmd, &a->include_hidden);
  cmd->add_flag("--force", a->force,
                "Convert even outputs that are up to date");
  cmd->add_flag("--no-fsync", a->no_fsync,
                "Skip fsync (still atomic, not power-loss safe)");
  cmd->add_flag("-n,--dry-run", a->dry_run,
                "Report what would be converted; write nothing");
  AddCommonOptions(cmd, &a->common);
  return [a] { return RunConvert(*a); };
}

}  // namespace ferry::cli
