#include "ferry/verify.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/ordered_pipeline.h"
#include "ferry/hash.h"
#include "ferry/hash_list.h"
#include "ferry/image.h"
#include "ferry/json.h"
#include "ferry/split.h"
#include "ferry/sync.h"
#include "formats/example/image_example.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/webdataset/tar.h"
#include "pack/shard_stream.h"
#include "sync/fs_util.h"
#include "sync/view.h"

namespace ferry {
namespace {

using pack::FileStream;

// A source record's identity, for the split check.
struct SourceKey {
  uint64_t path_hash = 0;
  std::string path, content;  // source path and its XXH3-128 (hex)
  int64_t record = 0;
};

// Every record's feature set (TFRecord) or component list (tar), counted:
// the majority is the schema, and records that differ from it are flagged
// (a damaged first record is one odd record, not everyone else's fault).
struct SchemaTally {
  struct Seen {
    uint64_t count = 0;
    uint64_t first = 0;          // order of first sight, for ties
    std::vector<Problem> where;  // the first kMaxShown records
  };
  static constexpr size_t kMaxShown = 100;
  std::map<std::string, Seen> seen;
  uint64_t order = 0;

  void Add(const std::string& schema, Problem where) {
    auto [it, fresh] = seen.try_emplace(schema);
    if (fresh) it->second.first = order++;
    ++it->second.count;
    if (it->second.where.size() < kMaxShown)
      it->second.where.push_back(std::move(where));
  }
  void Merge(SchemaTally&& o) {
    std::vector<std::pair<uint64_t, std::string>> by_order;
    for (auto& [schema, seen_o] : o.seen)
      by_order.push_back({seen_o.first, schema});
    std::sort(by_order.begin(), by_order.end());
    for (const auto& [unused, schema] : by_order) {
      Seen& from = o.seen[schema];
      auto [it, fresh] = seen.try_emplace(schema);
      if (fresh) it->second.first = order++;
      it->second.count += from.count;
      for (Problem& p : from.where) {
        if (it->second.where.size() < kMaxShown)
          it->second.where.push_back(std::move(p));
      }
    }
  }
  // One problem per record (up to kMaxShown per schema) outside the
  // majority schema (ties: the one seen first).
  void Report(std::vector<Problem>* out) const {
    const std::pair<const std::string, Seen>* major = nullptr;
    uint64_t total = 0;
    for (const auto& e : seen) {
      total += e.second.count;
      if (!major || e.second.count > major->second.count ||
          (e.second.count == major->second.count &&
           e.second.first < major->second.first)) {
        major = &e;
      }
    }
    if (!major) return;
    for (const auto& [schema, s] : seen) {
      if (&schema == &major->first) continue;
      for (const Problem& p : s.where) {
        Problem q = p;
        q.what = "schema";
        q.detail = "has " + schema + " where " +
                   std::to_string(major->second.count) + " of " +
                   std::to_string(total) + " records have " + major->first;
        out->push_back(std::move(q));
      }
    }
  }
};

struct ShardResult {
  std::vector<Problem> problems;
  uint64_t records = 0, bytes = 0;
  Hash128 xxh3;
  std::string md5;
  SchemaTally schemas;
  std::vector<SourceKey> keys;
  bool missing = false;
  // The framing broke (truncated, length CRC, tar header, gzip): what comes
  // after is unknown, so the index sidecar is not judged against it.
  bool unreadable = false;
};

// Minimal protobuf wire scan of a tf.train.Example: feature keys and kinds
// (the schema), and the first bytes value of two features. No copies.
bool Varint(std::string_view* p, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && !p->empty(); shift += 7) {
    uint8_t b = static_cast<uint8_t>(p->front());
    p->remove_prefix(1);
    *v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

bool Field(std::string_view* p, int* number, std::string_view* body) {
  uint64_t tag, len;
  if (!Varint(p, &tag) || (tag & 7) != 2 || !Varint(p, &len) || len > p->size())
    return false;
  *number = static_cast<int>(tag >> 3);
  *body = p->substr(0, len);
  p->remove_prefix(len);
  return true;
}

bool ScanExample(std::string_view ex, std::string* schema,
                 std::string* filename, std::string* key) {
  std::vector<std::string> parts;
  int n;
  std::string_view features;
  while (!ex.empty()) {
    if (!Field(&ex, &n, &features) || n != 1) return false;
    while (!features.empty()) {
      std::string_view entry, k, feature;
      if (!Field(&features, &n, &entry) || n != 1) return false;
      std::string_view fkey;
      std::string kind = "none";
      while (!entry.empty()) {
        std::string_view v;
        if (!Field(&entry, &n, &v)) return false;
        if (n == 1) {
          fkey = v;
        } else if (n == 2) {
          feature = v;
          while (!feature.empty()) {
            std::string_view list;
            int kn;
            if (!Field(&feature, &kn, &list) || kn < 1 || kn > 3) return false;
            kind = kn == 1 ? "bytes" : kn == 2 ? "float" : "int64";
            if (kn == 1 &&
                (fkey == "image/filename" || fkey == "image/key/xxh3")) {
              std::string_view first;
              int vn;
              if (!list.empty() && Field(&list, &vn, &first)) {
                (fkey == "image/filename" ? filename : key)->assign(first);
              }
            }
          }
        }
      }
      parts.push_back(std::string(fkey) + ":" + kind);
    }
  }
  std::sort(parts.begin(), parts.end());
  schema->clear();
  for (const auto& s : parts) *schema += s + ";";
  return true;
}

void Add(ShardResult* r, const std::string& file, int64_t rec, int64_t off,
         const char* what, std::string detail) {
  r->problems.push_back({file, rec, off, what, std::move(detail)});
}

void DeepCheck(std::string_view jpeg, int64_t h, int64_t w,
               const std::string& file, int64_t rec, int64_t off,
               ShardResult* r) {
  auto img = image::DecodeJpeg(jpeg, {});
  if (!img.ok()) {
    Add(r, file, rec, off, "decode", img.status().ToString());
  } else if (img->height != h || img->width != w) {
    Add(r, file, rec, off, "decode",
        "image is " + std::to_string(img->width) + "x" +
            std::to_string(img->height) + ", recorded " + std::to_string(w) +
            "x" + std::to_string(h));
  }
}

void VerifyTfRecord(FileStream* in, const std::string& file, bool deep,
                    std::string* idx, ShardResult* r) {
  std::string payload;
  uint64_t off = 0;
  for (int64_t rec = 0;; ++rec) {
    const pack::TfStep step = pack::NextTfRecord(in, &payload);
    if (step == pack::TfStep::kEnd) break;
    if (step != pack::TfStep::kRecord && step != pack::TfStep::kDataCrc)
      r->unreadable = true;
    if (step == pack::TfStep::kStream) {
      return Add(r, file, -1, int64_t(in->error_offset()), "gzip",
                 std::string(in->status().message()));
    }
    if (step == pack::TfStep::kTruncated)
      return Add(r, file, rec, off, "truncated", "record cut short");
    if (step == pack::TfStep::kLengthCrc) {
      return Add(r, file, rec, off, "length_crc",
                 "length CRC mismatch; the rest of the file is unreadable");
    }
    const uint64_t len = payload.size();
    if (step == pack::TfStep::kDataCrc) {
      Add(r, file, rec, int64_t(off + tfrecord::kHeaderSize), "data_crc",
          "data CRC mismatch");
    } else {
      std::string schema, filename, key;
      if (!ScanExample(payload, &schema, &filename, &key)) {
        Add(r, file, rec, int64_t(off + tfrecord::kHeaderSize), "parse",
            "not a tf.train.Example");
      } else {
        r->schemas.Add("features " + schema, {file, rec, int64_t(off), "", ""});
        r->keys.push_back({XXH3_64bits(filename.data(), filename.size()),
                           filename, key, rec});
        if (deep) {
          auto img = example::ParseImageExample(payload);
          if (!img.ok()) {
            Add(r, file, rec, int64_t(off), "parse", img.status().ToString());
          } else {
            DeepCheck(img->encoded, img->height, img->width, file, rec,
                      int64_t(off), r);
          }
        }
      }
    }
    *idx += tfrecord::DaliIndexLine(off, len);
    off += tfrecord::kOverhead + len;
    ++r->records;
  }
}

void VerifyTar(FileStream* in, const std::string& file, bool deep,
               std::string* idx, ShardResult* r) {
  std::string data;
  uint64_t off = 0;
  int64_t sample = -1;
  std::string key, line, parts, json, jpeg;
  std::set<std::string> seen, exts;
  std::vector<std::string> lines;
  auto close_sample = [&] {
    if (key.empty()) return;
    r->schemas.Add("components " + parts, {file, sample, -1, "", ""});
    auto j = ParseJson(json);
    if (!j.ok()) {
      Add(r, file, sample, -1, "parse",
          key + ".json: " + j.status().ToString());
    } else {
      const std::string fn = (*j)["filename"].str();
      r->keys.push_back(
          {XXH3_64bits(fn.data(), fn.size()), fn, (*j)["xxh3"].str(), sample});
      if (deep) {
        DeepCheck(jpeg, int64_t((*j)["height"].number()),
                  int64_t((*j)["width"].number()), file, sample, -1, r);
      }
    }
    lines.push_back(line);
    ++r->records;
  };
  for (;;) {
    wds::Header h;
    std::string error;
    const pack::TarStep step = pack::NextTarEntry(in, &h, &data, &error);
    if (step == pack::TarStep::kEnd) break;
    if (step != pack::TarStep::kEntry) {
      r->unreadable = true;
      if (step == pack::TarStep::kStream) {
        close_sample();
        return Add(r, file, -1, int64_t(in->error_offset()), "gzip",
                   std::string(in->status().message()));
      }
      if (step == pack::TarStep::kBadEnd) {
        close_sample();
        return Add(r, file, sample, int64_t(off), "tar",
                   "archive ends without its two zero blocks");
      }
      // The damaged entry's sample: the current one if the name (as far as
      // it can be read) carries its key, else the next. A sample cut here
      // is not counted or checked as a whole one.
      std::string k, ext;
      wds::SplitName(h.name, &k, &ext);
      int64_t at = sample;
      if (k != key || key.empty()) {
        close_sample();
        at = sample + 1;
      }
      return Add(r, file, at, int64_t(off),
                 step == pack::TarStep::kTruncated ? "truncated" : "tar",
                 error + (step == pack::TarStep::kBadHeader
                              ? "; the rest is unreadable"
                              : ""));
    }
    const uint64_t data_off = off + wds::kBlock;
    off += pack::TarEntryBytes(h.size);
    if (h.type != '0' && h.type != '\0') continue;
    std::string k, ext;
    wds::SplitName(h.name, &k, &ext);
    if (k != key) {
      close_sample();
      ++sample;
      if (!seen.insert(k).second) {
        Add(r, file, sample, int64_t(data_off - wds::kBlock), "tar",
            "sample " + k + " is not contiguous or repeats a key");
      }
      key = k;
      exts.clear();
      parts.clear();
      line.clear();
      json.clear();
      jpeg.clear();
    }
    if (!exts.insert(ext).second) {
      Add(r, file, sample, int64_t(data_off - wds::kBlock), "tar",
          "duplicate component " + h.name);
    }
    parts += ext + ";";
    if (!line.empty()) line += " ";
    line += ext + " " + std::to_string(data_off) + " " +
            std::to_string(h.size) + " " + h.name;
    if (ext == "json") json = data;
    if (deep && ext == "jpg") jpeg = data;
  }
  close_sample();
  *idx = "v1.2 " + std::to_string(r->records) + "\n";
  for (const auto& l : lines) *idx += l + "\n";
}

// Streams one shard once: file hashes, structure, records, index sidecar.
ShardResult VerifyShard(Env* env, const std::string& dir,
                        const std::string& name, bool deep) {
  ShardResult r;
  const std::string path = JoinPath(dir, name);
  const bool tar = pack::IsTarName(name), gz = pack::IsGzipName(name);
  auto opened = pack::OpenShardStream(env, path, /*md5=*/tar);
  if (!opened.ok()) {
    r.missing = true;
    Add(&r, name, -1, -1, "missing", opened.status().ToString());
    return r;
  }
  std::unique_ptr<FileStream> in = std::move(opened).value();
  std::string idx;
  if (tar) {
    VerifyTar(in.get(), name, deep, &idx, &r);
  } else {
    VerifyTfRecord(in.get(), name, deep, &idx, &r);
  }
  Status drained = in->Drain();
  if (!drained.ok() && !r.unreadable)
    Add(&r, name, -1, -1, "truncated", drained.ToString());
  r.bytes = in->raw_bytes();
  r.xxh3 = in->xxh3();
  r.md5 = in->md5();
  // DALI indexes raw offsets: gzip shards have none. A shard whose framing
  // broke is the problem, not its index.
  if (!gz && !r.unreadable) {
    auto sidecar = ReadFileToString(env, path + ".idx");
    if (!sidecar.ok()) {
      Add(&r, name + ".idx", -1, -1, "index", "missing index sidecar");
    } else if (!tar && sidecar->size() > idx.size() &&
               sidecar->compare(0, idx.size(), idx) == 0) {
      // Every record there is, and then the index lists more: the file was
      // cut at a record boundary.
      const size_t listed = std::count(sidecar->begin(), sidecar->end(), '\n');
      Add(&r, name, int64_t(r.records), int64_t(r.bytes), "truncated",
          "the file ends after " + std::to_string(r.records) +
              " whole records; its index lists " + std::to_string(listed));
    } else if (*sidecar != idx) {
      // Name the first line that differs.
      size_t line = 1, i = 0;
      while (i < idx.size() && i < sidecar->size() && idx[i] == (*sidecar)[i]) {
        if (idx[i] == '\n') ++line;
        ++i;
      }
      Add(&r, name + ".idx", -1, -1, "index",
          "line " + std::to_string(line) +
              " does not match the shard's records");
    }
  }
  return r;
}

// Which files a pack output may hold besides its shards (and ferry sync's
// state in a view of one or in an --in-place copy: .ferry-sync*,
// .ferry-view.lock).
bool IsPackBookkeeping(const std::string& rel) {
  return rel == "dataset.json" || rel == "labels.txt" ||
         rel == kAssignmentFile || rel == ".ferry-pack-state" ||
         rel == ".ferry-pack.lock" || rel.rfind(".ferry-sync", 0) == 0 ||
         rel == kViewLockName;
}

Status VerifyDataset(const std::string& dir, const VerifyOptions& o,
                     VerifyReport* rep) {
  Env* env = o.env;
  rep->kind = "dataset";
  FERRY_ASSIGN_OR_RETURN(std::string text,
                         ReadFileToString(env, JoinPath(dir, "dataset.json")));
  auto ds = ParseJson(text);
  if (!ds.ok()) {
    rep->problems.push_back(
        {"dataset.json", -1, -1, "parse", ds.status().ToString()});
    return Status::OK();
  }
  struct Want {
    std::string split, name;
    uint64_t records, bytes;
    std::string xxh3;
  };
  std::vector<Want> shards;
  std::map<std::string, uint64_t> split_records;
  std::set<std::string> named;
  for (const auto& [split, info] : (*ds)["splits"].members()) {
    split_records[split] = info["records"].uint();
    for (const JsonValue& sh : info["shards"].items()) {
      shards.push_back({split, sh["name"].str(), sh["records"].uint(),
                        sh["bytes"].uint(), sh["xxh3_128"].str()});
      named.insert(sh["name"].str());
      named.insert(sh["name"].str() + ".idx");
    }
    named.insert(split + ".wids.json");
  }
  // labels.txt: the class names in label order, as dataset.json lists them
  // (readers map label numbers to names with it).
  {
    std::vector<std::string> want;
    for (const JsonValue& l : (*ds)["labels"].items()) want.push_back(l.str());
    auto got = ReadFileToString(env, JoinPath(dir, "labels.txt"));
    if (!got.ok()) {
      rep->problems.push_back(
          {"labels.txt", -1, -1, "missing", got.status().ToString()});
    } else {
      std::vector<std::string> lines;
      size_t pos = 0;
      while (pos < got->size()) {
        size_t nl = got->find('\n', pos);
        if (nl == std::string::npos) nl = got->size();
        lines.push_back(got->substr(pos, nl - pos));
        pos = nl + 1;
      }
      for (size_t i = 0; i < std::max(want.size(), lines.size()); ++i) {
        const std::string w = i < want.size() ? want[i] : "(nothing)";
        const std::string g = i < lines.size() ? lines[i] : "(nothing)";
        if (w == g) continue;
        rep->problems.push_back({"labels.txt", int64_t(i), -1, "labels",
                                 "label " + std::to_string(i) + " is '" + g +
                                     "', dataset.json says '" + w + "'"});
        break;
      }
    }
  }
  // Files present but not named.
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> files,
                         ListFilesRecursive(env, dir));
  for (const std::string& f : files) {
    if (!named.count(f) && !IsPackBookkeeping(f)) {
      rep->problems.push_back(
          {f, -1, -1, "extra", "file not named in dataset.json"});
    }
  }
  if (o.progress) o.progress->Begin("verify", shards.size(), 0);
  SchemaTally schemas;
  struct WidsGot {
    std::string name, md5;
    uint64_t records, bytes;
  };
  std::map<std::string, std::vector<WidsGot>> wids_got;  // per split
  std::map<std::string, uint64_t> got_split_records;
  std::unordered_map<uint64_t, std::pair<std::string, SourceKey>> by_path;
  std::unordered_map<std::string, std::pair<std::string, SourceKey>> by_content;
  // Identical contents in two splits, declared by `pack --allow-leakage`:
  // reported, but not a problem.
  const JsonValue& allowed = (*ds)["leakage"]["allowed"];
  const bool leakage_allowed =
      allowed.type() == JsonValue::Type::kBool && allowed.boolean();
  core::OrderedParallelMap<ShardResult>(
      shards.size(), o.jobs,
      [&](size_t i) { return VerifyShard(env, dir, shards[i].name, o.deep); },
      [&](size_t i, ShardResult r) {
        const Want& w = shards[i];
        if (o.progress) o.progress->Advance(1, r.bytes);
        ++rep->files;
        rep->bytes += r.bytes;
        rep->records += r.records;
        for (auto& p : r.problems) rep->problems.push_back(std::move(p));
        if (r.missing) return;
        if (r.bytes != w.bytes) {
          rep->problems.push_back({w.name, -1, -1, "size",
                                   std::to_string(r.bytes) +
                                       " bytes, dataset.json says " +
                                       std::to_string(w.bytes)});
        }
        if (r.xxh3.ToHex() != w.xxh3) {
          rep->problems.push_back(
              {w.name, -1, -1, "hash",
               "XXH3-128 " + r.xxh3.ToHex() + ", dataset.json says " + w.xxh3});
        }
        if (r.records != w.records) {
          rep->problems.push_back({w.name, -1, -1, "count",
                                   std::to_string(r.records) +
                                       " records, dataset.json says " +
                                       std::to_string(w.records)});
        }
        schemas.Merge(std::move(r.schemas));
        got_split_records[w.split] += r.records;
        wids_got[w.split].push_back({w.name, r.md5, r.records, r.bytes});
        for (SourceKey& k : r.keys) {
          auto [pit, pnew] =
              by_path.emplace(k.path_hash, std::make_pair(w.split, k));
          if (!pnew && pit->second.first != w.split &&
              pit->second.second.path == k.path) {
            rep->problems.push_back({w.name, k.record, -1, "leakage",
                                     "source " + k.path + " is also in split " +
                                         pit->second.first});
          }
          if (k.content.empty()) continue;
          auto [cit, cnew] =
              by_content.emplace(k.content, std::make_pair(w.split, k));
          if (!cnew && cit->second.first != w.split) {
            (leakage_allowed ? rep->warnings : rep->problems)
                .push_back({w.name, k.record, -1, "leakage",
                            "content of " + k.path + " is identical to " +
                                cit->second.second.path + " in split " +
                                cit->second.first});
          }
        }
      });
  if (o.progress) o.progress->End();
  schemas.Report(&rep->problems);
  for (const auto& [split, want] : split_records) {
    if (got_split_records[split] != want) {
      rep->problems.push_back(
          {"dataset.json", -1, -1, "count",
           "split " + split + ": " + std::to_string(got_split_records[split]) +
               " records in its shards, dataset.json says " +
               std::to_string(want)});
    }
  }
  if ((*ds)["shard_format"].str() == "webdataset") {
    for (const auto& [split, list] : wids_got) {
      const std::string wname = split + ".wids.json";
      auto wt = ReadFileToString(env, JoinPath(dir, wname));
      auto wj = wt.ok() ? ParseJson(*wt) : Result<JsonValue>(wt.status());
      if (!wj.ok()) {
        rep->problems.push_back(
            {wname, -1, -1, "index", wj.status().ToString()});
        continue;
      }
      std::map<std::string, const JsonValue*> entries;
      for (const JsonValue& e : (*wj)["shardlist"].items())
        entries[e["url"].str()] = &e;
      for (const WidsGot& g : list) {
        auto it = entries.find(wds::WidsUrl(g.name));
        if (it == entries.end()) {
          rep->problems.push_back(
              {wname, -1, -1, "index", "no entry for " + g.name});
          continue;
        }
        const JsonValue& e = *it->second;
        if (e["md5sum"].str() != g.md5) {
          rep->problems.push_back(
              {wname, -1, -1, "index",
               g.name + ": md5sum does not match the shard"});
        }
        if (e["nsamples"].uint() != g.records ||
            e["filesize"].uint() != g.bytes) {
          rep->problems.push_back(
              {wname, -1, -1, "index",
               g.name + ": nsamples/filesize " +
                   std::to_string(e["nsamples"].uint()) + "/" +
                   std::to_string(e["filesize"].uint()) + ", the shard has " +
                   std::to_string(g.records) + "/" + std::to_string(g.bytes)});
        }
      }
      if (entries.size() != list.size()) {
        rep->problems.push_back({wname, -1, -1, "index",
                                 "lists " + std::to_string(entries.size()) +
                                     " shards, not " +
                                     std::to_string(list.size())});
      }
    }
  }
  return Status::OK();
}

// A listed path as the tree walk names it: `ferry hash .` (and xxhsum, and
// sha256sum) list "./a/b", which opens as root/a/b, as hash --check opens it;
// so do "././a", ".//a", "a/./b" and "a//b" (lexically: no link followed).
// *outside: a ".." part or a leading "/" (read where the list says, not a
// file of the folder: a problem, never an OK).
std::string ListedName(std::string_view path, bool* outside) {
  *outside = !path.empty() && path[0] == '/';
  std::string out;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    path = slash == std::string_view::npos ? "" : path.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == "..") *outside = true;
    if (!out.empty()) out += '/';
    out.append(part);
  }
  return out;
}

