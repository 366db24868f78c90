#include "ferry/pack.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/ordered_pipeline.h"
#include "ferry/atomic_file.h"
#include "ferry/input.h"
#include "ferry/json.h"
#include "ferry/remote.h"
#include "ferry/version.h"
#include "formats/example/image_example.h"
#include "formats/webdataset/tar.h"
#include "pack/pack_fields.h"
#include "pack/plan.h"
#include "pack/shard_writer.h"
#include "remote/byte_sources.h"

namespace ferry {
namespace {

constexpr char kStateFile[] = ".ferry-pack-state";
constexpr char kLockFile[] = ".ferry-pack.lock";

const char* Ext(ShardFormat f, bool gzip) {
  return f == ShardFormat::kWebDataset ? ".tar"
         : gzip                        ? ".tfrecord.gz"
                                       : ".tfrecord";
}

// While a split is being written its shards carry no "-of-N" (N is known
// only at the end of the split).
std::string InterimName(const std::string& split, size_t k, ShardFormat f,
                        bool gzip) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "-%05zu", k);
  return split + buf + Ext(f, gzip);
}

// A WebDataset sample key, "<split>_000000042". Entries are "<key>.<ext>";
// ustar's 100-byte name field is all wids and DALI read of a name.
std::string SampleKey(const std::string& split, uint64_t record) {
  char num[24];
  std::snprintf(num, sizeof(num), "_%09llu", (unsigned long long)record);
  return split + num;
}
// 100 bytes, less "_" and 9 digits, less ".json" (the longest extension).
constexpr size_t kMaxWdsSplitName = 100 - 10 - 5;

// Names only ferry pack gives files in OUT: shards (final or interim), their
// ".idx" sidecars and wids indexes.
bool IsPackOutputName(const std::string& f) {
  static const std::regex kRe(
      R"([^./\\ \t\n]+(-[0-9]{5,}(-of-[0-9]{5,})?\.(tfrecord|tfrecord\.gz|tar)(\.idx)?|\.wids\.json))");
  return std::regex_match(f, kRe);
}

// Every option (from the one field list in pack_fields.h) and the input
// listing with its contents.
std::string Fingerprint(const std::vector<SplitItem>& items,
                        const std::vector<Hash128>& hashes,
                        const std::vector<int>& assignment,
                        const PackOptions& o) {
  Hasher128 h;
  auto add = [&](const std::string& s) {
    h.Update(s);
    h.Update(std::string_view("\0", 1));
  };
  add("pack-v2");
  add(pack::PackOptionsText(o));
  for (size_t i = 0; i < items.size(); ++i) {
    add(items[i].path);
    add(items[i].label);
    add(items[i].group);
    add(hashes[i].ToHex());
    add(std::to_string(assignment[i]));
  }
  return h.Digest().ToHex();
}

struct DoneShard {
  std::string split;
  size_t index = 0;
  uint64_t next_item = 0, next_record = 0;  // where the following shard starts
  uint64_t records = 0, bytes = 0;
  Hash128 xxh3;
  Hash128 idx_xxh3;  // of the ".idx" sidecar (of "" for gzip shards)
  std::string md5;
  // OUT in a bucket: what the uploads of shard and index returned ("" on a
  // file system; never in the merged state, which is a one-machine run's).
  std::string etag = {}, idx_etag = {};
  uint64_t idx_bytes = 0;
};

struct Failed {
  std::string split;
  uint64_t item_pos = 0;
  std::string input;
  Status error;  // as first reported: a resumed run lists the same
};

struct State {
  std::string fingerprint;
  std::vector<DoneShard> shards;
  std::vector<Failed> failed;
  std::map<std::string, size_t> split_done;  // split -> shard count

  std::string Serialize() const {
    std::string s = "ferry-pack-state v2\nfingerprint " + fingerprint + "\n";
    for (const DoneShard& d : shards) {
      s += "shard " + d.split + " " + std::to_string(d.index) + " " +
           std::to_string(d.next_item) + " " + std::to_string(d.next_record) +
           " " + std::to_string(d.records) + " " + std::to_string(d.bytes) +
           " " + d.xxh3.ToHex() + " " + d.idx_xxh3.ToHex() + " " +
           (d.md5.empty() ? "-" : d.md5) + "\n";
      if (!d.etag.empty()) {
        s += "etag " + pack::ToHex(d.etag) + " " + pack::ToHex(d.idx_etag) +
             " " + std::to_string(d.idx_bytes) + "\n";
      }
    }
    for (const Failed& f : failed) {
      s += "failed " + f.split + " " + std::to_string(f.item_pos) + " " +
           pack::ToHex(f.input) + " " + std::to_string(int(f.error.code())) +
           " " + pack::ToHex(f.error.message()) + "\n";
    }
    for (const auto& [split, n] : split_done)
      s += "split_done " + split + " " + std::to_string(n) + "\n";
    return s;
  }

  static State Parse(const std::string& text) {
    State st;
    std::istringstream in(text);
    std::string word;
    while (in >> word) {
      if (word == "fingerprint") {
        in >> st.fingerprint;
      } else if (word == "shard") {
        DoneShard d;
        std::string hex, idx_hex;
        in >> d.split >> d.index >> d.next_item >> d.next_record >> d.records >>
            d.bytes >> hex >> idx_hex >> d.md5;
        if (d.md5 == "-") d.md5.clear();
        auto h = Hash128::FromHex(hex);
        auto ih = Hash128::FromHex(idx_hex);
        if (!in || !h.ok() || !ih.ok()) return State();
        d.xxh3 = *h;
        d.idx_xxh3 = *ih;
        st.shards.push_back(d);
      } else if (word == "etag") {  // of the shard before it
        std::string hex, idx_hex;
        in >> hex >> idx_hex;
        if (st.shards.empty()) return State();
        DoneShard& d = st.shards.back();
        in >> d.idx_bytes;
        if (!in || !pack::FromHex(hex, &d.etag) ||
            !pack::FromHex(idx_hex, &d.idx_etag))
          return State();
      } else if (word == "failed") {
        Failed f;
        std::string in_hex, err_hex;
        int code = 0;
        in >> f.split >> f.item_pos >> in_hex >> code >> err_hex;
        if (!in || code <= 0 || code > int(Status::Code::kFailedPrecondition))
          return State();
        std::string msg;
        if (!pack::FromHex(in_hex, &f.input) || !pack::FromHex(err_hex, &msg))
          return State();
        f.error = Status::FromCode(Status::Code(code), msg);
        st.failed.push_back(std::move(f));
      } else if (word == "split_done") {
        std::string split;
        size_t n = 0;
        in >> split >> n;
        st.split_done[split] = n;
      } else if (word == "ferry-pack-state") {
        in >> word;
        if (word != "v2") return State();  // an older layout: start afresh
      } else {
        return State();
      }
    }
    return st;
  }
};

// True if the shard at path has exactly the recorded size and XXH3-128, and
// its ".idx" sidecar (none for gzip) the recorded XXH3-128.
bool Verified(Env* env, const std::string& path, const DoneShard& d,
              bool gzip) {
  uint64_t size = 0;
  auto got = HashFile(env, path, &size);
  if (!got.ok() || size != d.bytes || *got != d.xxh3) return false;
  if (gzip) return true;
  auto idx = HashFile(env, path + ".idx", &size);
  return idx.ok() && *idx == d.idx_xxh3;
}

