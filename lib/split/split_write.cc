// Writing a split's outputs as one unit, and the stored assignment
// (assignment.tsv.zst) that later runs keep.
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <regex>
#include <unordered_map>

#include "ferry/atomic_file.h"
#include "ferry/json.h"
#include "ferry/split.h"
#include "split/path_order.h"

namespace ferry {
namespace {

constexpr char kAssignmentHeader[] = "# ferry-assignment-v1";
constexpr char kSplitJson[] = "split.json";
constexpr char kRunDirMark[] = ".ferry-split-";

void AppendEscaped(std::string_view s, std::string* out) {
  const char* run = s.data();
  const char* const end = s.data() + s.size();
  for (const char* c = run; c != end; ++c) {
    if (*c != '\\' && *c != '\t' && *c != '\n') continue;
    out->append(run, c);
    out->push_back('\\');
    out->push_back(*c == '\\' ? '\\' : *c == '\t' ? 't' : 'n');
    run = c + 1;
  }
  out->append(run, end);
}

bool Unescape(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out->push_back(s[i]);
      continue;
    }
    if (++i == s.size()) return false;
    switch (s[i]) {
      case '\\':
        out->push_back('\\');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'n':
        out->push_back('\n');
        break;
      default:
        return false;
    }
  }
  return true;
}

// Calls fn for each '\n'-terminated line of f, decompressing it as a zstd
// stream first when dctx is given. A stream or file cut short is
// Corruption.
Status ForEachLine(SequentialFile* f, ZSTD_DCtx* dctx,
                   const std::function<Status(std::string_view)>& fn) {
  std::string chunk(dctx ? ZSTD_DStreamInSize() : size_t{1} << 20, '\0');
  std::string out(dctx ? ZSTD_DStreamOutSize() : 0, '\0');
  std::string pending;
  size_t frame_left = 0;
  bool any = false;
  auto lines = [&]() -> Status {
    size_t start = 0, nl;
    while ((nl = pending.find('\n', start)) != std::string::npos) {
      FERRY_RETURN_IF_ERROR(
          fn(std::string_view(pending).substr(start, nl - start)));
      start = nl + 1;
    }
    pending.erase(0, start);
    return Status::OK();
  };
  for (;;) {
    std::string_view got;
    FERRY_RETURN_IF_ERROR(f->Read(chunk.size(), &got, chunk.data()));
    if (got.empty()) break;
    any = true;
    if (!dctx) {
      pending.append(got);
      FERRY_RETURN_IF_ERROR(lines());
      continue;
    }
    ZSTD_inBuffer zin{got.data(), got.size(), 0};
    for (;;) {
      ZSTD_outBuffer zout{out.data(), out.size(), 0};
      frame_left = ZSTD_decompressStream(dctx, &zout, &zin);
      if (ZSTD_isError(frame_left))
        return Status::Corruption(ZSTD_getErrorName(frame_left));
      pending.append(out.data(), zout.pos);
      FERRY_RETURN_IF_ERROR(lines());
      // Done with this input once it is consumed and the decoder holds
      // nothing back (it filled no whole output buffer).
      if (zin.pos == zin.size && zout.pos < zout.size) break;
    }
  }
  if (dctx && (!any || frame_left != 0))
    return Status::Corruption("zstd stream cut short");
  if (!pending.empty()) {
    if (dctx) return Status::Corruption("last line cut short");
    FERRY_RETURN_IF_ERROR(fn(pending));  // a list without its last newline
  }
  return Status::OK();
}

// A zstd stream written through an AtomicFileWriter.
class ZstdWriter {
 public:
  explicit ZstdWriter(AtomicFileWriter* w)
      : w_(w), cctx_(ZSTD_createCCtx()), out_(ZSTD_CStreamOutSize(), '\0') {
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 3);
  }
  ~ZstdWriter() { ZSTD_freeCCtx(cctx_); }
  Status Write(std::string_view data, bool end) {
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    for (;;) {
      ZSTD_outBuffer out{out_.data(), out_.size(), 0};
      const size_t left = ZSTD_compressStream2(
          cctx_, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left))
        return Status::IOError("zstd", ZSTD_getErrorName(left));
      FERRY_RETURN_IF_ERROR(w_->Append(std::string_view(out_.data(), out.pos)));
      if (end ? left == 0 : in.pos == in.size) return Status::OK();
    }
  }

 private:
  AtomicFileWriter* w_;
  ZSTD_CCtx* cctx_;
  std::string out_;
};

