#include "options.h"

#include <cstdio>

#include "cli.h"

namespace ferry::cli {
namespace {

// N or WxH, each from 1 to 65500 (JPEG's limit, with room for MCUs).
Status ParseSize(const std::string& s, int* w, int* h) {
  const size_t x = s.find_first_of("xX");
  const std::string_view text(s);
  auto a = ParseUint(text.substr(0, x), "--size", 1, 65500);
  auto b = x == std::string::npos
               ? a
               : ParseUint(text.substr(x + 1), "--size", 1, 65500);
  if (!a.ok() || !b.ok()) {
    return Status::InvalidArgument(
        "--size wants N or WxH, each a whole number from 1 to 65500, got '" +
        s + "'");
  }
  *w = static_cast<int>(*a);
  *h = static_cast<int>(*b);
  return Status::OK();
}

}  // namespace

void AddImageOptions(CLI::App* cmd, ImageArgs* a) {
  cmd->add_option("--size", a->size, "Box: N (NxN) or WxH; none = keep size");
  cmd->add_option("--mode", a->mode, "fit | cover | exact | shorter | pad")
      ->capture_default_str();
  cmd->add_option("--filter", a->filter, "lanczos3 | bicubic | bilinear | box")
      ->capture_default_str();
  AddUintOption(cmd, "--quality", &a->quality, "JPEG quality", 1, 100);
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
  AddUintOption(cmd, "--max-pixels", &a->max_pixels,
                "Refuse larger images (decompression bombs)", 1, UINT64_MAX);
}

Status FillImageOptions(const ImageArgs& a, image::TranscodeOptions* t) {
  if (!a.size.empty())
    FERRY_RETURN_IF_ERROR(
        ParseSize(a.size, &t->resize.width, &t->resize.height));
  FERRY_ASSIGN_OR_RETURN(t->resize.mode, image::ParseResizeMode(a.mode));
  if (t->resize.mode == image::ResizeMode::kShorter &&
      t->resize.width != t->resize.height) {
    return Status::InvalidArgument("--mode shorter takes one number: --size N");
  }
  FERRY_ASSIGN_OR_RETURN(t->resize.filter, image::ParseFilter(a.filter));
  FERRY_ASSIGN_OR_RETURN(t->resize.background, image::ParseColor(a.background));
  t->resize.upscale = a.upscale;
  if (a.subsampling != "420" && a.subsampling != "444") {
    return Status::InvalidArgument("--subsampling is 420 or 444");
  }
  t->encode.subsampling = a.subsampling == "420" ? image::Subsampling::k420
                                                 : image::Subsampling::k444;
  t->encode.quality = a.quality;
  t->encode.optimize = a.optimize;
  t->encode.progressive = a.progressive;
  t->keep_icc = a.keep_icc;
  t->decode.autorotate = !a.no_autorotate;
  t->decode.pillow_16bit = a.pillow_16bit;
  t->decode.limits.max_pixels = a.max_pixels;
  t->shrink_on_load = !a.no_shrink_on_load;
  return Status::OK();
}

void AddIncludeHiddenFlag(CLI::App* cmd, bool* include_hidden) {
  cmd->add_flag(
      "--include-hidden", *include_hidden,
      "Take dot-files and dot-folders as inputs (skipped by default)");
}

void AddSplitOptions(CLI::App* cmd, SplitArgs* a) {
  cmd->add_option("--ratios", a->ratios, "7:2:1 or 0.7,0.2,0.1")
      ->capture_default_str();
  cmd->add_option("--names", a->names, "Split names, one per ratio")
      ->capture_default_str();
  AddUintOption(cmd, "--seed", &a->seed, "Seed of the assignment hash", 0,
                UINT64_MAX);
  cmd->add_option("--split-mode", a->mode,
                  "auto (exact counts; items of an earlier assignment keep "
                  "their split) | exact | stable (pure hash)")
      ->capture_default_str();
  cmd->add_option("--previous", a->previous,
                  "auto mode: the earlier assignment to keep (split.json, "
                  "dataset.json or their directory; default: the output's)");
  cmd->add_option("--group-by", a->group_by,
                  "Regex; capture group 1 of the path is the group");
  cmd->add_flag("--no-stratify", a->no_stratify,
                "exact mode: cut the whole set, not per class");
  cmd->add_flag("--dedup", a->dedup,
                "Keep identical files in one split (the default)");
  cmd->add_flag("--drop-duplicates", a->drop_duplicates,
                "Keep only the first of each set of identical files");
  cmd->add_flag("--allow-leakage", a->allow_leakage,
                "Place identical files independently (recorded as allowed)");
}

Status FillSplitSpec(const SplitArgs& a, SplitSpec* spec) {
  FERRY_ASSIGN_OR_RETURN(spec->ratios, ParseRatios(a.ratios));
  FERRY_ASSIGN_OR_RETURN(spec->names, ParseSplitNames(a.names));
  spec->seed = a.seed;
  if (a.mode == "auto") {
    spec->mode = SplitMode::kAuto;
  } else if (a.mode == "stable") {
    spec->mode = SplitMode::kStable;
  } else if (a.mode == "exact") {
    spec->mode = SplitMode::kExact;
  } else {
    return Status::InvalidArgument("--split-mode is auto, exact or stable");
  }
  if (!a.previous.empty() && spec->mode != SplitMode::kAuto) {
    return Status::InvalidArgument("--previous is for --split-mode auto");
  }
  spec->previous = a.previous;
  spec->stratify = !a.no_stratify;
  spec->group_regex = a.group_by;
  if (int(a.dedup) + int(a.drop_duplicates) + int(a.allow_leakage) > 1) {
    return Status::InvalidArgument(
        "--dedup, --drop-duplicates and --allow-leakage exclude each other");
  }
  spec->duplicates = a.drop_duplicates ? DuplicatePolicy::kDrop
                     : a.allow_leakage ? DuplicatePolicy::kAllowLeakage
                                       : DuplicatePolicy::kTogether;
  return ValidateSpec(*spec);
}

}  // namespace ferry::cli