// Hashes what a read delivers.
class HashSink : public ByteSink {
 public:
  Status Append(std::string_view data) override {
    hasher.Update(data);
    size += data.size();
    return Status::OK();
  }
  Hasher128 hasher;
  uint64_t size = 0;
};

struct Record {
  Status error;
  std::string example;                                     // TFRecord payload
  std::vector<std::pair<std::string, std::string>> parts;  // WebDataset
  uint64_t input_bytes = 0;
};

class Packer {
 public:
  Packer(const std::string& src, const std::string& out, const PackOptions& o)
      : src_(src), out_(out), o_(o), env_(o.env), remote_(o.out_backend) {}
  // A bucket OUT's local folder goes on every exit (an error's too): what
  // it holds is redone by a rerun.
  ~Packer() {
    if (stage_locked_) (void)RemoveStage();
  }

  Result<PackSummary> Run();
  // Distributed pack: the plan, one worker's shards, the merge.
  Result<PackSummary> Plan();
  Result<PackSummary> Work(int worker, int workers);
  Result<PackSummary> Merge();

 private:
  Status CheckOptions() const;
  Status Scan();      // items_, hashes_, earlier_ and what was left out
  Status Assign();    // split_, labels, orders_, fp_
  Status LoadPlan();  // Scan() and Assign() from the plan file
  // Which plan file OUT holds now (NotFound: none): a local one's inode,
  // size and times, a bucket's size and ETag.
  Result<std::string> PlanId() const;
  // A worker, before each write into OUT: the plan it loaded is still
  // there, unchanged (not replaced by another --plan, nor gone with a
  // merge), else an error and nothing written.
  Status CheckPlanUnchanged() const;
  Status Lock();
  Status PackOneSplit(size_t s, const std::vector<size_t>& order);
  // Renames a split's shards to their final names (rename) and writes its
  // wids index; the split is done.
  Status FinishSplit(size_t s, const std::vector<DoneShard>& shards,
                     bool rename);
  Status Finish();  // stale outputs gone, labels, assignment, dataset.json
  Status AddRecord(pack::ShardWriter* shard, const std::string& split,
                   uint64_t record, Record& r);
  // Distributed: the planned shard count of split s, and shard k of it.
  size_t PlannedShards(size_t s) const;
  std::string PlannedShardName(size_t s, size_t k) const;
  // Writes shard k of split s (and its index) into dir.
  Result<DoneShard> WriteShard(size_t s, size_t k, const std::string& dir,
                               std::vector<Failed>* failed);
  Record Build(size_t item) const;
  Status SaveState() { return WriteOut(kStateFile, state_.Serialize()); }
  // OUT's files by name: in the folder out_, or objects of remote_ (each
  // written whole: readers see the old one or the new one).
  bool remote() const { return remote_ != nullptr; }
  Result<std::string> ReadOut(const std::string& name) const;
  Status WriteOut(const std::string& name, std::string_view bytes);
  Status RemoveOut(const std::string& name);
  bool OutExists(const std::string& name) const;
  // OUT's file by name for messages: its path, or its URL in the bucket.
  std::string OutPath(const std::string& name) const {
    if (!remote()) return JoinPath(out_, name);
    return out_ + (!out_.empty() && out_.back() == '/' ? "" : "/") + name;
  }
  // OUT in a bucket: the local file at path uploaded as name.
  Result<ObjectInfo> UploadFile(const std::string& name,
                                const std::string& path);
  // OUT in a bucket: this machine's folder for `role` in the tmp folder,
  // locked (busy: the message when another process holds it); its killed
  // writers' temporary files removed.
  Status OpenStage(const std::string& role, const std::string& busy);
  Status RemoveStage();
  // Worker, OUT in a bucket: the shard name (and its index) written in the
  // stage folder read back, uploaded, their sizes and ETags put in d, and
  // the local copies removed.
  Status Upload(const std::string& name, DoneShard* d);
  // OUT in a bucket: the shard (and its index) there as d lists them: size
  // and ETag by HEAD, or size and XXH3-128 read back (verify_remote).
  bool RemoteVerified(const std::string& name, const DoneShard& d) const;
  // A listed shard as it was written, where it is (out_ or the bucket).
  bool ShardVerified(const std::string& name, const DoneShard& d) const {
    return remote() ? RemoteVerified(name, d)
                    : Verified(env_, JoinPath(out_, name), d, o_.gzip);
  }
  Status WriteDatasetJson();
  // dataset.json's "options": {...} member, and as text (compact, as there).
  void AddOptionsJson(JsonWriter* j) const;
  std::string OptionsJson() const;
  Status RemoveStaleOutputs();

  std::string src_, out_;
  const PackOptions& o_;
  Env* env_;
  Backend* remote_;            // OUT in a bucket, else null
  std::string stage_;          // OUT in a bucket: this process's local folder
  bool stage_locked_ = false;  // stage_ is this process's (its lock held)
  std::vector<SplitItem> items_;
  std::vector<Hash128> hashes_;
  std::vector<int> earlier_;
  SplitResult split_;
  std::vector<std::vector<size_t>> orders_;  // per split, the record order
  std::string fp_;
  std::map<std::string, int> label_index_;
  std::unique_ptr<FileLock> lock_;
  bool planned_ = false;  // items and hashes come from a plan
  std::string plan_id_;   // PlanId() when the plan was read
  State state_;
  PackSummary sum_;
};

Record Packer::Build(size_t i) const {
  Record r;
  const SplitItem& it = items_[i];
  // The scan took regular files only; a FIFO put in one's place since (a
  // worker reads the plan's paths) would block the open for ever.
  auto kind = env_->Stat(JoinPath(src_, it.path));
  if (kind.ok() && kind->type != FileType::kRegular) {
    r.error = Status::FailedPrecondition(
        std::string("not a regular file (") + FileTypeName(kind->type) + ")" +
        (planned_ ? " since the plan: rerun ferry pack --plan" : ""));
    return r;
  }
  auto data = ReadInputFile(env_, JoinPath(src_, it.path),
                            o_.transcode.decode.limits.max_file_bytes);
  if (!data.ok()) {
    r.error = data.status();
    return r;
  }
  r.input_bytes = data->size();
  // Its key, leakage and split came from the scan's (or the plan's) hash:
  // a file rewritten since would pack new pixels under the old key.
  if (HashBytes(*data) != hashes_[i]) {
    r.error = Status::FailedPrecondition(
        planned_ ? "changed since the plan: rerun ferry pack --plan"
                 : "changed while packing: run ferry pack again");
    return r;
  }
  thread_local image::JpegEncoder encoder;
  image::TranscodeInfo info;
  auto jpeg = image::Transcode(*data, o_.transcode, &encoder, &info);
  if (!jpeg.ok()) {
    r.error = jpeg.status();
    return r;
  }
  const int64_t channels = info.output_channels;
  auto li = label_index_.find(it.label);
  const int64_t label =
      it.label.empty() || li == label_index_.end() ? -1 : li->second;
  if (o_.format == ShardFormat::kTfRecord) {
    example::ImageRecord rec;
    rec.encoded = *jpeg;
    rec.height = info.output_height;
    rec.width = info.output_width;
    rec.channels = channels;
    rec.label = label;
    rec.label_text = it.label;
    rec.filename = it.path;
    rec.key_xxh3 = hashes_[i].ToHex();
    r.example = example::SerializeImageExample(rec);
  } else {
    JsonWriter j;
    j.BeginObject()
        .Key("filename")
        .String(it.path)
        .Key("height")
        .Int(info.output_height);
    j.Key("width").Int(info.output_width).Key("channels").Int(channels);
    if (label >= 0) j.Key("label").Int(label).Key("text").String(it.label);
    j.Key("xxh3").String(hashes_[i].ToHex()).EndObject();
    std::string json = j.str();
    if (!json.empty() && json.back() == '\n') json.pop_back();
    if (label >= 0) r.parts.emplace_back("cls", std::to_string(label));
    r.parts.emplace_back("jpg", std::move(jpeg).value());
    r.parts.emplace_back("json", std::move(json));
  }
  return r;
}