// The item's own group as the assignment file records it.
class GroupOf {
 public:
  explicit GroupOf(const std::string& regex) {
    if (!regex.empty()) re_ = std::make_unique<std::regex>(regex);
  }
  std::string_view operator()(const SplitItem& it) {
    if (!re_) return it.group;
    std::smatch m;
    if (std::regex_search(it.path, m, *re_) && m.size() > 1 && m[1].matched) {
      capture_ = m[1].str();
      return capture_;
    }
    return std::string_view();
  }

 private:
  std::unique_ptr<std::regex> re_;
  std::string capture_;
};

// order: the items to list (not dropped), by path (PathOrder).
Status WriteAssignmentFile(Env* env, const std::string& path,
                           const std::vector<SplitItem>& items,
                           const std::vector<uint32_t>& order,
                           const SplitSpec& spec, const SplitResult& r) {
  FERRY_ASSIGN_OR_RETURN(auto w, AtomicFileWriter::Create(env, path));
  ZstdWriter z(w.get());
  GroupOf group_of(spec.group_regex);
  std::string buf = std::string(kAssignmentHeader) + "\n";
  for (uint32_t i : order) {
    AppendEscaped(items[i].path, &buf);
    buf.push_back('\t');
    buf.append(r.names[r.assignment[i]]);
    buf.push_back('\t');
    AppendEscaped(group_of(items[i]), &buf);
    buf.push_back('\n');
    if (buf.size() >= (1 << 20)) {
      FERRY_RETURN_IF_ERROR(z.Write(buf, false));
      buf.clear();
    }
  }
  FERRY_RETURN_IF_ERROR(z.Write(buf, true));
  return w->Commit();
}

