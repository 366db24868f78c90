// The tf.train.Example ferry writes for one image (formats/example/README.md).
// Thread-safety: pure functions.
#ifndef FERRY_FORMATS_EXAMPLE_IMAGE_EXAMPLE_H_
#define FERRY_FORMATS_EXAMPLE_IMAGE_EXAMPLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "ferry/result.h"

namespace ferry::example {

struct ImageRecord {
  std::string_view encoded;  // JPEG bytes
  std::string format = "jpeg";
  int64_t height = 0, width = 0, channels = 0;
  int64_t label = -1;  // -1: no label features
  std::string label_text;
  std::string filename;  // relative source path
  std::string key_xxh3;  // hex XXH3-128 of the source file
};

// Serializes the Example. Deterministic: feature keys in sorted order.
std::string SerializeImageExample(const ImageRecord& r);

// What a parsed Example holds: feature key -> (kind, number of values, bytes).
struct FeatureSummary {
  std::string kind;  // "bytes", "float", "int64"
  size_t values = 0;
  size_t bytes = 0;   // payload bytes (bytes lists)
  std::string first;  // first value, as text (bytes values up to 64 chars)
};
Result<std::map<std::string, FeatureSummary>> SummarizeExample(
    std::string_view serialized);

// The image fields back from a serialized Example (for verify and inspect).
struct ParsedImage {
  std::string encoded;
  int64_t height = 0, width = 0, channels = 0, label = -1;
  std::string filename, key_xxh3;
};
Result<ParsedImage> ParseImageExample(std::string_view serialized);

}  // namespace ferry::example

#endif  // FERRY_FORMATS_EXAMPLE_IMAGE_EXAMPLE_H_