Status Packer::AddRecord(pack::ShardWriter* shard, const std::string& split,
                         uint64_t record, Record& r) {
  if (o_.format == ShardFormat::kTfRecord) return shard->AddTfRecord(r.example);
  return shard->AddSample(SampleKey(split, record), r.parts);
}

Status Packer::PackOneSplit(size_t s, const std::vector<size_t>& order) {
  const std::string& name = split_.names[s];
  // Shards kept from an earlier run: the longest verified prefix.
  size_t next_item = 0;
  uint64_t next_record = 0;
  std::vector<DoneShard> kept;
  for (const DoneShard& d : state_.shards) {
    if (d.split != name || d.index != kept.size()) continue;
    const std::string path =
        JoinPath(out_, InterimName(name, d.index, o_.format, o_.gzip));
    if (!Verified(env_, path, d, o_.gzip)) break;  // redone, with its index
    kept.push_back(d);
    next_item = d.next_item;
    next_record = d.next_record;
  }
  sum_.reused_shards += kept.size();
  // Forget this split's shards (and failures) after the kept prefix.
  std::vector<DoneShard> others;
  for (const DoneShard& d : state_.shards) {
    if (d.split != name) others.push_back(d);
  }
  others.insert(others.end(), kept.begin(), kept.end());
  state_.shards = std::move(others);
  std::vector<Failed> failed_kept;
  for (const Failed& f : state_.failed) {
    if (f.split != name || f.item_pos < next_item) failed_kept.push_back(f);
    if (f.split == name && f.item_pos < next_item)
      sum_.failed.push_back({f.input, f.error});
  }
  state_.failed = std::move(failed_kept);

  std::unique_ptr<pack::ShardWriter> shard;
  size_t shard_index = kept.size();
  uint64_t item_pos = next_item;
  auto close_shard = [&]() -> Status {
    FERRY_RETURN_IF_ERROR(shard->Finish());
    DoneShard d{name,          shard_index,         item_pos,
                next_record,   shard->records(),    shard->file_bytes(),
                shard->xxh3(), shard->index_xxh3(), shard->md5_hex()};
    state_.shards.push_back(d);
    kept.push_back(d);
    shard.reset();
    ++shard_index;
    return SaveState();
  };
  Status failed;
  const size_t remaining = order.size() - next_item;
  core::OrderedParallelMap<Record>(
      remaining, o_.jobs, [&](size_t k) { return Build(order[next_item + k]); },
      [&](size_t k, Record r) {
        if (!failed.ok()) return;
        item_pos = next_item + k + 1;
        if (o_.progress) o_.progress->Advance(1, r.input_bytes);
        if (!r.error.ok()) {
          const std::string& path = items_[order[next_item + k]].path;
          sum_.failed.push_back({path, r.error});
          state_.failed.push_back({name, next_item + k, path, r.error});
          return;
        }
        Status st;
        if (!shard) {
          auto w = pack::ShardWriter::Open(
              env_,
              JoinPath(out_,
                       InterimName(name, shard_index, o_.format, o_.gzip)),
              o_.format, o_.gzip);
          if (!w.ok()) {
            failed = w.status();
            return;
          }
          shard = std::move(w).value();
        }
        st = AddRecord(shard.get(), name, next_record++, r);
        if (st.ok() &&
            ((o_.shard_records && shard->records() >= o_.shard_records) ||
             shard->logical_bytes() >= o_.shard_bytes)) {
          st = close_shard();
        }
        if (!st.ok()) failed = st;
      });
  FERRY_RETURN_IF_ERROR(failed);
  item_pos = order.size();
  if (shard && shard->records() > 0) FERRY_RETURN_IF_ERROR(close_shard());
  shard.reset();

  return FinishSplit(s, kept, /*rename=*/true);
}

Status Packer::FinishSplit(size_t s, const std::vector<DoneShard>& kept,
                           bool rename) {
  const std::string& name = split_.names[s];
  PackSplit result;
  result.name = name;
  // Final names, now that the count is known; then the wids index.
  const size_t n = kept.size();
  JsonWriter wids;
  wids.BeginObject()
      .Key("__kind__")
      .String("wids-shard-index-v1")
      .Key("wids_version")
      .Int(1);
  wids.Key("name").String(name).Key("shardlist").BeginArray();
  for (const DoneShard& d : kept) {
    const std::string from =
        JoinPath(out_, InterimName(name, d.index, o_.format, o_.gzip));
    const std::string to_name = ShardName(name, d.index, n, o_.format, o_.gzip);
    const std::string to = JoinPath(out_, to_name);
    if (rename) {
      FERRY_RETURN_IF_ERROR(env_->RenameFile(from, to));
      if (!o_.gzip)
        FERRY_RETURN_IF_ERROR(env_->RenameFile(from + ".idx", to + ".idx"));
    }
    result.shards.push_back({to_name, d.records, d.bytes, d.xxh3});
    result.records += d.records;
    wids.BeginObject().Key("url").String(wds::WidsUrl(to_name));
    wids.Key("md5sum").String(d.md5);
    wids.Key("nsamples")
        .Uint(d.records)
        .Key("filesize")
        .Uint(d.bytes)
        .EndObject();
  }
  wids.EndArray().EndObject();
  if (!remote()) FERRY_RETURN_IF_ERROR(env_->SyncDir(out_));
  // No wids index for an empty split: wids refuses an empty shard list.
  if (o_.format == ShardFormat::kWebDataset && n > 0)
    FERRY_RETURN_IF_ERROR(WriteOut(name + ".wids.json", wids.str()));
  state_.split_done[name] = n;
  FERRY_RETURN_IF_ERROR(SaveState());
  sum_.records += result.records;
  sum_.splits.push_back(std::move(result));
  return Status::OK();
}

void Packer::AddOptionsJson(JsonWriter* j) const {
  j->Key("options").BeginObject();
  core::OptionsJson options(j);
  pack::VisitPackOptions(o_, options);
  j->EndObject();
}

std::string Packer::OptionsJson() const {
  JsonWriter j;
  j.BeginObject();
  AddOptionsJson(&j);
  j.EndObject();
  std::string text = j.str();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.substr(1, text.size() - 2);  // "options":{...}
}

