// Reading split inputs (a class-folder tree, or a CSV / JSONL listing) and
// writing the split files.
#include <algorithm>
#include <cstdio>

#include "core/ordered_pipeline.h"
#include "ferry/atomic_file.h"
#include "ferry/json.h"
#include "ferry/split.h"

namespace ferry {
namespace {

// One CSV record (RFC 4180 quoting) starting at *pos; advances *pos.
Status ParseCsvRecord(const std::string& text, size_t* pos,
                      std::vector<std::string>* fields, uint64_t line) {
  fields->clear();
  std::string cur;
  bool quoted = false, any = false;
  size_t i = *pos;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cur.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      fields->push_back(std::move(cur));
      cur.clear();
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      cur.push_back(c);
      any = true;
    }
  }
  if (quoted)
    return Status::InvalidArgument("line " + std::to_string(line) +
                                   ": unterminated quote");
  if (any || !fields->empty()) fields->push_back(std::move(cur));
  *pos = i + 1;
  return Status::OK();
}

// Lines of a file, read in 1 MiB chunks (a listing may be large).
class LineReader {
 public:
  explicit LineReader(std::unique_ptr<SequentialFile> f)
      : f_(std::move(f)), chunk_(1 << 20, '\0') {}
  // False at the end of the file (or on error: see status()).
  bool Next(std::string* line) {
    for (;;) {
      size_t nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        line->assign(buf_, pos_, nl - pos_);
        pos_ = nl + 1;
        ++line_no_;
        return true;
      }
      if (eof_) {
        if (pos_ >= buf_.size()) return false;
        line->assign(buf_, pos_, std::string::npos);
        pos_ = buf_.size();
        ++line_no_;
        return true;
      }
      buf_.erase(0, pos_);
      pos_ = 0;
      std::string_view got;
      status_ = f_->Read(chunk_.size(), &got, chunk_.data());
      if (!status_.ok() || got.empty()) eof_ = true;
      buf_.append(got);
    }
  }
  uint64_t line_no() const { return line_no_; }
  const Status& status() const { return status_; }

 private:
  std::unique_ptr<SequentialFile> f_;
  std::string chunk_, buf_;
  size_t pos_ = 0;
  bool eof_ = false;
  uint64_t line_no_ = 0;
  Status status_;
};

// A CSV record may span lines inside quotes.
bool NextCsvRecord(LineReader* r, std::string* rec) {
  if (!r->Next(rec)) return false;
  std::string more;
  while (std::count(rec->begin(), rec->end(), '"') % 2 == 1 && r->Next(&more)) {
    rec->push_back('\n');
    rec->append(more);
  }
  return true;
}

Status FromCsv(LineReader* r, const std::string& first_line,
               const std::string& path, std::vector<SplitItem>* items) {
  std::vector<std::string> f;
  size_t pos = 0;
  FERRY_RETURN_IF_ERROR(ParseCsvRecord(first_line, &pos, &f, 1));
  int col_path = -1, col_label = -1, col_group = -1;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == "path") col_path = int(i);
    if (f[i] == "label") col_label = int(i);
    if (f[i] == "group") col_group = int(i);
  }
  if (col_path < 0) {
    return Status::InvalidArgument(path +
                                   ": the CSV header has no 'path' column");
  }
  std::string rec;
  while (NextCsvRecord(r, &rec)) {
    pos = 0;
    FERRY_RETURN_IF_ERROR(
        ParseCsvRecord(rec, &pos, &f, r->line_no()).WithContext(path));
    if (f.empty()) continue;
    auto get = [&](int c) {
      return c >= 0 && size_t(c) < f.size() ? f[c] : std::string();
    };
    SplitItem it{get(col_path), get(col_label), get(col_group)};
    if (it.path.empty()) {
      return Status::InvalidArgument(path + ":" + std::to_string(r->line_no()) +
                                     ": empty path");
    }
    items->push_back(std::move(it));
  }
  return r->status();
}

// One JSONL line: an object of scalars; numbers come back as written
// (integers without a fraction), null as "".
Status ParseJsonlLine(const std::string& l, uint64_t line,
                      const std::string& path, std::vector<SplitItem>* items) {
  if (l.find_first_not_of(" \t\r") == std::string::npos) return Status::OK();
  const std::string where = path + ":" + std::to_string(line);
  auto v = ParseJson(l);
  if (!v.ok()) return v.status().WithContext(where);
  if (!v->is_object())
    return Status::InvalidArgument(where, "not a JSON object");
  SplitItem it;
  for (const auto& [k, val] : v->members()) {
    std::string text;
    switch (val.type()) {
      case JsonValue::Type::kString:
        text = val.str();
        break;
      case JsonValue::Type::kNumber: {
        char buf[32];
        const double d = val.number();
        if (d == static_cast<double>(static_cast<long long>(d))) {
          std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(d));
        } else {
          std::snprintf(buf, sizeof(buf), "%.17g", d);
        }
        text = buf;
        break;
      }
      case JsonValue::Type::kBool:
        text = val.boolean() ? "true" : "false";
        break;
      case JsonValue::Type::kNull:
        break;
      default:
        return Status::InvalidArgument(
            where, "\"" + k + "\" must be a string or a number");
    }
    if (k == "path") it.path = std::move(text);
    if (k == "label") it.label = std::move(text);
    if (k == "group") it.group = std::move(text);
  }
  if (it.path.empty()) return Status::InvalidArgument(where, "no \"path\"");
  items->push_back(std::move(it));
  return Status::OK();
}

}  // namespace