Status VerifyHashList(const std::string& root, const VerifyOptions& o,
                      VerifyReport* rep) {
  rep->kind = "hash-list";
  HashOptions h;
  h.env = o.env;
  h.jobs = o.jobs;
  h.root = root;
  std::set<std::string> named;
  // A listed file read through a link that leads out of root is not root's
  // file: its bytes are somewhere else.
  auto real_root = o.env->RealPath(root);
  auto out_of_root =
      [&](const std::string& path) -> std::optional<std::string> {
    if (!real_root.ok()) return std::nullopt;
    auto real = o.env->RealPath(JoinPath(root, path));
    if (!real.ok()) return std::nullopt;
    const std::string inside = *real_root == "/" ? "/" : *real_root + "/";
    if (real->compare(0, inside.size(), inside) == 0) return std::nullopt;
    return *real;
  };
  auto sum = CheckHashList(
      o.hashes_file, h,
      [&](const CheckEntry& e) {
        bool outside = false;
        const std::string path = ListedName(e.path, &outside);
        const bool first = named.insert(path).second;
        ++rep->files;
        if (outside) {
          rep->problems.push_back(
              {e.path, -1, -1, "name",
               "not a file of " + root + " (a '..' part or an absolute path)"});
          return;
        }
        if (!first) {
          rep->problems.push_back(
              {path, -1, -1, "name",
               "listed more than once in " + o.hashes_file});
          return;
        }
        if (e.outcome == CheckEntry::Outcome::kOk ||
            e.outcome == CheckEntry::Outcome::kMismatch) {
          if (auto real = out_of_root(path)) {
            rep->problems.push_back(
                {path, -1, -1, "link",
                 "a link out of " + root + " (to " + *real + ")"});
            return;
          }
        }
        switch (e.outcome) {
          case CheckEntry::Outcome::kOk:
            break;
          case CheckEntry::Outcome::kMismatch:
            rep->problems.push_back({path, -1, -1, "hash",
                                     "XXH3-128 " + e.actual.ToHex() +
                                         ", list says " + e.expected.ToHex()});
            break;
          case CheckEntry::Outcome::kMissing:
            rep->problems.push_back(
                {path, -1, -1, "missing", e.detail.ToString()});
            break;
          case CheckEntry::Outcome::kUnreadable:
            rep->problems.push_back(
                {path, -1, -1, "hash", e.detail.ToString()});
            break;
        }
      },
      [&](uint64_t line, std::string_view) {
        rep->problems.push_back(
            {o.hashes_file, int64_t(line), -1, "parse", "not a hash line"});
      });
  FERRY_RETURN_IF_ERROR(sum.status());
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> files,
                         ListFilesRecursive(o.env, root));
  // A ferry sync DEST (a view, or --in-place) holds sync's state besides the
  // listed files, as a pack output's check allows (IsPackBookkeeping): they
  // were each "extra", exit 3 for an intact DEST.
  const bool synced =
      o.env->FileExists(JoinPath(root, std::string(kViewStateName)));
  for (const std::string& f : files) {
    if (synced && (f.rfind(".ferry-sync", 0) == 0 || f == kViewLockName))
      continue;
    if (!named.count(f))
      rep->problems.push_back(
          {f, -1, -1, "extra", "file not in the hash list"});
  }
  return Status::OK();
}

}  // namespace