Status Packer::WriteDatasetJson() {
  JsonWriter j;
  j.BeginObject()
      .Key("format")
      .String("ferry-dataset-v1")
      .Key("ferry_version")
      .String(FERRY_VERSION_STRING);
  j.Key("shard_format")
      .String(o_.format == ShardFormat::kTfRecord ? "tfrecord" : "webdataset");
  j.Key("compression").String(o_.gzip ? "gzip" : "none");
  AddOptionsJson(&j);
  j.Key("labels").BeginArray();
  for (const auto& l : sum_.labels) j.String(l);
  j.EndArray();
  j.Key("records").Uint(sum_.records).Key("splits").BeginObject();
  for (const PackSplit& sp : sum_.splits) {
    j.Key(sp.name)
        .BeginObject()
        .Key("records")
        .Uint(sp.records)
        .Key("shards")
        .BeginArray();
    for (const PackShard& sh : sp.shards) {
      j.BeginObject().Key("name").String(sh.name).Key("records").Uint(
          sh.records);
      j.Key("bytes")
          .Uint(sh.bytes)
          .Key("xxh3_128")
          .String(sh.xxh3.ToHex())
          .EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndObject().Key("failed").BeginArray();
  for (const PackFailure& f : sum_.failed) {
    j.BeginObject()
        .Key("input")
        .String(f.input)
        .Key("error")
        .String(f.error.ToString())
        .EndObject();
  }
  j.EndArray();
  // Files that are not inputs (not images, hidden, special, no class): the
  // count is complete, the list capped.
  j.Key("skipped").Uint(sum_.skipped.size()).Key("skipped_files").BeginArray();
  for (size_t k = 0; k < sum_.skipped.size() && k < 1000; ++k) {
    j.BeginObject()
        .Key("input")
        .String(sum_.skipped[k].input)
        .Key("reason")
        .String(sum_.skipped[k].error.message())
        .EndObject();
  }
  j.EndArray().Key("dropped").BeginArray();
  for (const SplitResult::Dropped& d : split_.dropped) {
    j.BeginObject()
        .Key("input")
        .String(items_[d.item].path)
        .Key("duplicate_of")
        .String(items_[d.kept].path)
        .EndObject();
  }
  j.EndArray()
      .Key("leakage")
      .BeginObject()
      .Key("allowed")
      .Bool(o_.split.duplicates == DuplicatePolicy::kAllowLeakage)
      .Key("cross_split_sets")
      .Uint(split_.leaks.size());
  j.Key("sets").BeginArray();
  for (size_t k = 0; k < split_.leaks.size() && k < 1000; ++k) {
    j.BeginArray();
    for (size_t i : split_.leaks[k].items) {
      if (split_.assignment[i] >= 0) j.String(items_[i].path);
    }
    j.EndArray();
  }
  j.EndArray().EndObject().EndObject();
  return WriteOut("dataset.json", j.str());
}

Result<std::string> Packer::ReadOut(const std::string& name) const {
  if (!remote()) return ReadFileToString(env_, JoinPath(out_, name));
  // The plan is the largest (~120 B per input).
  FERRY_ASSIGN_OR_RETURN(SmallObject obj,
                         remote_->ReadIfChanged(name, "", uint64_t(1) << 40));
  return std::move(obj.bytes);
}

Status Packer::WriteOut(const std::string& name, std::string_view bytes) {
  if (!remote()) return WriteFileAtomically(env_, JoinPath(out_, name), bytes);
  remote::StringSource source(bytes);
  return remote_->Write(name, &source, WriteOptions{}).status();
}

Status Packer::RemoveOut(const std::string& name) {
  if (!remote()) return env_->RemoveFile(JoinPath(out_, name));
  return remote_->Delete(name);
}

bool Packer::OutExists(const std::string& name) const {
  if (!remote()) return env_->FileExists(JoinPath(out_, name));
  return remote_->Stat(name).ok();
}

Result<ObjectInfo> Packer::UploadFile(const std::string& name,
                                      const std::string& path) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<remote::FileSource> source,
                         remote::FileSource::Open(env_, path));
  FERRY_ASSIGN_OR_RETURN(ObjectInfo info,
                         remote_->Write(name, source.get(), WriteOptions{}));
  FERRY_RETURN_IF_ERROR(source->CheckUnchanged());
  if (info.size != source->size()) {
    return Status::Corruption(remote_->Describe() + " " + name,
                              "uploaded " + std::to_string(source->size()) +
                                  " bytes, the remote reports " +
                                  std::to_string(info.size));
  }
  return info;
}

Status Packer::OpenStage(const std::string& role, const std::string& busy) {
  std::string tmp = o_.tmp_dir;
  if (tmp.empty()) {
    const char* t = std::getenv("TMPDIR");
    tmp = t != nullptr && *t != '\0' ? t : "/tmp";
  }
  char id[24];
  std::snprintf(id, sizeof(id), "%016llx",
                (unsigned long long)XXH3_64bits(out_.data(), out_.size()));
  stage_ = JoinPath(tmp, "ferry-pack-" + std::string(id) + "-" + role);
  FERRY_RETURN_IF_ERROR(env_->CreateDirs(stage_));
  auto lock = env_->LockFile(JoinPath(stage_, ".lock"), /*wait=*/false);
  if (!lock.ok()) {
    return lock.status().IsUnavailable()
               ? Status::Unavailable(stage_, busy +
                                                 " (another process holds "
                                                 "this folder's lock)")
               : lock.status();
  }
  lock_ = std::move(lock).value();
  stage_locked_ = true;
  RemoveStaleTemps(env_, stage_);
  return Status::OK();
}

Status Packer::RemoveStage() {
  FERRY_ASSIGN_OR_RETURN(std::vector<DirEntry> children,
                         env_->GetChildren(stage_));
  for (const DirEntry& e : children)
    FERRY_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(stage_, e.name)));
  FERRY_RETURN_IF_ERROR(env_->RemoveDir(stage_));
  lock_.reset();
  stage_locked_ = false;
  return Status::OK();
}

Status Packer::Upload(const std::string& name, DoneShard* d) {
  const std::string path = JoinPath(stage_, name);
  if (!Verified(env_, path, *d, o_.gzip)) {
    return Status::Corruption(path,
                              "does not read back as written (its size or "
                              "XXH3-128, or its index's): local disk?");
  }
  FERRY_ASSIGN_OR_RETURN(ObjectInfo shard, UploadFile(name, path));
  d->etag = shard.etag;
  if (!o_.gzip) {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo idx,
                           UploadFile(name + ".idx", path + ".idx"));
    d->idx_etag = idx.etag;
    d->idx_bytes = idx.size;
    FERRY_RETURN_IF_ERROR(env_->RemoveFile(path + ".idx"));
  }
  return env_->RemoveFile(path);
}

bool Packer::RemoteVerified(const std::string& name, const DoneShard& d) const {
  auto one = [&](const std::string& key, uint64_t size, const std::string& etag,
                 const Hash128& xxh3) {
    if (o_.verify_remote) {
      HashSink sink;
      return remote_->Read(key, ByteRange{}, ReadOptions{}, &sink).ok() &&
             sink.size == size && sink.hasher.Digest() == xxh3;
    }
    auto info = remote_->Stat(key);
    return info.ok() && info->size == size && !etag.empty() &&
           info->etag == etag;
  };
  return one(name, d.bytes, d.etag, d.xxh3) &&
         (o_.gzip || one(name + ".idx", d.idx_bytes, d.idx_etag, d.idx_xxh3));
}