Result<std::vector<SplitItem>> ItemsFromTree(Env* env,
                                             const std::string& root) {
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> files,
                         ListFilesRecursive(env, root));
  std::vector<SplitItem> items;
  items.reserve(files.size());
  for (std::string& f : files) {
    if (f.empty())
      return Status::InvalidArgument(root + " is a file, not a directory");
    size_t slash = f.find('/');
    std::string label =
        slash == std::string::npos ? std::string() : f.substr(0, slash);
    items.push_back({std::move(f), std::move(label), std::string()});
  }
  return items;
}

Result<std::vector<SplitItem>> ItemsFromList(Env* env,
                                             const std::string& list_path) {
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewSequentialFile(list_path));
  LineReader r(std::move(file));
  std::vector<SplitItem> items;
  std::string line;
  while (r.Next(&line) &&
         line.find_first_not_of(" \t\r") == std::string::npos) {
  }
  if (line.find_first_not_of(" \t\r") == std::string::npos)
    return items;  // empty listing
  if (line[line.find_first_not_of(" \t\r")] == '{') {
    do {
      FERRY_RETURN_IF_ERROR(
          ParseJsonlLine(line, r.line_no(), list_path, &items));
    } while (r.Next(&line));
    FERRY_RETURN_IF_ERROR(r.status());
  } else {
    FERRY_RETURN_IF_ERROR(FromCsv(&r, line, list_path, &items));
  }
  return items;
}

Result<std::vector<Hash128>> HashItemContents(
    Env* env, const std::string& root, const std::vector<SplitItem>& items,
    int jobs, std::vector<Status>* errors) {
  std::vector<Hash128> out(items.size());
  if (errors) errors->assign(items.size(), Status::OK());
  Status first_error;
  struct R {
    Status status;
    Hash128 hash;
  };
  core::OrderedParallelMap<R>(
      items.size(), jobs,
      [&](size_t i) {
        auto h = HashFile(env, JoinPath(root, items[i].path));
        return h.ok() ? R{Status::OK(), *h} : R{h.status(), {}};
      },
      [&](size_t i, R r) {
        if (errors) {
          (*errors)[i] = std::move(r.status);
        } else if (!r.status.ok() && first_error.ok()) {
          first_error = r.status;
        }
        out[i] = r.hash;
      });
  FERRY_RETURN_IF_ERROR(first_error);
  return out;
}

Status WriteSplit(Env* env, const std::string& dir,
                  const std::vector<SplitItem>& items, const SplitSpec& spec,
                  const SplitResult& r) {
  FERRY_RETURN_IF_ERROR(env->CreateDirs(dir));
  const size_t ns = r.names.size();
  std::vector<std::vector<const std::string*>> paths(ns);
  for (size_t i = 0; i < items.size(); ++i)
    paths[r.assignment[i]].push_back(&items[i].path);
  for (size_t s = 0; s < ns; ++s) {
    std::sort(
        paths[s].begin(), paths[s].end(),
        [](const std::string* a, const std::string* b) { return *a < *b; });
    auto w = AtomicFileWriter::Create(env, JoinPath(dir, r.names[s] + ".txt"));
    FERRY_RETURN_IF_ERROR(w.status());
    std::string buf;
    for (const std::string* p : paths[s]) {
      buf.append(*p);
      buf.push_back('\n');
      if (buf.size() > (1 << 20)) {
        FERRY_RETURN_IF_ERROR((*w)->Append(buf));
        buf.clear();
      }
    }
    FERRY_RETURN_IF_ERROR((*w)->Append(buf));
    FERRY_RETURN_IF_ERROR((*w)->Commit());
  }

  JsonWriter j;
  j.BeginObject()
      .Key("format")
      .String("ferry-split-v1")
      .Key("seed")
      .Uint(spec.seed);
  j.Key("mode").String(spec.mode == SplitMode::kStable ? "stable" : "exact");
  j.Key("names").BeginArray();
  for (const auto& n : r.names) j.String(n);
  j.EndArray().Key("ratios").BeginArray();
  for (double v : spec.ratios) j.Double(v);
  j.EndArray();
  j.Key("stratify")
      .Bool(spec.stratify)
      .Key("group_by")
      .String(spec.group_regex);
  j.Key("dedup").Bool(spec.dedup).Key("items").Uint(items.size());
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
  j.Key("leakage").BeginObject().Key("checked").Bool(r.hashed);
  j.Key("duplicate_sets")
      .Uint(r.duplicate_sets)
      .Key("cross_split_sets")
      .Uint(r.leaks.size());
  j.Key("cross_split").BeginArray();
  constexpr size_t kListed = 1000;  // the count above is complete
  for (size_t k = 0; k < r.leaks.size() && k < kListed; ++k) {
    j.BeginObject()
        .Key("xxh3_128")
        .String(r.leaks[k].hash.ToHex())
        .Key("files")
        .BeginArray();
    for (size_t i : r.leaks[k].items) {
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
  return WriteFileAtomically(env, JoinPath(dir, "split.json"), j.str());
}

}  // namespace ferry
