// ferry convert: any PNG or JPEG below SRC -> resized JPEG below DST.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "ferry/convert.h"
#include "ferry/json.h"

namespace ferry::cli {
namespace {

struct ConvertArgs {
  CommonOptions common;
  std::string src, dst, size, mode = "fit", filter = "lanczos3",
                              subsampling = "420";
  std::string background = "white";
  int quality = 90;
  uint64_t max_pixels = image::Limits().max_pixels;
  bool upscale = false, optimize = false, progressive = false, keep_icc = false;
  bool no_autorotate = false, pillow_16bit = false, no_shrink_on_load = false;
  bool dry_run = false, force = false, no_fsync = false;
};

Status ParseSize(const std::string& s, int* w, int* h) {
  unsigned a = 0, b = 0;
  char x = 0, tail = 0;
  int n = std::sscanf(s.c_str(), "%u%c%u%c", &a, &x, &b, &tail);
  if (n == 1 && a > 0) {
    *w = *h = static_cast<int>(a);
  } else if (n == 3 && (x == 'x' || x == 'X') && a > 0 && b > 0) {
    *w = static_cast<int>(a);
    *h = static_cast<int>(b);
  } else {
    return Status::InvalidArgument("--size wants N or WxH, got '" + s + "'");
  }
  if (*w > 65500 || *h > 65500)
    return Status::InvalidArgument("--size above 65500");
  return Status::OK();
}

Status FillOptions(const ConvertArgs& a, ConvertOptions* o) {
  auto& t = o->transcode;
  if (!a.size.empty())
    FERRY_RETURN_IF_ERROR(ParseSize(a.size, &t.resize.width, &t.resize.height));
  FERRY_ASSIGN_OR_RETURN(t.resize.mode, image::ParseResizeMode(a.mode));
  if (t.resize.mode == image::ResizeMode::kShorter &&
      t.resize.width != t.resize.height) {
    return Status::InvalidArgument("--mode shorter takes one number: --size N");
  }
  FERRY_ASSIGN_OR_RETURN(t.resize.filter, image::ParseFilter(a.filter));
  FERRY_ASSIGN_OR_RETURN(t.resize.background, image::ParseColor(a.background));
  t.resize.upscale = a.upscale;
  if (a.subsampling != "420" && a.subsampling != "444") {
    return Status::InvalidArgument("--subsampling is 420 or 444");
  }
  t.encode.subsampling = a.subsampling == "420" ? image::Subsampling::k420
                                                : image::Subsampling::k444;
  t.encode.quality = a.quality;
  t.encode.optimize = a.optimize;
  t.encode.progressive = a.progressive;
  t.keep_icc = a.keep_icc;
  t.decode.autorotate = !a.no_autorotate;
  t.decode.pillow_16bit = a.pillow_16bit;
  t.decode.limits.max_pixels = a.max_pixels;
  t.shrink_on_load = !a.no_shrink_on_load;
  o->jobs = a.common.ResolvedJobs();
  o->dry_run = a.dry_run;
  o->force = a.force;
  o->durable = !a.no_fsync;
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
        std::fprintf(stderr, "ferry: %s: %s\n", item.input.c_str(),
                     item.error.ToString().c_str());
      }
      failures.push_back(item);
    } else if (a.common.verbose && !a.common.json) {
      std::fprintf(stderr, "%s: %s\n", item.input.c_str(),
                   OutcomeName(item.outcome));
    } else if (a.dry_run && item.outcome == O::kWouldConvert &&
               !a.common.json) {
      std::printf("%s -> %s\n", item.input.c_str(), item.output.c_str());
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
                 "(not images), "
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
  cmd->add_option("--size", a->size, "Box: N (NxN) or WxH; none = keep size");
  cmd->add_option("--mode", a->mode, "fit | cover | exact | shorter | pad")
      ->capture_default_str();
  cmd->add_option("--filter", a->filter, "lanczos3 | bicubic | bilinear | box")
      ->capture_default_str();
  cmd->add_option("--quality", a->quality, "JPEG quality")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--subsampling", a->subsampling, "420 | 444")
      ->capture_default_str();
  cmd->add_option("--background", a->background,
                  "Under alpha and around pad: white, black, #rrggbb, r,g,b")
      ->capture_default_str();
  cmd->add_flag("--upscale", a->upscale,
                "fit/pad: enlarge images smaller than the box");
  cmd->add_flag("--optimize", a->optimize,
                "Optimised Huffman tables (smaller, slower)");
  cmd->add_flag("--progressive", a->progressive, "Progressive JPEG");
  cmd->add_flag("--keep-icc", a->keep_icc, "Copy the input's ICC profile");
  cmd->add_flag("--no-autorotate", a->no_autorotate,
                "Ignore the EXIF orientation");
  cmd->add_flag("--pillow-16bit", a->pillow_16bit,
                "16-bit PNG: keep the high byte, as Pillow");
  cmd->add_flag("--no-shrink-on-load", a->no_shrink_on_load,
                "Always decode JPEGs at full size");
  cmd->add_option("--max-pixels", a->max_pixels,
                  "Refuse larger images (decompression bombs)")
      ->capture_default_str();
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