// A run owns its output set: shards, indexes and wids files of earlier runs
// (other shard sizes, splits or formats) that this one did not make go, so
// that a "train-*" glob reads this run's records only. Runs before
// dataset.json is written: a run killed before that leaves no dataset.json
// (so the output is visibly unfinished) and its rerun sweeps again.
Status Packer::RemoveStaleOutputs() {
  std::set<std::string> keep;
  for (const PackSplit& sp : sum_.splits) {
    for (const PackShard& sh : sp.shards) {
      keep.insert(sh.name);
      if (!o_.gzip) keep.insert(sh.name + ".idx");
    }
    if (o_.format == ShardFormat::kWebDataset && !sp.shards.empty())
      keep.insert(sp.name + ".wids.json");
  }
  if (remote()) {
    std::vector<std::string> stale;
    FERRY_RETURN_IF_ERROR(
        remote_->List("", ListOptions{}, [&](const ObjectInfo& obj) {
          if (!obj.is_prefix && !keep.count(obj.key) &&
              IsPackOutputName(obj.key))
            stale.push_back(obj.key);
          return Status::OK();
        }));
    for (const std::string& key : stale)
      FERRY_RETURN_IF_ERROR(remote_->Delete(key));
    return Status::OK();
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> files,
                         ListFilesRecursive(env_, out_));
  bool removed = false;
  for (const std::string& f : files) {
    if (keep.count(f) || !IsPackOutputName(f)) continue;
    FERRY_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(out_, f)));
    removed = true;
  }
  return removed ? env_->SyncDir(out_) : Status::OK();
}

Status Packer::CheckOptions() const {
  if (o_.format == ShardFormat::kWebDataset && o_.gzip) {
    return Status::InvalidArgument("--compress gzip is for TFRecord shards");
  }
  if (o_.format == ShardFormat::kWebDataset) {
    for (const std::string& name : o_.split.names) {
      if (name.size() > kMaxWdsSplitName) {
        return Status::InvalidArgument(
            "split name '" + name + "' is " + std::to_string(name.size()) +
            " bytes; WebDataset entry names (split, sample number, "
            "extension) must fit tar's 100 bytes, so at most " +
            std::to_string(kMaxWdsSplitName));
      }
    }
  }
  return Status::OK();
}

Status Packer::Scan() {
  if (o_.list_path.empty()) {
    InputScanOptions scan;
    scan.include_hidden = o_.include_hidden;
    scan.exclude = {out_};
    scan.jobs = o_.jobs;
    FERRY_ASSIGN_OR_RETURN(TreeItems tree, ItemsFromTree(env_, src_, scan));
    items_ = std::move(tree.items);
    for (WalkProblem& p : tree.skipped)
      sum_.skipped.push_back({std::move(p.path), std::move(p.status)});
    for (WalkProblem& p : tree.failed)
      sum_.failed.push_back({std::move(p.path), std::move(p.status)});
  } else {
    FERRY_ASSIGN_OR_RETURN(items_, ItemsFromList(env_, o_.list_path));
  }
  // OUT in a bucket: its earlier assignment, if any, read from a local copy.
  if (remote()) {
    auto earlier = ReadOut(kAssignmentFile);
    if (earlier.ok()) {
      FERRY_RETURN_IF_ERROR(WriteFileAtomically(
          env_, JoinPath(stage_, kAssignmentFile), *earlier));
    } else if (!earlier.status().IsNotFound()) {
      return earlier.status();
    }
  }
  // Contents first: the records' keys, leakage and --dedup all need them.
  // An unreadable file is a failed input, like a bad image, not a stop.
  {
    std::vector<Status> errors;
    FERRY_ASSIGN_OR_RETURN(
        std::vector<Hash128> all,
        HashItemContents(env_, src_, items_, o_.jobs, &errors));
    std::vector<SplitItem> readable;
    for (size_t i = 0; i < items_.size(); ++i) {
      if (!errors[i].ok()) {
        sum_.failed.push_back({items_[i].path, errors[i]});
        continue;
      }
      hashes_.push_back(all[i]);
      readable.push_back(std::move(items_[i]));
    }
    items_ = std::move(readable);
  }
  auto earlier =
      LoadEarlierAssignment(env_, o_.split, remote() ? stage_ : out_, items_);
  if (!earlier.ok() && remote()) {
    // Named as the object it is, not as its copy here.
    std::string msg(earlier.status().message());
    const std::string copy = JoinPath(stage_, kAssignmentFile);
    const std::string there = OutPath(kAssignmentFile);
    for (size_t at; (at = msg.find(copy)) != std::string::npos;)
      msg.replace(at, copy.size(), there);
    return Status::FromCode(earlier.status().code(), msg);
  }
  FERRY_ASSIGN_OR_RETURN(earlier_, std::move(earlier));
  return Status::OK();
}

Status Packer::Assign() {
  FERRY_ASSIGN_OR_RETURN(split_,
                         AssignSplits(items_, o_.split, hashes_, earlier_));
  sum_.dropped_duplicates = split_.dropped.size();
  for (const std::string& c : split_.classes) {
    if (!c.empty()) {
      label_index_[c] = static_cast<int>(sum_.labels.size());
      sum_.labels.push_back(c);
    }
  }
  sum_.cross_split_duplicates = split_.leaks.size();
  // Record order inside a split: a seeded hash of the path (as tfds).
  orders_.assign(split_.names.size(), {});
  std::vector<uint64_t> keys(items_.size());
  for (size_t i = 0; i < items_.size(); ++i) {
    keys[i] = XXH3_64bits_withSeed(items_[i].path.data(), items_[i].path.size(),
                                   o_.split.seed ^ 0x9e3779b97f4a7c15ull);
    if (split_.assignment[i] >= 0) orders_[split_.assignment[i]].push_back(i);
  }
  for (auto& ord : orders_) {
    std::sort(ord.begin(), ord.end(), [&](size_t a, size_t b) {
      return keys[a] != keys[b] ? keys[a] < keys[b]
                                : items_[a].path < items_[b].path;
    });
  }
  fp_ = Fingerprint(items_, hashes_, split_.assignment, o_);
  return Status::OK();
}

Status Packer::Lock() {
  FERRY_RETURN_IF_ERROR(env_->CreateDirs(out_));
  auto lock = env_->LockFile(JoinPath(out_, kLockFile), /*wait=*/false);
  if (!lock.ok()) {
    return lock.status().IsUnavailable()
               ? Status::Unavailable(out_, "another ferry pack is writing here")
               : lock.status();
  }
  lock_ = std::move(lock).value();
  return Status::OK();
}

Status Packer::Finish() {
  FERRY_RETURN_IF_ERROR(RemoveStaleOutputs());
  std::string labels;
  for (const auto& l : sum_.labels) labels += l + "\n";
  FERRY_RETURN_IF_ERROR(WriteOut("labels.txt", labels));
  const std::string assignment =
      JoinPath(remote() ? stage_ : out_, kAssignmentFile);
  FERRY_RETURN_IF_ERROR(
      WriteAssignment(env_, assignment, items_, o_.split, split_));
  if (remote()) {
    FERRY_RETURN_IF_ERROR(UploadFile(kAssignmentFile, assignment).status());
    FERRY_RETURN_IF_ERROR(env_->RemoveFile(assignment));
  }
  return WriteDatasetJson();
}

