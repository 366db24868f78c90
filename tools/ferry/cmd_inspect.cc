// ferry inspect: records of a shard, or a dataset.json summary.
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "ferry/image.h"
#include "ferry/inspect.h"
#include "ferry/json.h"

namespace ferry::cli {
namespace {

struct InspectArgs {
  CommonOptions common;
  std::string path;
  size_t records = 10;
};

// An image: what a convert would start from.
int PrintImage(const InspectArgs& a, const InspectReport& rep) {
  const image::ImageHeader& h = rep.image;
  if (a.common.json) {
    JsonWriter j(stdout);
    j.BeginObject().Key("path").String(a.path).Key("kind").String("image");
    if (rep.error.empty()) {
      j.Key("format").String(image::FormatName(h.format));
      j.Key("width").Int(h.width).Key("height").Int(h.height);
      j.Key("bit_depth").Int(h.bit_depth).Key("channels").Int(h.channels);
      j.Key("colour").String(h.colour).Key("orientation").Int(h.orientation);
    } else {
      j.Key("error").String(rep.error);
    }
    j.EndObject();
  } else if (rep.error.empty()) {
    std::printf(
        "%s: %s image, %dx%d, %d-bit, %d channel%s (%s), EXIF orientation "
        "%d\n",
        Printable(a.path).c_str(), image::FormatName(h.format), h.width,
        h.height, h.bit_depth, h.channels, h.channels == 1 ? "" : "s",
        h.colour.c_str(), h.orientation);
  } else {
    std::printf("%s: image, error: %s\n", Printable(a.path).c_str(),
                Printable(rep.error).c_str());
  }
  return rep.error.empty() ? kExitOk : kExitIntegrity;
}

int RunInspect(const InspectArgs& a) {
  auto rep = Inspect(Env::Default(), a.path, a.records);
  if (!rep.ok()) return Fail(rep.status());
  if (rep->kind == "dataset" || rep->kind == "wids") {
    std::fputs(rep->dataset_json.c_str(), stdout);
    return kExitOk;
  }
  if (rep->kind == "unknown") {
    std::fprintf(stderr, "ferry: %s: %s\n", Printable(a.path).c_str(),
                 Printable(rep->error).c_str());
    return kExitUsage;
  }
  if (rep->kind == "image") return PrintImage(a, *rep);
  if (a.common.json) {
    JsonWriter j(stdout);
    j.BeginObject()
        .Key("path")
        .String(a.path)
        .Key("kind")
        .String(rep->kind)
        .Key("records")
        .Uint(rep->records);
    if (!rep->error.empty()) j.Key("error").String(rep->error);
    j.Key("shown").BeginArray();
    for (const InspectRecord& r : rep->shown) {
      j.BeginObject()
          .Key("index")
          .Uint(r.index)
          .Key("offset")
          .Uint(r.offset)
          .Key("size")
          .Uint(r.size);
      if (!r.key.empty()) j.Key("key").String(r.key);
      j.Key("fields").BeginArray();
      for (const InspectField& f : r.fields) {
        j.BeginObject()
            .Key("name")
            .String(f.name)
            .Key("type")
            .String(f.type)
            .Key("values")
            .Uint(f.values);
        j.Key("bytes").Uint(f.bytes);
        if (!f.first.empty()) j.Key("first").String(f.first);
        j.EndObject();
      }
      j.EndArray()
          .Key("image")
          .BeginArray()
          .Int(r.image_width)
          .Int(r.image_height)
          .Int(r.image_channels)
          .EndArray();
      if (!r.error.empty()) j.Key("error").String(r.error);
      j.EndObject();
    }
    j.EndArray().EndObject();
  } else {
    std::printf("%s: %s, %llu records\n", Printable(a.path).c_str(),
                rep->kind.c_str(), (unsigned long long)rep->records);
    for (const InspectRecord& r : rep->shown) {
      std::printf(
          "record %llu at offset %llu, %llu bytes%s%s: image %dx%dx%d\n",
          (unsigned long long)r.index, (unsigned long long)r.offset,
          (unsigned long long)r.size, r.key.empty() ? "" : ", key ",
          Printable(r.key).c_str(), r.image_width, r.image_height,
          r.image_channels);
      for (const InspectField& f : r.fields) {
        std::printf("  %-20s %-5s x%llu %8llu bytes  %s\n",
                    Printable(f.name).c_str(), f.type.c_str(),
                    (unsigned long long)f.values, (unsigned long long)f.bytes,
                    Printable(f.first).c_str());
      }
      if (!r.error.empty())
        std::printf("  error: %s\n", Printable(r.error).c_str());
    }
    if (!rep->error.empty())
      std::printf("error: %s\n", Printable(rep->error).c_str());
  }
  return rep->error.empty() ? kExitOk : kExitIntegrity;
}

}  // namespace

Runner RegisterInspect(CLI::App* app) {
  auto a = std::make_shared<InspectArgs>();
  CLI::App* cmd = app->add_subcommand(
      "inspect", "Show what a shard, dataset.json or image holds");
  cmd->footer(
      "Examples:\n"
      "  ferry inspect shards/train-00000-of-00012.tfrecord --records 3\n"
      "  ferry inspect wds/val-00000-of-00002.tar --json\n"
      "  ferry inspect shards/                              # dataset.json "
      "summary\n"
      "  ferry inspect photo.png                            # size, depth, "
      "channels, EXIF orientation");
  cmd->add_option(
         "path", a->path,
         "A .tfrecord(.gz) or .tar shard, dataset.json, a pack output dir, or "
         "a PNG/JPEG image (identified by its bytes)")
      ->required();
  AddUintOption(cmd, "--records", &a->records, "How many records to show", 0,
                SIZE_MAX);
  AddCommonOptions(cmd, &a->common);
  return [a] { return RunInspect(*a); };
}

}  // namespace ferry::cli
