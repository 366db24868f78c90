// Option groups shared by several commands, so that every command spells
// them the same way: image options (convert, pack) and split options
// (split, pack).
#ifndef FERRY_TOOLS_OPTIONS_H_
#define FERRY_TOOLS_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "ferry/image.h"
#include "ferry/split.h"

namespace ferry::cli {

struct ImageArgs {
  std::string size, mode = "fit", filter = "lanczos3", subsampling = "420";
  std::string background = "white";
  int quality = 90;
  uint64_t max_pixels = image::Limits().max_pixels;
  bool upscale = false, optimize = false, progressive = false, keep_icc = false;
  bool no_autorotate = false, pillow_16bit = false, no_shrink_on_load = false;
};
void AddImageOptions(CLI::App* cmd, ImageArgs* a);
Status FillImageOptions(const ImageArgs& a, image::TranscodeOptions* t);

// --include-hidden (convert, split, pack): dot-files and dot-folders are
// inputs too.
void AddIncludeHiddenFlag(CLI::App* cmd, bool* include_hidden);

struct SplitArgs {
  std::string ratios = "7:2:1", names = "train,val,test", mode = "auto",
              group_by, previous;
  uint64_t seed = 0;
  bool no_stratify = false, dedup = false, drop_duplicates = false,
       allow_leakage = false;
};
void AddSplitOptions(CLI::App* cmd, SplitArgs* a);
Status FillSplitSpec(const SplitArgs& a, SplitSpec* spec);

}  // namespace ferry::cli

#endif  // FERRY_TOOLS_OPTIONS_H_