Result<PackSummary> Packer::Run() {
  if (remote()) {
    return Status::InvalidArgument(
        out_,
        "a one-machine ferry pack writes a folder; into a bucket, pack "
        "with --plan, --worker and --merge");
  }
  FERRY_RETURN_IF_ERROR(CheckOptions());
  FERRY_RETURN_IF_ERROR(Scan());
  FERRY_RETURN_IF_ERROR(Assign());
  if (o_.dry_run) {
    for (size_t s = 0; s < orders_.size(); ++s) {
      sum_.splits.push_back({split_.names[s], orders_[s].size(), {}});
      sum_.records += orders_[s].size();
    }
    return sum_;
  }

  FERRY_RETURN_IF_ERROR(Lock());
  // Leftovers of a killed run: its temporary files. Earlier state is kept only
  // for the same inputs and options.
  RemoveStaleTemps(env_, out_);
  auto old = ReadFileToString(env_, JoinPath(out_, kStateFile));
  if (old.ok()) state_ = State::Parse(*old);
  if (state_.fingerprint != fp_) state_ = State{fp_, {}, {}, {}};
  (void)env_->RemoveFile(JoinPath(out_, "dataset.json"));  // rewritten last
  // A finished split's shards carry final names; give them back their
  // interim names so that one code path verifies and reuses them.
  for (const auto& [split, n] : state_.split_done) {
    for (const DoneShard& d : state_.shards) {
      if (d.split != split) continue;
      const std::string final_path =
          JoinPath(out_, ShardName(split, d.index, n, o_.format, o_.gzip));
      const std::string interim =
          JoinPath(out_, InterimName(split, d.index, o_.format, o_.gzip));
      // Shard and index each on their own: a kill may fall between them.
      if (env_->FileExists(final_path))
        (void)env_->RenameFile(final_path, interim);
      if (env_->FileExists(final_path + ".idx")) {
        (void)env_->RenameFile(final_path + ".idx", interim + ".idx");
      }
    }
  }
  state_.split_done.clear();
  FERRY_RETURN_IF_ERROR(SaveState());

  if (o_.progress) o_.progress->Begin("pack", items_.size(), 0);
  for (size_t s = 0; s < orders_.size(); ++s)
    FERRY_RETURN_IF_ERROR(PackOneSplit(s, orders_[s]));
  if (o_.progress) o_.progress->End();
  FERRY_RETURN_IF_ERROR(Finish());
  return sum_;
}

// Distributed pack (docs/scale.md). Shard k of a split holds the records
// of items [k * R, (k + 1) * R) of the split's order (R = --shard-records),
// which is where a one-machine run closes its shards when no input fails
// and no shard reaches --shard-size first: so the plan fixes every shard's
// name and items, and each worker writes its shards under final names.

Status CheckDistributed(const PackOptions& o) {
  if (o.shard_records > 0) return Status::OK();
  return Status::InvalidArgument(
      "a distributed pack (--plan, --worker, --merge) needs --shard-records: "
      "where a --shard-size shard closes depends on the encoded bytes of "
      "every record before it, which a worker does not have");
}

size_t Packer::PlannedShards(size_t s) const {
  return (orders_[s].size() + o_.shard_records - 1) / o_.shard_records;
}

std::string Packer::PlannedShardName(size_t s, size_t k) const {
  return ShardName(split_.names[s], k, PlannedShards(s), o_.format, o_.gzip);
}

Status Packer::LoadPlan() {
  FERRY_RETURN_IF_ERROR(CheckOptions());
  FERRY_RETURN_IF_ERROR(CheckDistributed(o_));
  auto id = PlanId();
  auto text = id.ok() ? ReadOut(pack::kPlanFile) : id.status();
  if (!text.ok()) {
    return text.status().IsNotFound()
               ? Status::InvalidArgument(
                     out_, "no plan here: run ferry pack --plan first")
               : text.status();
  }
  FERRY_ASSIGN_OR_RETURN(pack::Plan plan, pack::ParsePlan(*text));
  planned_ = true;
  plan_id_ = *id;  // a plan replaced since the stat: CheckPlanUnchanged says so
  items_ = std::move(plan.items);
  hashes_ = std::move(plan.hashes);
  earlier_ = std::move(plan.earlier);
  sum_.skipped = std::move(plan.skipped);
  sum_.failed = std::move(plan.failed);
  FERRY_RETURN_IF_ERROR(Assign());
  if (fp_ != plan.fingerprint) {
    return Status::InvalidArgument(
        out_,
        "these options differ from the plan's: give --plan, every "
        "--worker and --merge the same options");
  }
  return Status::OK();
}

Result<std::string> Packer::PlanId() const {
  if (remote()) {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo info, remote_->Stat(pack::kPlanFile));
    return std::to_string(info.size) + " " + info.etag;
  }
  FERRY_ASSIGN_OR_RETURN(FileInfo info,
                         env_->Stat(JoinPath(out_, pack::kPlanFile)));
  return std::to_string(info.dev) + ":" + std::to_string(info.ino) + " " +
         std::to_string(info.size) + " " + std::to_string(info.mtime_ns) + " " +
         std::to_string(info.ctime_ns);
}

Status Packer::CheckPlanUnchanged() const {
  auto id = PlanId();
  if (id.ok() && *id == plan_id_) return Status::OK();
  if (!id.ok() && !id.status().IsNotFound()) return id.status();
  return Status::InvalidArgument(
      OutPath(pack::kPlanFile),
      std::string(id.ok() ? "replaced by another ferry pack --plan"
                          : "gone (OUT was merged, or planned anew)") +
          " since this worker read it: it stops, writing nothing more (its "
          "shards would be another plan's); run the workers of the plan "
          "that is there now");
}

Result<PackSummary> Packer::Plan() {
  FERRY_RETURN_IF_ERROR(CheckOptions());
  FERRY_RETURN_IF_ERROR(CheckDistributed(o_));
  if (remote()) {
    FERRY_RETURN_IF_ERROR(OpenStage(
        "plan", "a ferry pack --plan into this OUT runs on this machine"));
  }
  FERRY_RETURN_IF_ERROR(Scan());
  FERRY_RETURN_IF_ERROR(Assign());
  if (!remote()) FERRY_RETURN_IF_ERROR(Lock());
  // The merge writes dataset.json; one of a finished pack of these very
  // inputs and options stays true meanwhile (the workers write the same
  // bytes), any other goes now.
  auto done = ReadOut(kStateFile);
  const State st = done.ok() ? State::Parse(*done) : State();
  if (st.fingerprint != fp_ || st.split_done.empty()) {
    Status gone = RemoveOut("dataset.json");
    if (remote()) FERRY_RETURN_IF_ERROR(gone);  // a bucket says OK if none
  }
  pack::Plan plan{fp_, items_, hashes_, earlier_, sum_.skipped, sum_.failed};
  FERRY_RETURN_IF_ERROR(WriteOut(pack::kPlanFile, pack::SerializePlan(plan)));
  if (remote()) FERRY_RETURN_IF_ERROR(RemoveStage());
  for (size_t s = 0; s < orders_.size(); ++s) {
    PackSplit sp{split_.names[s], orders_[s].size(), {}};
    for (size_t k = 0; k < PlannedShards(s); ++k) {
      const uint64_t begin = k * o_.shard_records;
      sp.shards.push_back(
          {PlannedShardName(s, k),
           std::min<uint64_t>(o_.shard_records, orders_[s].size() - begin),
           0,
           {}});
    }
    sum_.records += sp.records;
    sum_.splits.push_back(std::move(sp));
  }
  return sum_;
}