Result<VerifyReport> Verify(const std::string& path_in,
                            const VerifyOptions& o) {
  VerifyReport rep;
  // A ferry sync DEST (a link to a view) is read in the view it shows, under
  // that view's lock held shared: a sync switching DEST meanwhile keeps it.
  // Through the link, dataset.json of one version and shards of the next
  // were read, and an intact DEST reported damaged (exit 3: "missing", "index
  // sidecar"); ferry verify while ferry sync switched versions.
  std::string path = path_in;
  sync::ViewReadLock read_lock;
  if (auto paths = sync::ResolveDest(path_in); paths.ok()) {
    auto link = sync::LinkKind(paths->dest);
    if (link.ok() && *link == sync::PathKind::kLink) {
      std::string view;
      sync::DestKind kind;
      if (read_lock.Take(o.env, *paths, &view, &kind).ok() &&
          kind == sync::DestKind::kView)
        path = view;
    }
  }
  FERRY_ASSIGN_OR_RETURN(FileInfo info, o.env->Stat(path));
  if (info.type != FileType::kRegular && !info.is_dir) {
    return Status::InvalidArgument(path,
                                   std::string("not a file or directory (") +
                                       FileTypeName(info.type) + ")");
  }
  if (!o.hashes_file.empty()) {
    if (!info.is_dir)
      return Status::InvalidArgument("--hashes needs a directory to check");
    FERRY_RETURN_IF_ERROR(VerifyHashList(path, o, &rep));
  } else if (info.is_dir) {
    FERRY_RETURN_IF_ERROR(VerifyDataset(path, o, &rep));
  } else {
    const size_t slash = path.rfind('/');
    const std::string dir =
        slash == std::string::npos ? std::string() : path.substr(0, slash);
    const std::string name =
        slash == std::string::npos ? path : path.substr(slash + 1);
    rep.kind = pack::IsTarName(name) ? "webdataset" : "tfrecord";
    ShardResult r = VerifyShard(o.env, dir, name, o.deep);
    rep.files = 1;
    rep.records = r.records;
    rep.bytes = r.bytes;
    rep.problems = std::move(r.problems);
    r.schemas.Report(&rep.problems);
  }
  return rep;
}

}  // namespace ferry
