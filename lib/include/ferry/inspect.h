// Inspect: what is inside a shard (TFRecord, gzip TFRecord or WebDataset
// tar) or a dataset.json, for `ferry inspect`.
// Thread-safety: pure functions over the Env.
#ifndef FERRY_INSPECT_H_
#define FERRY_INSPECT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/env.h"
#include "ferry/image.h"

namespace ferry {

struct InspectField {
  std::string name;  // feature key, or tar component extension
  std::string type;  // bytes | int64 | float | file
  uint64_t values = 0, bytes = 0;
  std::string first;  // first value as text (short), when printable
};

struct InspectRecord {
  uint64_t index = 0, offset = 0, size = 0;
  std::string key;  // WebDataset sample key
  std::vector<InspectField> fields;
  int image_width = 0, image_height = 0, image_channels = 0;  // decoded
  std::string error;  // why the record (or its image) is bad
};

struct InspectReport {
  // What the bytes are: "tfrecord", "tfrecord.gz", "webdataset",
  // "webdataset.gz", "dataset" (dataset.json), "wids" (a wids index),
  // "image", or "unknown" (error says so).
  std::string kind;
  uint64_t records = 0;              // all records in the file
  std::vector<InspectRecord> shown;  // the first max_records
  std::string dataset_json;  // kind "dataset" or "wids": the file, pretty
  image::ImageHeader image;  // kind "image"
  std::string error;         // a structural error that stopped reading
};

// Reads path (a shard, dataset.json, a pack output directory or an image),
// identified by its bytes.
FERRY_EXPORT Result<InspectReport> Inspect(Env* env, const std::string& path,
                                           size_t max_records);

// Indents JSON text (2 spaces); strings are left untouched.
FERRY_EXPORT std::string PrettyJson(std::string_view json);

}  // namespace ferry

#endif  // FERRY_INSPECT_H_
