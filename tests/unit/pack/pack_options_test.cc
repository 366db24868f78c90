// The one options list (pack/pack_fields.h, image/transcode_fields.h): every
// field enters the resume fingerprint and dataset.json's "options".
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ferry/json.h"
#include "pack/pack_fields.h"

namespace ferry {
namespace {

struct Names {
  std::vector<std::string> names;
  template <class T>
  void operator()(std::string_view name, const T&) {
    names.emplace_back(name);
  }
};

using Mutation = std::function<void(PackOptions*)>;

// One change per visited field. A field added to the visitor without a line
// here fails the test; one added to the struct without the visitor fails
// the build (static_assert in the fields headers).
const std::map<std::string, Mutation>& Mutations() {
  static const auto* m = new std::map<std::string, Mutation>{
      {"max_pixels",
       [](PackOptions* o) { o->transcode.decode.limits.max_pixels = 60; }},
      {"max_chunk_bytes",
       [](PackOptions* o) { o->transcode.decode.limits.max_chunk_bytes = 9; }},
      {"max_jpeg_scans",
       [](PackOptions* o) { o->transcode.decode.limits.max_jpeg_scans = 3; }},
      {"max_file_bytes",
       [](PackOptions* o) { o->transcode.decode.limits.max_file_bytes = 5; }},
      {"autorotate",
       [](PackOptions* o) { o->transcode.decode.autorotate ^= true; }},
      {"pillow_16bit",
       [](PackOptions* o) { o->transcode.decode.pillow_16bit ^= true; }},
      {"shrink_to_width",
       [](PackOptions* o) { o->transcode.decode.shrink_to_width = 7; }},
      {"shrink_to_height",
       [](PackOptions* o) { o->transcode.decode.shrink_to_height = 7; }},
      {"read_icc",
       [](PackOptions* o) { o->transcode.decode.read_icc ^= true; }},
      {"shrink_on_load",
       [](PackOptions* o) { o->transcode.shrink_on_load ^= true; }},
      {"keep_icc", [](PackOptions* o) { o->transcode.keep_icc ^= true; }},
      {"width", [](PackOptions* o) { o->transcode.resize.width = 64; }},
      {"height", [](PackOptions* o) { o->transcode.resize.height = 64; }},
      {"mode",
       [](PackOptions* o) {
         o->transcode.resize.mode = image::ResizeMode::kCover;
       }},
      {"filter",
       [](PackOptions* o) {
         o->transcode.resize.filter = image::Filter::kBox;
       }},
      {"upscale", [](PackOptions* o) { o->transcode.resize.upscale ^= true; }},
      {"background",
       [](PackOptions* o) { o->transcode.resize.background.g = 3; }},
      {"quality", [](PackOptions* o) { o->transcode.encode.quality = 75; }},
      {"subsampling",
       [](PackOptions* o) {
         o->transcode.encode.subsampling = image::Subsampling::k444;
       }},
      {"optimize",
       [](PackOptions* o) { o->transcode.encode.optimize ^= true; }},
      {"progressive",
       [](PackOptions* o) { o->transcode.encode.progressive ^= true; }},
      {"icc_profile_xxh3",
       [](PackOptions* o) { o->transcode.encode.icc_profile = "x"; }},
      {"split_names",
       [](PackOptions* o) {
         o->split.names = {"a", "b", "c"};
       }},
      {"ratios",
       [](PackOptions* o) {
         o->split.ratios = {8, 1, 1};
       }},
      {"seed", [](PackOptions* o) { o->split.seed = 1; }},
      {"split_mode", [](PackOptions* o) { o->split.mode = SplitMode::kExact; }},
      {"stratify", [](PackOptions* o) { o->split.stratify ^= true; }},
      {"group_regex", [](PackOptions* o) { o->split.group_regex = "(.)"; }},
      {"duplicates",
       [](PackOptions* o) { o->split.duplicates = DuplicatePolicy::kDrop; }},
      {"previous", [](PackOptions* o) { o->split.previous = "old"; }},
      {"shard_format",
       [](PackOptions* o) { o->format = ShardFormat::kWebDataset; }},
      {"shard_bytes", [](PackOptions* o) { o->shard_bytes = 1; }},
      {"shard_records", [](PackOptions* o) { o->shard_records = 1; }},
      {"gzip", [](PackOptions* o) { o->gzip ^= true; }},
      {"include_hidden", [](PackOptions* o) { o->include_hidden ^= true; }},
  };
  return *m;
}

TEST(PackOptionsTest, EveryFieldChangesTheFingerprint) {
  Names visited;
  pack::VisitPackOptions(PackOptions{}, visited);
  const std::string base = pack::PackOptionsText(PackOptions{});
  std::set<std::string> seen;
  for (const std::string& name : visited.names) {
    EXPECT_TRUE(seen.insert(name).second) << name << " is visited twice";
    auto it = Mutations().find(name);
    ASSERT_NE(it, Mutations().end()) << name << ": add a mutation here";
    PackOptions o;
    it->second(&o);
    EXPECT_NE(pack::PackOptionsText(o), base) << name;
  }
  EXPECT_EQ(seen.size(), Mutations().size());
}

TEST(PackOptionsTest, WhatCannotChangeTheOutputIsLeftOut) {
  PackOptions o;
  o.jobs = 8;
  o.dry_run = true;
  o.list_path = "list.csv";
  EXPECT_EQ(pack::PackOptionsText(o), pack::PackOptionsText(PackOptions{}));
}

// Convert's fingerprint is the transcode part of the same list: every
// transcode field changes it (issue: it hashed the always-empty profile
// instead of --keep-icc).
TEST(PackOptionsTest, EveryTranscodeFieldChangesConvertsFingerprint) {
  Names visited;
  image::VisitTranscodeOptions(image::TranscodeOptions{}, visited);
  const std::string base = image::TranscodeFingerprint({});
  for (const std::string& name : visited.names) {
    PackOptions o;
    Mutations().at(name)(&o);
    EXPECT_NE(image::TranscodeFingerprint(o.transcode), base) << name;
  }
}

TEST(PackOptionsTest, DatasetJsonOptionsNameEveryField) {
  JsonWriter j;
  j.BeginObject();
  core::OptionsJson out(&j);
  PackOptions o;
  o.transcode.keep_icc = true;
  pack::VisitPackOptions(o, out);
  j.EndObject();
  auto parsed = ParseJson(j.str());
  ASSERT_TRUE(parsed.ok()) << j.str();
  EXPECT_EQ(parsed->members().size(), Mutations().size());
  EXPECT_TRUE((*parsed)["keep_icc"].boolean()) << j.str();
  EXPECT_EQ((*parsed)["mode"].str(), "fit");
  EXPECT_EQ((*parsed)["max_pixels"].uint(), 178956970u);
}

}  // namespace
}  // namespace ferry
