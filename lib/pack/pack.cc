#include "ferry/pack.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/ordered_pipeline.h"
#include "ferry/atomic_file.h"
#include "ferry/input.h"
#include "ferry/json.h"
#include "ferry/version.h"
#include "formats/example/image_example.h"
#include "formats/webdataset/tar.h"
#include "pack/pack_fields.h"
#include "pack/shard_writer.h"

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
};

std::string ToHex(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out.empty() ? "-" : out;
}

std::string FromHex(const std::string& h) {
  std::string out;
  if (h == "-") return out;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(char(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

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
    }
    for (const Failed& f : failed) {
      s += "failed " + f.split + " " + std::to_string(f.item_pos) + " " +
           ToHex(f.input) + " " + std::to_string(int(f.error.code())) + " " +
           ToHex(f.error.message()) + "\n";
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
      } else if (word == "failed") {
        Failed f;
        std::string in_hex, err_hex;
        int code = 0;
        in >> f.split >> f.item_pos >> in_hex >> code >> err_hex;
        if (!in || code <= 0 || code > int(Status::Code::kFailedPrecondition))
          return State();
        f.input = FromHex(in_hex);
        f.error = Status::FromCode(Status::Code(code), FromHex(err_hex));
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

struct Record {
  Status error;
  std::string example;                                     // TFRecord payload
  std::vector<std::pair<std::string, std::string>> parts;  // WebDataset
  uint64_t input_bytes = 0;
};

class Packer {
 public:
  Packer(const std::string& src, const std::string& out, const PackOptions& o)
      : src_(src), out_(out), o_(o), env_(o.env) {}

  Result<PackSummary> Run();

 private:
  Status PackOneSplit(size_t s, const std::vector<size_t>& order);
  Record Build(size_t item) const;
  Status SaveState() {
    return WriteFileAtomically(env_, JoinPath(out_, kStateFile),
                               state_.Serialize());
  }
  Status WriteDatasetJson();
  Status RemoveStaleOutputs();

  std::string src_, out_;
  const PackOptions& o_;
  Env* env_;
  std::vector<SplitItem> items_;
  std::vector<Hash128> hashes_;
  SplitResult split_;
  std::map<std::string, int> label_index_;
  State state_;
  PackSummary sum_;
};

Record Packer::Build(size_t i) const {
  Record r;
  const SplitItem& it = items_[i];
  auto data = ReadInputFile(env_, JoinPath(src_, it.path),
                            o_.transcode.decode.limits.max_file_bytes);
  if (!data.ok()) {
    r.error = data.status();
    return r;
  }
  r.input_bytes = data->size();
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

Status Packer::PackOneSplit(size_t s, const std::vector<size_t>& order) {
  const std::string& name = split_.names[s];
  PackSplit result;
  result.name = name;
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
        if (o_.format == ShardFormat::kTfRecord) {
          st = shard->AddTfRecord(r.example);
        } else {
          st = shard->AddSample(SampleKey(name, next_record), r.parts);
        }
        ++next_record;
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
    FERRY_RETURN_IF_ERROR(env_->RenameFile(from, to));
    if (!o_.gzip)
      FERRY_RETURN_IF_ERROR(env_->RenameFile(from + ".idx", to + ".idx"));
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
  FERRY_RETURN_IF_ERROR(env_->SyncDir(out_));
  // No wids index for an empty split: wids refuses an empty shard list.
  if (o_.format == ShardFormat::kWebDataset && n > 0) {
    FERRY_RETURN_IF_ERROR(WriteFileAtomically(
        env_, JoinPath(out_, name + ".wids.json"), wids.str()));
  }
  state_.split_done[name] = n;
  FERRY_RETURN_IF_ERROR(SaveState());
  sum_.records += result.records;
  sum_.splits.push_back(std::move(result));
  return Status::OK();
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
  j.Key("options").BeginObject();
  core::OptionsJson options(&j);
  pack::VisitPackOptions(o_, options);
  j.EndObject();
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
  return WriteFileAtomically(env_, JoinPath(out_, "dataset.json"), j.str());
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

Result<PackSummary> Packer::Run() {
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
  FERRY_ASSIGN_OR_RETURN(std::vector<int> earlier,
                         LoadEarlierAssignment(env_, o_.split, out_, items_));
  FERRY_ASSIGN_OR_RETURN(split_,
                         AssignSplits(items_, o_.split, hashes_, earlier));
  sum_.dropped_duplicates = split_.dropped.size();
  for (const std::string& c : split_.classes) {
    if (!c.empty()) {
      label_index_[c] = static_cast<int>(sum_.labels.size());
      sum_.labels.push_back(c);
    }
  }
  sum_.cross_split_duplicates = split_.leaks.size();
  // Record order inside a split: a seeded hash of the path (as tfds).
  std::vector<std::vector<size_t>> orders(split_.names.size());
  std::vector<uint64_t> keys(items_.size());
  for (size_t i = 0; i < items_.size(); ++i) {
    keys[i] = XXH3_64bits_withSeed(items_[i].path.data(), items_[i].path.size(),
                                   o_.split.seed ^ 0x9e3779b97f4a7c15ull);
    if (split_.assignment[i] >= 0) orders[split_.assignment[i]].push_back(i);
  }
  for (auto& ord : orders) {
    std::sort(ord.begin(), ord.end(), [&](size_t a, size_t b) {
      return keys[a] != keys[b] ? keys[a] < keys[b]
                                : items_[a].path < items_[b].path;
    });
  }
  if (o_.dry_run) {
    for (size_t s = 0; s < orders.size(); ++s) {
      sum_.splits.push_back({split_.names[s], orders[s].size(), {}});
      sum_.records += orders[s].size();
    }
    return sum_;
  }

  FERRY_RETURN_IF_ERROR(env_->CreateDirs(out_));
  auto lock = env_->LockFile(JoinPath(out_, kLockFile), /*wait=*/false);
  if (!lock.ok()) {
    return lock.status().IsUnavailable()
               ? Status::Unavailable(out_, "another ferry pack is writing here")
               : lock.status();
  }
  // Leftovers of a killed run: its temporary files. Earlier state is kept only
  // for the same inputs and options.
  RemoveStaleTemps(env_, out_);
  const std::string fp = Fingerprint(items_, hashes_, split_.assignment, o_);
  auto old = ReadFileToString(env_, JoinPath(out_, kStateFile));
  if (old.ok()) state_ = State::Parse(*old);
  if (state_.fingerprint != fp) state_ = State{fp, {}, {}, {}};
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
  for (size_t s = 0; s < orders.size(); ++s)
    FERRY_RETURN_IF_ERROR(PackOneSplit(s, orders[s]));
  if (o_.progress) o_.progress->End();
  FERRY_RETURN_IF_ERROR(RemoveStaleOutputs());
  std::string labels;
  for (const auto& l : sum_.labels) labels += l + "\n";
  FERRY_RETURN_IF_ERROR(
      WriteFileAtomically(env_, JoinPath(out_, "labels.txt"), labels));
  FERRY_RETURN_IF_ERROR(WriteAssignment(env_, JoinPath(out_, kAssignmentFile),
                                        items_, o_.split, split_));
  FERRY_RETURN_IF_ERROR(WriteDatasetJson());
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

}  // namespace ferry