std::string SplitJson(const std::vector<SplitItem>& items,
                      const SplitSpec& spec, const SplitResult& r) {
  const size_t ns = r.names.size();
  JsonWriter j;
  j.BeginObject()
      .Key("format")
      .String("ferry-split-v1")
      .Key("seed")
      .Uint(spec.seed);
  j.Key("mode").String(SplitModeName(spec.mode));
  j.Key("names").BeginArray();
  for (const auto& n : r.names) j.String(n);
  j.EndArray().Key("ratios").BeginArray();
  for (double v : spec.ratios) j.Double(v);
  j.EndArray();
  j.Key("stratify")
      .Bool(spec.stratify)
      .Key("group_by")
      .String(spec.group_regex);
  j.Key("duplicates").String(DuplicatePolicyName(spec.duplicates));
  j.Key("items").Uint(items.size() - r.dropped.size());
  j.Key("kept_from_earlier_assignment").Uint(r.kept_items);
  j.Key("assignment").String(kAssignmentFile);
  j.Key("classes").BeginArray();
  for (const auto& c : r.classes) j.String(c);
  j.EndArray().Key("splits").BeginObject();
  for (size_t s = 0; s < ns; ++s) {
    uint64_t total = 0;
    for (uint64_t c : r.counts[s]) total += c;
    j.Key(r.names[s])
        .BeginObject()
        .Key("items")
        .Uint(total)
        .Key("groups")
        .Uint(r.groups_per_split[s]);
    j.Key("per_class").BeginObject();
    for (size_t c = 0; c < r.classes.size(); ++c)
      j.Key(r.classes[c]).Uint(r.counts[s][c]);
    j.EndObject().EndObject();
  }
  j.EndObject();
  constexpr size_t kListed = 1000;  // the counts are complete
  j.Key("dropped_duplicates").Uint(r.dropped.size());
  j.Key("dropped").BeginArray();
  for (size_t k = 0; k < r.dropped.size() && k < kListed; ++k) {
    j.BeginObject()
        .Key("path")
        .String(items[r.dropped[k].item].path)
        .Key("duplicate_of")
        .String(items[r.dropped[k].kept].path)
        .EndObject();
  }
  j.EndArray();
  j.Key("leakage").BeginObject().Key("checked").Bool(r.hashed);
  j.Key("allowed").Bool(spec.duplicates == DuplicatePolicy::kAllowLeakage);
  if (!r.hashed) {
    j.Key("note").String(
        "contents were not read (--no-hash or a listing without SRC): "
        "identical files may be in two splits");
  }
  j.Key("duplicate_sets")
      .Uint(r.duplicate_sets)
      .Key("cross_split_sets")
      .Uint(r.leaks.size());
  j.Key("cross_split").BeginArray();
  for (size_t k = 0; k < r.leaks.size() && k < kListed; ++k) {
    j.BeginObject()
        .Key("xxh3_128")
        .String(r.leaks[k].hash.ToHex())
        .Key("files")
        .BeginArray();
    for (size_t i : r.leaks[k].items) {
      if (r.assignment[i] < 0) continue;
      j.BeginObject()
          .Key("path")
          .String(items[i].path)
          .Key("split")
          .String(r.names[r.assignment[i]])
          .EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndArray().EndObject().EndObject();
  return j.str();
}

Status WriteWholeFile(Env* env, const std::string& path,
                      std::string_view data) {
  FERRY_ASSIGN_OR_RETURN(auto f, env->NewWritableFile(path));
  FERRY_RETURN_IF_ERROR(f->Append(data));
  FERRY_RETURN_IF_ERROR(f->Sync());
  return f->Close();
}

// Writes every file of the split set into dir (a new, empty directory).
Status WriteSplitFiles(Env* env, const std::string& dir,
                       const std::vector<SplitItem>& items,
                       const SplitSpec& spec, const SplitResult& r) {
  // One sort serves the lists and the assignment file.
  const std::vector<uint32_t> order = split::PathOrder(items, &r.assignment);
  const size_t ns = r.names.size();
  std::vector<std::unique_ptr<WritableFile>> files(ns);
  for (size_t s = 0; s < ns; ++s) {
    FERRY_ASSIGN_OR_RETURN(
        files[s], env->NewWritableFile(JoinPath(dir, r.names[s] + ".txt")));
  }
  std::vector<std::string> bufs(ns);
  for (uint32_t i : order) {
    const size_t s = static_cast<size_t>(r.assignment[i]);
    std::string& buf = bufs[s];
    buf.append(items[i].path);
    buf.push_back('\n');
    if (buf.size() > (1 << 20)) {
      FERRY_RETURN_IF_ERROR(files[s]->Append(buf));
      buf.clear();
    }
  }
  for (size_t s = 0; s < ns; ++s) {
    FERRY_RETURN_IF_ERROR(files[s]->Append(bufs[s]));
    FERRY_RETURN_IF_ERROR(files[s]->Sync());
    FERRY_RETURN_IF_ERROR(files[s]->Close());
  }
  FERRY_RETURN_IF_ERROR(WriteAssignmentFile(env, JoinPath(dir, kAssignmentFile),
                                            items, order, spec, r));
  FERRY_RETURN_IF_ERROR(WriteWholeFile(env, JoinPath(dir, kSplitJson),
                                       SplitJson(items, spec, r)));
  return env->SyncDir(dir);
}

// Removes a directory of plain files (a run directory of ours).
void RemoveRunDir(Env* env, const std::string& dir) {
  if (auto children = env->GetChildren(dir); children.ok()) {
    for (const DirEntry& e : *children) {
      if (!e.is_dir) (void)env->RemoveFile(JoinPath(dir, e.name));
    }
  }
  (void)env->RemoveDir(dir);
}

// The names of the files an earlier split run wrote into dir.
std::vector<std::string> OwnFiles(Env* env, const std::string& dir) {
  std::vector<std::string> own = {kSplitJson, kAssignmentFile};
  auto text = ReadFileToString(env, JoinPath(dir, kSplitJson));
  if (!text.ok()) return own;
  auto j = ParseJson(*text);
  if (!j.ok() || !j->is_object()) return own;
  const JsonValue& names = (*j)["names"];
  if (!names.is_array()) return own;
  for (const JsonValue& n : names.items()) {
    if (n.is_string()) own.push_back(n.str() + ".txt");
  }
  return own;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

const char* DuplicatePolicyName(DuplicatePolicy p) {
  switch (p) {
    case DuplicatePolicy::kDrop:
      return "drop";
    case DuplicatePolicy::kAllowLeakage:
      return "allow-leakage";
    case DuplicatePolicy::kTogether:
      break;
  }
  return "together";
}

Status WriteAssignment(Env* env, const std::string& path,
                       const std::vector<SplitItem>& items,
                       const SplitSpec& spec, const SplitResult& result) {
  return WriteAssignmentFile(env, path, items,
                             split::PathOrder(items, &result.assignment), spec,
                             result);
}

Result<PreviousAssignment> ReadPreviousAssignment(
    Env* env, const std::string& where, const std::vector<SplitItem>& items,
    const std::vector<std::string>& names) {
  FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(where));
  std::string file = where;
  if (info.is_dir) {
    file = JoinPath(where, kAssignmentFile);
  } else if (where.size() >= 5 &&
             where.compare(where.size() - 5, 5, ".json") == 0) {
    file = JoinPath(DirName(where), kAssignmentFile);  // split/dataset.json
  }
  // A split made before the assignment file existed: its lists.
  const std::string legacy_json = JoinPath(DirName(file), kSplitJson);
  const bool legacy = !env->FileExists(file) && env->FileExists(legacy_json);
  if (!env->FileExists(file) && !legacy) {
    return Status::NotFound(where, std::string("no ") + kAssignmentFile +
                                       " (an earlier assignment) there");
  }
  PreviousAssignment prev;
  prev.split.assign(items.size(), -1);
  const std::vector<uint32_t> index = split::PathOrder(items);
  std::unordered_map<std::string, int> split_index;
  for (size_t s = 0; s < names.size(); ++s)
    split_index[names[s]] = static_cast<int>(s);
  // The file lists paths in order, so each is found by walking on from the
  // last one (a binary search when a path comes out of order: a list of a
  // split made before the assignment file, or a file edited by hand).
  auto cursor = index.begin();
  std::string last;
  auto place = [&](const std::string& path, std::string_view split) {
    ++prev.listed;
    if (path < last) cursor = index.begin();
    last = path;
    auto less = [&](uint32_t i, const std::string& p) {
      return items[i].path < p;
    };
    // A few steps on, else a binary search in the rest.
    auto it = cursor;
    for (int k = 0; k < 8 && it != index.end() && less(*it, path); ++k) ++it;
    if (it != index.end() && less(*it, path))
      it = std::lower_bound(it, index.end(), path, less);
    cursor = it;
    if (it == index.end() || items[*it].path != path) return;
    ++prev.found;
    auto s = split_index.find(std::string(split));
    if (s == split_index.end()) {
      ++prev.unknown_split;
      return;
    }
    // A path listed twice in a listing: every copy keeps the split.
    for (; it != index.end() && items[*it].path == path; ++it)
      prev.split[*it] = s->second;
  };

  if (legacy) {
    FERRY_ASSIGN_OR_RETURN(std::string text,
                           ReadFileToString(env, legacy_json));
    FERRY_ASSIGN_OR_RETURN(JsonValue j, ParseJson(text));
    if (!j.is_object() || !j["names"].is_array())
      return Status::Corruption(legacy_json, "no \"names\"");
    std::string path;
    for (const JsonValue& n : j["names"].items()) {
      auto in =
          env->NewSequentialFile(JoinPath(DirName(file), n.str() + ".txt"));
      if (!in.ok() && in.status().IsNotFound()) continue;  // an empty split
      FERRY_RETURN_IF_ERROR(in.status());
      FERRY_RETURN_IF_ERROR(
          ForEachLine((*in).get(), nullptr, [&](std::string_view line) {
            path.assign(line);
            place(path, n.str());
            return Status::OK();
          }));
    }
    return prev;
  }

  uint64_t line_no = 0;
  std::string path;
  auto bad = [&](const std::string& why) {
    return Status::Corruption(file + ": line " + std::to_string(line_no), why);
  };
  FERRY_ASSIGN_OR_RETURN(auto in, env->NewSequentialFile(file));
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> own_dctx(dctx,
                                                              ZSTD_freeDCtx);
  FERRY_RETURN_IF_ERROR(
      ForEachLine(in.get(), dctx, [&](std::string_view line) -> Status {
        ++line_no;
        if (line_no == 1) {
          return line == kAssignmentHeader ? Status::OK()
                                           : bad("not a ferry assignment file");
        }
        size_t t1 = line.find('\t');
        size_t t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
        if (t2 == std::string_view::npos ||
            line.find('\t', t2 + 1) != std::string_view::npos) {
          return bad("want path<TAB>split<TAB>group");
        }
        if (!Unescape(line.substr(0, t1), &path)) return bad("bad escape");
        place(path, line.substr(t1 + 1, t2 - t1 - 1));
        return Status::OK();
      }).WithContext(file));
  if (line_no == 0) return Status::Corruption(file, "empty");
  return prev;
}

Result<std::vector<int>> LoadEarlierAssignment(
    Env* env, const SplitSpec& spec, const std::string& out_dir,
    const std::vector<SplitItem>& items, PreviousAssignment* info) {
  if (spec.mode != SplitMode::kAuto) return std::vector<int>();
  const std::string& where = spec.previous.empty() ? out_dir : spec.previous;
  if (spec.previous.empty() &&
      !env->FileExists(JoinPath(out_dir, kAssignmentFile)) &&
      !env->FileExists(JoinPath(out_dir, kSplitJson))) {
    return std::vector<int>();
  }
  FERRY_ASSIGN_OR_RETURN(PreviousAssignment prev,
                         ReadPreviousAssignment(env, where, items, spec.names));
  std::vector<int> split = std::move(prev.split);
  if (info) *info = std::move(prev);
  return split;
}

Status WriteSplit(Env* env, const std::string& dir,
                  const std::vector<SplitItem>& items, const SplitSpec& spec,
                  const SplitResult& r) {
  std::string out = dir;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  const std::string base = BaseName(out);
  if (base.empty() || base == "." || base == "..") {
    return Status::InvalidArgument("--out " + dir,
                                   "name the output directory (not . or ..)");
  }
  const std::string parent = DirName(out);
  FERRY_RETURN_IF_ERROR(env->CreateDirs(parent));
  const bool bare = out.find('/') == std::string::npos;  // parent is "."
  auto sibling = [&](const std::string& name) {
    return bare ? name : JoinPath(parent, name);
  };
  // Run directories of killed runs, beside dir.
  const std::string mark = "." + base + kRunDirMark;
  if (auto siblings = env->GetChildren(parent); siblings.ok()) {
    for (const DirEntry& e : *siblings) {
      if (e.is_dir && e.name.compare(0, mark.size(), mark) == 0)
        RemoveRunDir(env, sibling(e.name));
    }
  }
  char id[17];
  std::snprintf(id, sizeof(id), "%016llx",
                static_cast<unsigned long long>(std::random_device{}()) << 32 ^
                    env->NowMicros());
  const std::string run = sibling(mark + id);
  FERRY_RETURN_IF_ERROR(env->CreateDir(run));
  Status s = WriteSplitFiles(env, run, items, spec, r);
  // Files in dir that are not ours are carried over (hard links).
  auto info = env->Stat(out);
  if (s.ok() && info.ok() && !info->is_dir) {
    s = Status::InvalidArgument(out, "exists and is not a directory");
  }
  if (s.ok() && info.ok()) {
    const std::vector<std::string> own = OwnFiles(env, out);
    auto children = env->GetChildren(out);
    s = children.status();
    for (size_t k = 0; s.ok() && k < children->size(); ++k) {
      const DirEntry& e = (*children)[k];
      if (std::find(own.begin(), own.end(), e.name) != own.end() ||
          IsAtomicTempName(e.name)) {
        continue;
      }
      if (e.is_dir) {
        s = Status::InvalidArgument(
            out, "holds the directory " + e.name +
                     ", which is not a ferry split output: give --out a "
                     "directory of its own");
      } else {
        s = env->LinkFile(JoinPath(out, e.name), JoinPath(run, e.name));
      }
    }
  } else if (s.ok()) {
    s = env->CreateDir(out);
  }
  if (s.ok()) {
    s = env->ExchangePaths(run, out);
    if (s.code() == Status::Code::kNotSupported) {
      // No atomic exchange here: publish file by file (each atomically).
      s = Status::OK();
      const std::vector<std::string> old_own = OwnFiles(env, out);
      auto fresh = env->GetChildren(run);
      s = fresh.status();
      for (size_t k = 0; s.ok() && k < fresh->size(); ++k) {
        const std::string& name = (*fresh)[k].name;
        s = env->RenameFile(JoinPath(run, name), JoinPath(out, name));
      }
      for (const std::string& name : old_own) {
        const bool stays =
            std::any_of(fresh->begin(), fresh->end(),
                        [&](const DirEntry& e) { return e.name == name; });
        if (s.ok() && !stays) (void)env->RemoveFile(JoinPath(out, name));
      }
    }
  }
  if (s.ok()) s = env->SyncDir(parent);
  RemoveRunDir(env, run);  // the earlier set, or the failed run
  return s;
}

}  // namespace ferry
