// Inputs: which files of a tree are images. One classification serves
// convert, split and pack, so the three agree on every file:
//   - walked as WalkTree does (special files, links to directories, hidden
//     names unless asked for, and the output directory are not inputs);
//   - a file whose first bytes are a PNG or JPEG signature is an image;
//   - any other file is skipped and counted ("not an image"), unless its name
//     says .png/.jpg/.jpeg: then it is a failure (a broken image is news).
// Only the first bytes of a file are read to decide; an image is then read
// with one allocation of its size, up to Limits::max_file_bytes.
// Thread-safety: pure functions of the Env's state.
#ifndef FERRY_INPUT_H_
#define FERRY_INPUT_H_

#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/image.h"
#include "ferry/walk.h"

namespace ferry {

// Bytes read to sniff a file's format.
inline constexpr size_t kSniffBytes = 16;

enum class InputClass { kImage, kSkip, kFail };

struct InputVerdict {
  InputClass cls = InputClass::kSkip;
  image::Format format = image::Format::kUnknown;
  Status why;  // kSkip: NotSupported reason; kFail: the error
};

// From a file's first bytes (at least kSniffBytes, or the whole file) and
// its name.
FERRY_EXPORT InputVerdict ClassifyInput(std::string_view head,
                                        std::string_view name);
// True if the name ends in .png, .jpg or .jpeg (any case).
FERRY_EXPORT bool HasImageExtension(std::string_view name);

struct InputScanOptions {
  bool include_hidden = false;
  std::vector<std::string> exclude;  // directories not entered (outputs)
  int jobs = 1;                      // threads sniffing files
};

struct InputScan {
  std::vector<std::string> images;   // relative paths, sorted bytewise
  std::vector<WalkProblem> skipped;  // not inputs, with the reason
  std::vector<WalkProblem> failed;   // unreadable, or named as an image
};

// Walks root and sniffs every file. A root that is one file gives {""} as
// the image (or as a skipped/failed entry).
FERRY_EXPORT Result<InputScan> ScanInputs(Env* env, const std::string& root,
                                          const InputScanOptions& options);

// The first kSniffBytes of a file (fewer if it is shorter).
FERRY_EXPORT Result<std::string> ReadInputHead(Env* env,
                                               const std::string& path);

// Reads an input file whole: its size first (refused above max_bytes), then
// one allocation of that size. A file that changes size meanwhile is an error.
FERRY_EXPORT Result<std::string> ReadInputFile(Env* env,
                                               const std::string& path,
                                               uint64_t max_bytes);

}  // namespace ferry

#endif  // FERRY_INPUT_H_