Result<DoneShard> Packer::WriteShard(size_t s, size_t k, const std::string& dir,
                                     std::vector<Failed>* failed) {
  const std::string& name = split_.names[s];
  const std::vector<size_t>& order = orders_[s];
  const uint64_t begin = k * o_.shard_records;
  const uint64_t end =
      std::min<uint64_t>(begin + o_.shard_records, order.size());
  const std::string shard_name = PlannedShardName(s, k);
  FERRY_ASSIGN_OR_RETURN(
      std::unique_ptr<pack::ShardWriter> shard,
      pack::ShardWriter::Open(env_, JoinPath(dir, shard_name), o_.format,
                              o_.gzip));
  uint64_t record = begin;
  Status st;
  core::OrderedParallelMap<Record>(
      end - begin, o_.jobs, [&](size_t j) { return Build(order[begin + j]); },
      [&](size_t j, Record r) {
        if (!st.ok()) return;
        if (o_.progress) o_.progress->Advance(1, r.input_bytes);
        if (!r.error.ok()) {
          const std::string& path = items_[order[begin + j]].path;
          failed->push_back({name, begin + j, path, r.error});
          return;
        }
        if (shard->records() > 0 && shard->logical_bytes() >= o_.shard_bytes) {
          st = Status::InvalidArgument(
              shard_name,
              "reached --shard-size (" + std::to_string(o_.shard_bytes) +
                  " bytes) before its " + std::to_string(o_.shard_records) +
                  " records: a one-machine run would close it there; give a "
                  "smaller --shard-records or a larger --shard-size (the same "
                  "to --plan, every --worker and --merge)");
          return;
        }
        st = AddRecord(shard.get(), name, record++, r);
      });
  FERRY_RETURN_IF_ERROR(st);
  // Into a local OUT the commit is the write; a bucket's is the upload.
  FERRY_RETURN_IF_ERROR(shard->Finish(remote() ? std::function<Status()>()
                                               : std::function<Status()>([&] {
                                                   return CheckPlanUnchanged();
                                                 })));
  return DoneShard{name,
                   k,
                   end,
                   record,
                   shard->records(),
                   shard->file_bytes(),
                   shard->xxh3(),
                   shard->index_xxh3(),
                   shard->md5_hex()};
}

// Worker I of N writes the planned shards [I * G / N, (I + 1) * G / N) of
// all G (splits in order) and lists each finished one in its own file, so
// a rerun keeps those that still verify.
Result<PackSummary> Packer::Work(int worker, int workers) {
  FERRY_RETURN_IF_ERROR(LoadPlan());
  sum_.skipped.clear();  // the plan and the merge report these
  sum_.failed.clear();
  const std::string who =
      std::to_string(worker) + "-of-" + std::to_string(workers);
  const std::string mine = std::string(pack::kWorkerFilePrefix) + who;
  const std::string busy = "worker " + std::to_string(worker) + "/" +
                           std::to_string(workers) + " runs already";
  std::unique_ptr<FileLock> lock;
  if (remote()) {
    // Its shards are written here, then uploaded; the lock is this folder's.
    FERRY_RETURN_IF_ERROR(
        OpenStage("worker-" + who, busy + " on this machine"));
  } else {
    auto held = env_->LockFile(JoinPath(out_, mine + ".lock"), /*wait=*/false);
    if (!held.ok()) {
      return held.status().IsUnavailable()
                 ? Status::Unavailable(JoinPath(out_, mine),
                                       busy +
                                           " (another process holds its "
                                           "lock)")
                 : held.status();
    }
    lock = std::move(held).value();
  }
  auto old = ReadOut(mine);
  // A bucket that does not answer now is not one without the file.
  if (remote() && !old.ok() && !old.status().IsNotFound()) return old.status();
  if (old.ok()) state_ = State::Parse(*old);
  if (state_.fingerprint != fp_) state_ = State{fp_, {}, {}, {}};
  std::vector<std::pair<size_t, size_t>> all;
  for (size_t s = 0; s < orders_.size(); ++s) {
    for (size_t k = 0; k < PlannedShards(s); ++k) all.emplace_back(s, k);
  }
  const size_t first = all.size() * worker / workers;
  const size_t last = all.size() * (worker + 1) / workers;
  if (o_.progress) {
    uint64_t n = 0;
    for (size_t g = first; g < last; ++g) {
      const auto [s, k] = all[g];
      n += std::min<uint64_t>(o_.shard_records,
                              orders_[s].size() - k * o_.shard_records);
    }
    o_.progress->Begin("pack", n, 0);
  }
  for (size_t g = first; g < last; ++g) {
    const auto [s, k] = all[g];
    const std::string& name = split_.names[s];
    const uint64_t begin = k * o_.shard_records, end = begin + o_.shard_records;
    auto in_shard = [&](const Failed& f) {
      return f.split == name && f.item_pos >= begin && f.item_pos < end;
    };
    auto done = std::find_if(
        state_.shards.begin(), state_.shards.end(),
        [&](const DoneShard& d) { return d.split == name && d.index == k; });
    if (done != state_.shards.end() &&
        ShardVerified(PlannedShardName(s, k), *done)) {
      ++sum_.reused_shards;
      sum_.records += done->records;
      for (const Failed& f : state_.failed) {
        if (in_shard(f)) sum_.failed.push_back({f.input, f.error});
      }
      if (o_.progress) o_.progress->Advance(done->next_item - begin, 0);
      continue;
    }
    if (done != state_.shards.end()) state_.shards.erase(done);
    std::erase_if(state_.failed, in_shard);
    std::vector<Failed> failed;
    FERRY_ASSIGN_OR_RETURN(DoneShard d,
                           WriteShard(s, k, remote() ? stage_ : out_, &failed));
    if (remote()) {
      FERRY_RETURN_IF_ERROR(CheckPlanUnchanged());
      FERRY_RETURN_IF_ERROR(Upload(PlannedShardName(s, k), &d));
    } else if (o_.after_worker_write) {
      o_.after_worker_write();
    }
    sum_.records += d.records;
    state_.shards.push_back(d);
    for (Failed& f : failed) {
      sum_.failed.push_back({f.input, f.error});
      state_.failed.push_back(std::move(f));
    }
    FERRY_RETURN_IF_ERROR(CheckPlanUnchanged());
    FERRY_RETURN_IF_ERROR(WriteOut(mine, state_.Serialize()));
    if (!remote() && o_.after_worker_write) o_.after_worker_write();
  }
  if (o_.progress) o_.progress->End();
  if (remote()) FERRY_RETURN_IF_ERROR(RemoveStage());
  for (size_t s = 0; s < orders_.size(); ++s) {
    PackSplit sp{split_.names[s], 0, {}};
    for (size_t g = first; g < last; ++g) {
      if (all[g].first != s) continue;
      for (const DoneShard& d : state_.shards) {
        if (d.split != sp.name || d.index != all[g].second) continue;
        sp.shards.push_back(
            {PlannedShardName(s, d.index), d.records, d.bytes, d.xxh3});
        sp.records += d.records;
      }
    }
    sum_.splits.push_back(std::move(sp));
  }
  return sum_;
}

