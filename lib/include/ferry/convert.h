// ConvertTree: `ferry convert`. Every PNG or JPEG below a source directory
// (found by content, not by name) becomes a JPEG at the same relative path
// below the destination, with the extension replaced by ".jpg".
//
// Inputs are classified as ScanInputs does (ferry/input.h): files that are
// not PNG or JPEG, special files and hidden names are skipped; a file named
// .png/.jpg/.jpeg that is not one fails. Outputs are published atomically. A
// rerun continues where a killed run stopped: an output newer than its input,
// written under the same options, is kept. One bad input never stops the batch:
// it is reported and counted. Thread-safety: one call per destination at a time
// (a lock file enforces it).
#ifndef FERRY_CONVERT_H_
#define FERRY_CONVERT_H_

#include <cstdint>
#include <functional>
#include <string>

#include "ferry/env.h"
#include "ferry/image.h"
#include "ferry/progress.h"

namespace ferry {

struct ConvertOptions {
  Env* env = Env::Default();
  image::TranscodeOptions transcode;
  int jobs = 1;
  bool dry_run = false;  // decide and report, write nothing
  bool force = false;    // convert even outputs that are up to date
  bool durable = true;   // fsync each output before it is renamed into place
  bool include_hidden = false;  // take dot-files and dot-folders as inputs
  Progress* progress = nullptr;
};

struct ConvertItem {
  enum class Outcome {
    kConverted,
    kUpToDate,
    kSkipped,
    kFailed,
    kWouldConvert
  };
  std::string input;   // relative to the source
  std::string output;  // relative to the destination
  Outcome outcome = Outcome::kFailed;
  Status error;  // why it failed, or why it was skipped
  image::TranscodeInfo info;
  uint64_t input_bytes = 0, output_bytes = 0;
};

struct ConvertSummary {
  uint64_t converted = 0, up_to_date = 0, skipped = 0, failed = 0,
           would_convert = 0;
  uint64_t input_bytes = 0, output_bytes = 0;  // of converted files
};

FERRY_EXPORT const char* OutcomeName(ConvertItem::Outcome o);

// src may be a directory (walked, sorted) or one file (then dst names the
// output file, or a folder to put <name>.jpg in: an existing one, or one
// written with a trailing '/'; one file is always converted, with no lock or
// state file). on_item sees every input in sorted order, whatever `jobs`.
FERRY_EXPORT Result<ConvertSummary> ConvertTree(
    const std::string& src, const std::string& dst,
    const ConvertOptions& options,
    const std::function<void(const ConvertItem&)>& on_item);

// "a/b.png" -> "a/b.jpg"; "a/noext" -> "a/noext.jpg".
FERRY_EXPORT std::string JpegOutputName(std::string_view input);

}  // namespace ferry

#endif  // FERRY_CONVERT_H_
