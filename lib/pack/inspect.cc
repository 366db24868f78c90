#include "ferry/inspect.h"

#include <zlib.h>

#include "ferry/image.h"
#include "formats/example/image_example.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/webdataset/tar.h"

namespace ferry {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<std::string> Gunzip(const std::string& in) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK)
    return Status::ResourceExhausted("inflateInit2");
  std::string out;
  char buf[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      return Status::Corruption("gzip stream is corrupt or truncated");
    }
    out.append(buf, sizeof(buf) - z.avail_out);
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      return Status::Corruption("gzip stream is truncated");
    }
  }
  inflateEnd(&z);
  return out;
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

Status InspectTfRecord(const std::string& data, size_t max,
                       InspectReport* rep) {
  tfrecord::RecordReader reader(data);
  for (;;) {
    std::string_view payload;
    uint64_t offset = 0;
    bool done = false;
    Status s = reader.Next(&payload, &offset, &done);
    if (!s.ok()) {
      rep->error = s.ToString();
      return Status::OK();
    }
    if (done) return Status::OK();
    ++rep->records;
    if (rep->shown.size() >= max) continue;
    InspectRecord r;
    r.index = reader.records_read() - 1;
    r.offset = offset;
    r.size = payload.size() + tfrecord::kOverhead;
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

Status InspectTar(const std::string& data, size_t max, InspectReport* rep) {
  auto entries = wds::ListEntries(data);
  if (!entries.ok()) {
    rep->error = entries.status().ToString();
    return Status::OK();
  }
  InspectRecord cur;
  auto flush = [&] {
    if (cur.key.empty()) return;
    ++rep->records;
    if (rep->shown.size() < max) rep->shown.push_back(cur);
    cur = InspectRecord();
  };
  for (const wds::Entry& e : *entries) {
    std::string key, ext;
    wds::SplitName(e.name, &key, &ext);
    if (key != cur.key) {
      flush();
      cur.key = key;
      cur.index = rep->records;
      cur.offset = e.header_offset;
    }
    std::string_view body(data.data() + e.data_offset, e.size);
    InspectField f{ext, "file", 1, e.size, ""};
    if (ext == "cls" || ext == "json" || ext == "txt")
      f.first = std::string(body.substr(0, 64));
    cur.fields.push_back(f);
    cur.size = e.data_offset + e.size - cur.offset;
    if (ext == "jpg" || ext == "jpeg") DecodeDims(body, &cur);
  }
  flush();
  return Status::OK();
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
  FERRY_ASSIGN_OR_RETURN(std::string data, ReadFileToString(env, file));
  if (EndsWith(file, ".json")) {
    rep.kind = "dataset";
    rep.dataset_json = PrettyJson(data);
    return rep;
  }
  if (EndsWith(file, ".tar")) {
    rep.kind = "webdataset";
    FERRY_RETURN_IF_ERROR(InspectTar(data, max_records, &rep));
    return rep;
  }
  if (data.size() >= 2 && uint8_t(data[0]) == 0x1f &&
      uint8_t(data[1]) == 0x8b) {
    rep.kind = "tfrecord.gz";
    auto raw = Gunzip(data);
    if (!raw.ok()) {
      rep.error = raw.status().ToString();
      return rep;
    }
    data = std::move(raw).value();
  } else {
    rep.kind = "tfrecord";
  }
  FERRY_RETURN_IF_ERROR(InspectTfRecord(data, max_records, &rep));
  return rep;
}

}  // namespace ferry