// Every planned shard must be listed by a worker and verify (size and
// XXH3-128 of shard and index); then the merge writes what a one-machine
// run writes after its shards, state file included, and removes the plan
// and the workers' files.
Result<PackSummary> Packer::Merge() {
  if (!OutExists(pack::kPlanFile) && OutExists("dataset.json")) {
    // A merged (or one-machine) OUT: its state lists every finished split.
    FERRY_RETURN_IF_ERROR(CheckOptions());
    FERRY_RETURN_IF_ERROR(CheckDistributed(o_));
    auto text = ReadOut(kStateFile);
    const State st = text.ok() ? State::Parse(*text) : State();
    if (!st.split_done.empty()) {
      // Without the inputs (no plan) only the options can be compared.
      auto json = ReadOut("dataset.json");
      if (!json.ok()) return json.status();
      if (json->find(OptionsJson()) == std::string::npos) {
        return Status::InvalidArgument(
            out_,
            "merged already with other options (its dataset.json's): give "
            "--merge the options of the plan, or --plan again");
      }
      for (const DoneShard& d : st.shards) sum_.records += d.records;
      sum_.merged_already = true;
      return sum_;
    }
  }
  FERRY_RETURN_IF_ERROR(LoadPlan());
  std::vector<std::string> worker_files;
  if (remote()) {
    FERRY_RETURN_IF_ERROR(OpenStage(
        "merge", "a ferry pack --merge into this OUT runs on this machine"));
    FERRY_RETURN_IF_ERROR(remote_->List(
        pack::kWorkerFilePrefix, ListOptions{}, [&](const ObjectInfo& obj) {
          if (!obj.is_prefix && obj.key.find('/') == std::string::npos)
            worker_files.push_back(obj.key);
          return Status::OK();
        }));
  } else {
    FERRY_RETURN_IF_ERROR(Lock());
    FERRY_ASSIGN_OR_RETURN(std::vector<DirEntry> children,
                           env_->GetChildren(out_));
    for (const DirEntry& e : children) {
      if (e.name.rfind(pack::kWorkerFilePrefix, 0) == 0)
        worker_files.push_back(e.name);
    }
  }
  std::vector<State> receipts;
  for (const std::string& name : worker_files) {
    if (name.size() > 5 && name.substr(name.size() - 5) == ".lock") continue;
    auto text = ReadOut(name);
    if (!text.ok()) return text.status();
    State st = State::Parse(*text);
    if (st.fingerprint == fp_) receipts.push_back(std::move(st));
  }
  std::sort(worker_files.begin(), worker_files.end());
  state_ = State{fp_, {}, {}, {}};
  // Each planned shard's first listing that verifies, read on -j threads.
  struct Check {
    size_t s = 0, k = 0;
    const DoneShard* found = nullptr;
    const State* from = nullptr;
    bool listed = false;
  };
  std::vector<Check> checks;
  for (size_t s = 0; s < orders_.size(); ++s) {
    for (size_t k = 0; k < PlannedShards(s); ++k) checks.push_back({s, k});
  }
  core::OrderedParallelMap<int>(
      checks.size(), o_.jobs,
      [&](size_t g) {
        Check& c = checks[g];
        const std::string name = PlannedShardName(c.s, c.k);
        for (const State& r : receipts) {
          for (const DoneShard& d : r.shards) {
            if (d.split != split_.names[c.s] || d.index != c.k) continue;
            c.listed = true;
            if (ShardVerified(name, d)) {
              c.found = &d;
              c.from = &r;
              return 0;
            }
          }
        }
        return 0;
      },
      [](size_t, int) {});
  std::vector<std::vector<DoneShard>> shards(orders_.size());
  std::vector<std::string> problems;
  for (const Check& c : checks) {
    const std::string& name = split_.names[c.s];
    const std::string shard_name = PlannedShardName(c.s, c.k);
    if (!c.found) {
      const bool there = OutExists(shard_name);
      const char* checked = !remote() || o_.verify_remote ? "XXH3-128" : "ETag";
      problems.push_back(
          shard_name +
          (!c.listed ? std::string(" (missing: no worker finished it)")
           : there   ? std::string(" (damaged: its size or ") + checked +
                         ", or its index's, differs from what its worker "
                         "wrote)"
                   : std::string(" (missing: its worker wrote it, but it "
                                 "is gone)")));
      continue;
    }
    DoneShard d = *c.found;
    d.etag.clear();  // the merged state is a one-machine run's
    d.idx_etag.clear();
    d.idx_bytes = 0;
    shards[c.s].push_back(std::move(d));
    const uint64_t begin = c.k * o_.shard_records;
    for (const Failed& f : c.from->failed) {
      if (f.split == name && f.item_pos >= begin &&
          f.item_pos < begin + o_.shard_records) {
        state_.failed.push_back(f);
      }
    }
  }
  const size_t planned = checks.size();
  if (!problems.empty()) {
    std::string list;
    for (size_t i = 0; i < problems.size() && i < 20; ++i)
      list += (i ? "; " : "") + problems[i];
    if (problems.size() > 20) list += "; ...";
    return Status::Corruption(
        out_, std::to_string(problems.size()) + " of " +
                  std::to_string(planned) +
                  " planned shards are not there intact (rerun their "
                  "workers, then --merge again): " +
                  list);
  }
  // Only now: every worker is done, so no temporary file here is a running
  // one's (a worker's pid means nothing on another node).
  if (!remote()) RemoveStaleTemps(env_, out_);
  std::sort(state_.failed.begin(), state_.failed.end(),
            [&](const Failed& a, const Failed& b) {
              auto idx = [&](const std::string& n) {
                return std::find(split_.names.begin(), split_.names.end(), n) -
                       split_.names.begin();
              };
              return std::make_pair(idx(a.split), a.item_pos) <
                     std::make_pair(idx(b.split), b.item_pos);
            });
  for (const Failed& f : state_.failed)
    sum_.failed.push_back({f.input, f.error});
  for (size_t s = 0; s < orders_.size(); ++s) {
    state_.shards.insert(state_.shards.end(), shards[s].begin(),
                         shards[s].end());
  }
  for (size_t s = 0; s < orders_.size(); ++s)
    FERRY_RETURN_IF_ERROR(FinishSplit(s, shards[s], /*rename=*/false));
  FERRY_RETURN_IF_ERROR(Finish());
  // The plan first: a merge killed before the worker files are gone finds
  // OUT merged already (a kill the other way round would leave a plan
  // whose shards no worker lists).
  FERRY_RETURN_IF_ERROR(RemoveOut(pack::kPlanFile));
  for (const std::string& f : worker_files) FERRY_RETURN_IF_ERROR(RemoveOut(f));
  FERRY_RETURN_IF_ERROR(remote() ? RemoveStage() : env_->SyncDir(out_));
  return sum_;
}

}  // namespace

std::string ShardName(const std::string& split, size_t index, size_t count,
                      ShardFormat format, bool gzip) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "-%05zu-of-%05zu", index, count);
  return split + buf + Ext(format, gzip);
}

Result<PackSummary> Pack(const std::string& src, const std::string& out,
                         const PackOptions& options) {
  Packer p(src, out, options);
  return p.Run();
}

Result<PackSummary> PackPlan(const std::string& src, const std::string& out,
                             const PackOptions& options) {
  Packer p(src, out, options);
  return p.Plan();
}

Result<PackSummary> PackWorker(const std::string& src, const std::string& out,
                               const PackOptions& options, int worker,
                               int workers) {
  if (workers < 1 || worker < 0 || worker >= workers) {
    return Status::InvalidArgument("--worker wants I/N with 0 <= I < N, got " +
                                   std::to_string(worker) + "/" +
                                   std::to_string(workers));
  }
  Packer p(src, out, options);
  return p.Work(worker, workers);
}

Result<PackSummary> PackMerge(const std::string& src, const std::string& out,
                              const PackOptions& options) {
  Packer p(src, out, options);
  return p.Merge();
}

}  // namespace ferry
