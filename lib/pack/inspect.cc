#include "ferry/inspect.h"

#include "ferry/image.h"
#include "formats/example/image_example.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/webdataset/tar.h"
#include "pack/shard_stream.h"

namespace ferry {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void DecodeDims(std::string_view jpeg, InspectRecord* r) {
  auto img = image::DecodeJpeg(jpeg, {});
  if (!img.ok()) {
    r->error = img.status().ToString();
    return;
  }
  r->image_width = img->width;
  r->image_height = img->height;
  r->image_channels = img->channels;
}

void InspectTfRecord(pack::FileStream* in, size_t max, InspectReport* rep) {
  std::string payload;
  uint64_t off = 0;
  for (;;) {
    const pack::TfStep step = pack::NextTfRecord(in, &payload);
    const std::string where =
        "record " + std::to_string(rep->records) + " at offset ";
    if (step == pack::TfStep::kEnd) return;
    if (step == pack::TfStep::kTruncated) {
      rep->error = where + std::to_string(off) + ": truncated";
      return;
    }
    if (step == pack::TfStep::kLengthCrc) {
      rep->error = where + std::to_string(off) + ": length CRC mismatch";
      return;
    }
    InspectRecord r;
    r.index = rep->records;
    r.offset = off;
    r.size = payload.size() + tfrecord::kOverhead;
    if (step == pack::TfStep::kDataCrc) {
      r.error = "data CRC mismatch at offset " +
                std::to_string(off + tfrecord::kHeaderSize);
      if (rep->error.empty())
        rep->error = where + std::to_string(off + tfrecord::kHeaderSize) +
                     ": data CRC mismatch";
    }
    off += r.size;
    ++rep->records;
    if (rep->shown.size() >= max) continue;
    auto fields = example::SummarizeExample(payload);
    if (!fields.ok()) {
      r.error = fields.status().ToString();
    } else {
      for (const auto& [k, f] : *fields) {
        const bool printable = f.kind != "bytes" || k != "image/encoded";
        r.fields.push_back(
            {k, f.kind, f.values, f.bytes, printable ? f.first : ""});
      }
      auto img = example::ParseImageExample(payload);
      if (img.ok()) DecodeDims(img->encoded, &r);
    }
    rep->shown.push_back(std::move(r));
  }
}

void InspectTar(pack::FileStream* in, size_t max, InspectReport* rep) {
  InspectRecord cur;
  auto flush = [&] {
    if (cur.key.empty()) return;
    ++rep->records;
    if (rep->shown.size() < max) rep->shown.push_back(cur);
    cur = InspectRecord();
  };
  std::string data, error;
  uint64_t off = 0;
  for (;;) {
    wds::Header h;
    const pack::TarStep step = pack::NextTarEntry(in, &h, &data, &error);
    if (step == pack::TarStep::kEnd) break;
    if (step != pack::TarStep::kEntry) {
      rep->error = "tar at offset " + std::to_string(off) + ": " +
                   (step == pack::TarStep::kBadEnd ? "no end blocks" : error);
      break;
    }
    const uint64_t header_off = off;
    off += pack::TarEntryBytes(h.size);
    if (h.type != '0' && h.type != '\0') continue;
    std::string key, ext;
    wds::SplitName(h.name, &key, &ext);
    if (key != cur.key) {
      flush();
      cur.key = key;
      cur.index = rep->records;
      cur.offset = header_off;
    }
    InspectField f{ext, "file", 1, h.size, ""};
    if (ext == "cls" || ext == "json" || ext == "txt")
      f.first = data.substr(0, 64);
    cur.fields.push_back(f);
    cur.size = off - cur.offset;
    if (rep->shown.size() < max && (ext == "jpg" || ext == "jpeg"))
      DecodeDims(data, &cur);
  }
  flush();
}

}  // namespace

std::string PrettyJson(std::string_view j) {
  std::string out;
  int depth = 0;
  bool in_str = false, esc = false;
  auto newline = [&] {
    out.push_back('\n');
    out.append(size_t(depth) * 2, ' ');
  };
  for (size_t i = 0; i < j.size(); ++i) {
    char c = j[i];
    if (in_str) {
      out.push_back(c);
      if (esc) {
        esc = false;
      } else if (c == '\\') {
        esc = true;
      } else if (c == '"') {
        in_str = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_str = true;
        out.push_back(c);
        break;
      case '{':
      case '[':
        out.push_back(c);
        if (i + 1 < j.size() && (j[i + 1] == '}' || j[i + 1] == ']')) {
          out.push_back(j[++i]);
        } else {
          ++depth;
          newline();
        }
        break;
      case '}':
      case ']':
        --depth;
        newline();
        out.push_back(c);
        break;
      case ',':
        out.push_back(c);
        newline();
        break;
      case ':':
        out += ": ";
        break;
      case '\n':
      case ' ':
      case '\t':
      case '\r':
        break;
      default:
        out.push_back(c);
    }
  }
  out.push_back('\n');
  return out;
}

Result<InspectReport> Inspect(Env* env, const std::string& path,
                              size_t max_records) {
  InspectReport rep;
  std::string file = path;
  FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(path));
  if (info.is_dir) file = JoinPath(path, "dataset.json");
  if (EndsWith(file, ".json")) {
    FERRY_ASSIGN_OR_RETURN(std::string data, ReadFileToString(env, file));
    rep.kind = "dataset";
    rep.dataset_json = PrettyJson(data);
    return rep;
  }
  // Streamed: a shard of any size is read in chunks, once.
  FERRY_ASSIGN_OR_RETURN(auto in,
                         pack::OpenShardStream(env, file, /*md5=*/false));
  if (EndsWith(file, ".tar")) {
    rep.kind = "webdataset";
    InspectTar(in.get(), max_records, &rep);
  } else {
    rep.kind = EndsWith(file, ".gz") ? "tfrecord.gz" : "tfrecord";
    InspectTfRecord(in.get(), max_records, &rep);
  }
  return rep;
}

}  // namespace ferry
