// Every field of PackOptions (and the SplitSpec and TranscodeOptions in it)
// for core/options_visit.h: pack's resume fingerprint and dataset.json's
// "options" both come from this one list.
// Thread-safety: pure.
#ifndef FERRY_PACK_PACK_FIELDS_H_
#define FERRY_PACK_PACK_FIELDS_H_

#include "core/options_visit.h"
#include "ferry/pack.h"
#include "ferry/split.h"
#include "image/transcode_fields.h"

namespace ferry::pack {

// A new field must be visited below (or, if it cannot change the output,
// named in the list of skipped ones); then update the count here.
static_assert(core::FieldCount<PackOptions>() == 16);
static_assert(core::FieldCount<SplitSpec>() == 8);

template <class V>
void VisitPackOptions(const PackOptions& o, V& v) {
  // Not visited, as they do not change the output: env, list_path (the
  // items it lists are fingerprinted themselves), jobs, dry_run, progress,
  // out_backend, tmp_dir, verify_remote, after_worker_write.
  image::VisitTranscodeOptions(o.transcode, v);
  const SplitSpec& s = o.split;
  v("split_names", s.names);
  v("ratios", s.ratios);
  v("seed", s.seed);
  v("split_mode", core::EnumField{int(s.mode), SplitModeName(s.mode)});
  v("stratify", s.stratify);
  v("group_regex", s.group_regex);
  v("duplicates",
    core::EnumField{int(s.duplicates), DuplicatePolicyName(s.duplicates)});
  v("previous", s.previous);
  v("shard_format",
    core::EnumField{int(o.format), o.format == ShardFormat::kTfRecord
                                       ? "tfrecord"
                                       : "webdataset"});
  v("shard_bytes", o.shard_bytes);
  v("shard_records", o.shard_records);
  v("gzip", o.gzip);
  v("include_hidden", o.include_hidden);
}

inline std::string PackOptionsText(const PackOptions& o) {
  core::OptionsText text;
  VisitPackOptions(o, text);
  return text.str();
}

}  // namespace ferry::pack

#endif  // FERRY_PACK_PACK_FIELDS_H_
