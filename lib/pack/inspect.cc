#include "ferry/inspect.h"

#include "ferry/image.h"
#include "ferry/json.h"
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
    if (step == pack::TfStep::kStream) {
      rep->error = std::string(in->status().message());
      return;
    }
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
    if (step == pack::TarStep::kStream) {
      rep->error = std::string(in->status().message());
      break;
    }
    if (step == pack::TarStep::kBadEnd) {
      flush();
      rep->error = "tar at offset " + std::to_string(off) +
                   ": the archive ends without its two zero blocks";
      return;
    }
    if (step != pack::TarStep::kEntry) {
      // The sample the damaged entry belongs to: the current one if the
      // name still carries its key, else the next.
      std::string key, ext;
      wds::SplitName(h.name, &key, &ext);
      uint64_t index = rep->records;
      std::string name = cur.key;
      if (key != cur.key || cur.key.empty()) {
        flush();
        index = rep->records;
        name = key;
      }
      rep->error = "record " + std::to_string(index) +
                   (name.empty() ? "" : " (key " + name + ")") +
                   ", tar entry at offset " + std::to_string(off) + ": " +
                   error;
      return;
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

// What the bytes are, whatever the name says; the name decides only for a
// shard too damaged to tell.
Result<InspectReport> Inspect(Env* env, const std::string& path,
                              size_t max_records) {
  InspectReport rep;
  std::string file = path;
  FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(path));
  if (info.is_dir) file = JoinPath(path, "dataset.json");
  std::string head;
  {
    FERRY_ASSIGN_OR_RETURN(auto in,
                           pack::OpenShardStream(env, file, false, false));
    FERRY_RETURN_IF_ERROR(in->Read(1024, &head));
  }
  const bool gz =
      head.size() >= 2 && uint8_t(head[0]) == 0x1f && uint8_t(head[1]) == 0x8b;
  if (gz) {  // what the gzip holds
    FERRY_ASSIGN_OR_RETURN(auto in,
                           pack::OpenShardStream(env, file, false, true));
    if (!in->Read(1024, &head).ok()) head.clear();
  }
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (!gz && first != std::string::npos && head[first] == '{') {
    FERRY_ASSIGN_OR_RETURN(std::string data, ReadFileToString(env, file));
    auto j = ParseJson(data);
    if (j.ok() && (*j)["format"].str() == "ferry-dataset-v1") {
      rep.kind = "dataset";
    } else if (j.ok() && (*j)["__kind__"].str() == "wids-shard-index-v1") {
      rep.kind = "wids";
    }
    if (!rep.kind.empty()) {
      rep.dataset_json = PrettyJson(data);
      return rep;
    }
  }
  if (!gz && image::Sniff(head) != image::Format::kUnknown) {
    FERRY_ASSIGN_OR_RETURN(std::string data, ReadFileToString(env, file));
    auto h = image::ReadImageHeader(data);
    rep.kind = "image";
    if (!h.ok()) {
      rep.error = h.status().ToString();
    } else {
      rep.image = *h;
    }
    return rep;
  }
  wds::Header th;
  const bool tar = head.size() >= wds::kBlock &&
                   (head.compare(257, 5, "ustar") == 0 ||
                    wds::ParseHeader(head.substr(0, wds::kBlock), &th).ok());
  uint64_t len = 0;
  const bool tfrecord =
      head.empty() ||
      (head.size() >= tfrecord::kHeaderSize &&
       tfrecord::DecodeHeader(head.substr(0, tfrecord::kHeaderSize), &len));
  const bool named_tar = pack::IsTarName(file);
  const bool named_tf = EndsWith(file, ".tfrecord") ||
                        EndsWith(file, ".tfrecord.gz") ||
                        EndsWith(file, ".tfrecords");
  if (!tar && !tfrecord && !named_tar && !named_tf) {
    rep.kind = "unknown";
    rep.error = gz ? "gzip, but neither a TFRecord nor a tar inside: not a "
                     "shard, dataset or image"
                   : "not a shard, dataset or image";
    return rep;
  }
  // Streamed: a shard of any size is read in chunks, once.
  FERRY_ASSIGN_OR_RETURN(auto in,
                         pack::OpenShardStream(env, file, /*md5=*/false, gz));
  if (tar || (!tfrecord && named_tar)) {
    rep.kind = gz ? "webdataset.gz" : "webdataset";
    InspectTar(in.get(), max_records, &rep);
  } else {
    rep.kind = gz ? "tfrecord.gz" : "tfrecord";
    InspectTfRecord(in.get(), max_records, &rep);
  }
  return rep;
}

}  // namespace ferry
