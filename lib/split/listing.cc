// Reading a listing (--list): CSV with a header, or JSONL objects, into
// SplitItems. Both are read streaming, in 1 MiB chunks.
//
// CSV is read exactly as Python's csv module reads it (excel dialect, the
// file opened with newline=''): the state machine below is a port of
// CPython's Modules/_csv.c parse_process_char. A '"' inside an unquoted
// field is an ordinary character; after a closing quote, characters up to
// the next comma are kept; a quoted field may span lines. Two deliberate
// differences: a quote still open at the end of the file is an error (as
// with strict=True), and a field longer than Python's field_size_limit
// (131072) is an error too. libcsv was not used: it trims spaces around
// fields and keeps '"ab"c' as 'ab"c,...' up to the next quote, unlike Python.
//
// JSONL lines go through ParseJson (simdjson): numbers keep their text.
//
// A UTF-8 byte order mark at the start is skipped. Header names are compared
// without surrounding spaces ("path, label"). The whole listing is refused
// (InvalidArgument, with file:line) when any line is malformed, a path is
// empty, holds a line break or NUL (the split lists are one path a line), or
// is listed twice.
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "ferry/json.h"
#include "ferry/split.h"

namespace ferry {
namespace {

// Bytes of a file in 1 MiB chunks. A read error ends the stream; status()
// keeps it.
class ByteReader {
 public:
  // size: the file's size if known (a regular file), else 0.
  ByteReader(std::unique_ptr<SequentialFile> f, uint64_t size)
      : f_(std::move(f)), buf_(1 << 20, '\0'), size_(size) {}
  // The next byte, or -1 at the end.
  int Get() {
    if (pos_ == len_ && !Fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_++]);
  }
  int Peek() {
    if (pos_ == len_ && !Fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  // The bytes up to the next '\n' (not included); false at the end.
  bool ReadLine(std::string* line) {
    line->clear();
    for (;;) {
      if (pos_ == len_ && !Fill()) return !line->empty();
      const char* start = buf_.data() + pos_;
      const char* nl =
          static_cast<const char*>(std::memchr(start, '\n', len_ - pos_));
      if (nl) {
        line->append(start, nl - start);
        pos_ += nl - start + 1;
        return true;
      }
      line->append(start, len_ - pos_);
      pos_ = len_;
    }
  }
  // The bytes read but not consumed yet (maybe none); Skip(n) consumes n.
  std::string_view Buffered() const {
    return std::string_view(buf_.data() + pos_, len_ - pos_);
  }
  void Skip(size_t n) { pos_ += n; }
  // Skips `prefix` if the stream continues with it (checked in the first
  // chunk only: this is for byte order marks).
  bool ConsumePrefix(std::string_view prefix) {
    Peek();
    if (len_ - pos_ < prefix.size() ||
        std::memcmp(buf_.data() + pos_, prefix.data(), prefix.size()) != 0)
      return false;
    pos_ += prefix.size();
    return true;
  }
  const Status& status() const { return status_; }
  uint64_t size() const { return size_; }
  uint64_t consumed() const { return read_ - (len_ - pos_); }

 private:
  bool Fill() {
    if (eof_) return false;
    std::string_view got;
    status_ = f_->Read(buf_.size(), &got, buf_.data());
    if (!status_.ok() || got.empty()) {
      eof_ = true;
      return false;
    }
    if (got.data() != buf_.data())
      std::memmove(buf_.data(), got.data(), got.size());
    pos_ = 0;
    len_ = got.size();
    read_ += len_;
    return true;
  }

  std::unique_ptr<SequentialFile> f_;
  std::string buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t size_ = 0, read_ = 0;
  bool eof_ = false;
  Status status_;
};

// CSV records as Python's csv.reader yields them (blank lines skipped).
class CsvReader {
 public:
  // first_line: the line number of the next byte.
  CsvReader(ByteReader* in, uint64_t first_line)
      : in_(in), line_(first_line - 1) {}

  // The next record into *fields; false at the end. record_line() is the
  // line it started on.
  Result<bool> Next(std::vector<std::string>* fields) {
    fields_ = fields;
    fields_->clear();
    field_.clear();
    state_ = kStartRecord;
    record_line_ = line_ + 1;
    for (;;) {
      // Fast path: a run of ordinary bytes inside a field, in one append.
      if (state_ == kInField || state_ == kInQuotedField) {
        const std::string_view run = in_->Buffered();
        const bool quoted = state_ == kInQuotedField;
        size_t n = 0;
        while (n < run.size() && !IsSpecial(run[n], quoted)) ++n;
        if (n > 0) {
          field_.append(run.data(), n);
          in_->Skip(n);
          line_open_ = true;
          if (field_.size() > kFieldLimit) return FieldTooLong();
          continue;
        }
      }
      const int c = in_->Get();
      if (c < 0) {
        FERRY_RETURN_IF_ERROR(in_->status());
        if (line_open_) Step(kEol);
        if (state_ != kStartRecord) {
          return Status::InvalidArgument(
              "line " + std::to_string(record_line_) +
              ": a quoted field is not closed before the end of the file");
        }
        return !fields_->empty();
      }
      line_open_ = true;
      Step(c);
      if (c == '\r' && in_->Peek() == '\n') Step(in_->Get());
      if (c == '\r' || c == '\n') {
        ++line_;
        line_open_ = false;
        Step(kEol);
        if (state_ == kStartRecord) {
          if (!fields_->empty()) return true;
          record_line_ = line_ + 1;  // a blank line: no record
        }
      }
      if (field_.size() > kFieldLimit) return FieldTooLong();
    }
  }
  uint64_t record_line() const { return record_line_; }

 private:
  static constexpr int kEol = -2;  // the end of a physical line
  static constexpr size_t kFieldLimit = 131072;
  enum State {
    kStartRecord,
    kStartField,
    kInField,
    kInQuotedField,
    kQuoteInQuotedField,
    kEatCrnl
  };

  // Bytes that end or change a field's state (in a quoted field, a comma
  // is data).
  static bool IsSpecial(char c, bool quoted) {
    return c == '"' || c == '\n' || c == '\r' || (c == ',' && !quoted);
  }
  Status FieldTooLong() const {
    return Status::InvalidArgument(
        "line " + std::to_string(record_line_) +
        ": a field is longer than 131072 bytes (an unbalanced quote?)");
  }

  void Save() {
    fields_->push_back(std::move(field_));
    field_.clear();
  }
  // After a field ends at a line break or EOL.
  void EndLine(int c) {
    Save();
    state_ = c == kEol ? kStartRecord : kEatCrnl;
  }
  static bool IsBreak(int c) { return c == '\n' || c == '\r' || c == kEol; }

  void Step(int c) {
    switch (state_) {
      case kStartRecord:
        if (c == kEol) return;  // blank line
        if (c == '\n' || c == '\r') {
          state_ = kEatCrnl;
          return;
        }
        state_ = kStartField;
        [[fallthrough]];
      case kStartField:
        if (IsBreak(c)) {
          EndLine(c);
        } else if (c == '"') {
          state_ = kInQuotedField;
        } else if (c == ',') {
          Save();
        } else {
          field_.push_back(char(c));
          state_ = kInField;
        }
        return;
      case kInField:
        if (IsBreak(c)) {
          EndLine(c);
        } else if (c == ',') {
          Save();
          state_ = kStartField;
        } else {
          field_.push_back(char(c));
        }
        return;
      case kInQuotedField:
        if (c == kEol) return;  // the line break itself was kept
        if (c == '"') {
          state_ = kQuoteInQuotedField;
        } else {
          field_.push_back(char(c));
        }
        return;
      case kQuoteInQuotedField:
        if (c == '"') {  // "" is one quote
          field_.push_back('"');
          state_ = kInQuotedField;
        } else if (c == ',') {
          Save();
          state_ = kStartField;
        } else if (IsBreak(c)) {
          EndLine(c);
        } else {  // not strict: keep the character
          field_.push_back(char(c));
          state_ = kInField;
        }
        return;
      case kEatCrnl:
        if (c == kEol) state_ = kStartRecord;
        return;
    }
  }

  ByteReader* in_;
  std::vector<std::string>* fields_ = nullptr;
  std::string field_;
  State state_ = kStartRecord;
  uint64_t line_ = 0, record_line_ = 1;
  bool line_open_ = false;
};

// Room for one more item. A vector grown by doubling holds the old and the
// new array at once: at 1.05M items 100 + 200 MB of SplitItems. With the
// file's size known, room for the count it will hold (estimated from the
// bytes the records so far took, plus 3 %) is made instead. The estimate is
// capped at 4x the items read: records that start short and grow, or a
// sparse file with a huge size, must not make it reserve gigabytes (it
// aborted with bad_alloc); each later step re-estimates from more bytes, so
// the last one is close.
void MakeRoom(const ByteReader& in, std::vector<SplitItem>* items,
              std::vector<uint64_t>* lines) {
  const uint64_t n = items->size(), used = in.consumed();
  if (n < items->capacity() || n < 4096 || in.size() <= used) return;
  uint64_t want = n + (in.size() - used) / std::max<uint64_t>(used / n, 1);
  want = std::clamp(want + want / 32, n + n / 4, 4 * n);
  items->reserve(want);
  lines->reserve(want);
}

std::string Where(const std::string& path, uint64_t line) {
  return path + ":" + std::to_string(line);
}

// Reads the CSV records after the header.
Status ReadCsv(ByteReader* in, uint64_t first_line, const std::string& path,
               std::vector<SplitItem>* items, std::vector<uint64_t>* lines) {
  CsvReader csv(in, first_line);
  std::vector<std::string> f;
  auto got = csv.Next(&f);
  if (!got.ok()) return got.status().WithContext(path);
  if (!*got) return Status::OK();  // empty
  int col[3] = {-1, -1, -1};       // path, label, group
  static const char* const kNames[3] = {"path", "label", "group"};
  for (size_t i = 0; i < f.size(); ++i) {
    std::string_view name = f[i];
    while (!name.empty() && (name.front() == ' ' || name.front() == '\t'))
      name.remove_prefix(1);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t'))
      name.remove_suffix(1);
    for (int k = 0; k < 3; ++k) {
      if (name != kNames[k]) continue;
      if (col[k] >= 0) {
        return Status::InvalidArgument(
            Where(path, csv.record_line()),
            "the header names '" + std::string(name) + "' twice");
      }
      col[k] = int(i);
    }
  }
  if (col[0] < 0) {
    return Status::InvalidArgument(
        path + ": the CSV header has no 'path' column (it has: " +
        JsonWriter::Escape(f.empty() ? "" : f[0]) +
        (f.size() > 1 ? ", ..." : "") + ")");
  }
  for (;;) {
    got = csv.Next(&f);
    if (!got.ok()) return got.status().WithContext(path);
    if (!*got) return Status::OK();
    auto get = [&](int c) {
      return c >= 0 && size_t(c) < f.size() ? std::move(f[c]) : std::string();
    };
    MakeRoom(*in, items, lines);
    items->push_back({get(col[0]), get(col[1]), get(col[2])});
    lines->push_back(csv.record_line());
  }
}

// One JSONL line: an object whose path, label and group are strings,
// numbers (kept as written), booleans or null ("").
Status ParseJsonlLine(const std::string& l, const std::string& where,
                      std::vector<SplitItem>* items) {
  auto v = ParseJson(l);
  if (!v.ok()) return Status::InvalidArgument(where, v.status().message());
  if (!v->is_object())
    return Status::InvalidArgument(where, "not a JSON object");
  SplitItem it;
  bool seen[3] = {false, false, false};
  for (const auto& [k, val] : v->members()) {
    const int slot = k == "path" ? 0 : k == "label" ? 1 : k == "group" ? 2 : -1;
    if (slot < 0) continue;
    if (seen[slot])
      return Status::InvalidArgument(where, "\"" + k + "\" given twice");
    seen[slot] = true;
    std::string text;
    switch (val.type()) {
      case JsonValue::Type::kString:
      case JsonValue::Type::kNumber:
        text = val.str();
        break;
      case JsonValue::Type::kBool:
        text = val.boolean() ? "true" : "false";
        break;
      case JsonValue::Type::kNull:
        break;
      default:
        return Status::InvalidArgument(
            where, "\"" + k + "\" must be a string or a number");
    }
    (slot == 0 ? it.path : slot == 1 ? it.label : it.group) = std::move(text);
  }
  items->push_back(std::move(it));
  return Status::OK();
}

Status ReadJsonl(ByteReader* in, uint64_t line_no, const std::string& path,
                 std::vector<SplitItem>* items, std::vector<uint64_t>* lines) {
  std::string line;
  for (; in->ReadLine(&line); ++line_no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    MakeRoom(*in, items, lines);
    FERRY_RETURN_IF_ERROR(ParseJsonlLine(line, Where(path, line_no), items));
    lines->push_back(line_no);
  }
  return in->status();
}

// One spelling per file: "./a.png", "a//b.png" and "a/./b.png" name what
// "a.png", "a/b.png" name (a leading '/' is kept). False for a path with a
// ".." part: it could leave the root.
bool NormalisePath(std::string* path) {
  // Most paths are spelled so already: keep them (no copy of every path).
  const std::string_view p = *path;
  for (size_t pos = !p.empty() && p[0] == '/' ? 1 : 0;;) {
    const size_t end = std::min(p.find('/', pos), p.size());
    const std::string_view part = p.substr(pos, end - pos);
    if (part.empty() || part == "." || part == "..") break;
    if (end == p.size()) return true;
    pos = end + 1;
  }
  std::string out;
  if (!path->empty() && (*path)[0] == '/') out.push_back('/');
  size_t pos = 0;
  while (pos <= path->size()) {
    size_t end = path->find('/', pos);
    if (end == std::string::npos) end = path->size();
    std::string_view part(path->data() + pos, end - pos);
    if (part == "..") return false;
    if (!part.empty() && part != ".") {
      if (!out.empty() && out.back() != '/') out.push_back('/');
      out.append(part);
    }
    pos = end + 1;
  }
  *path = std::move(out);
  return true;
}

// Refuses items whose path cannot be one line of a split list, and paths
// listed twice (each would be counted, and maybe placed, twice), whatever
// their spelling.
Status CheckPaths(const std::string& path, std::vector<SplitItem>& items,
                  const std::vector<uint64_t>& lines) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string& p = items[i].path;
    const bool inside = NormalisePath(&p);
    const char* why =
        !inside     ? "a path with a '..' part"
        : p.empty() ? "empty path"
        : p.find_first_of(std::string_view("\n\r\0", 3)) != std::string::npos
            ? "a path with a line break or NUL"
            : nullptr;
    if (why) {
      problems.push_back(Where(path, lines[i]) + ": " + why + " " +
                         JsonWriter::Escape(p));
    }
  }
  // Duplicates: sort (XXH3-64 of the path, index) pairs, compare the paths
  // only where hashes are equal; much faster than sorting the strings.
  std::vector<std::pair<uint64_t, uint32_t>> keys(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    keys[i] = {XXH3_64bits(items[i].path.data(), items[i].path.size()),
               uint32_t(i)};
  std::sort(keys.begin(), keys.end());
  for (size_t k = 0; k < keys.size(); ++k) {
    for (size_t m = k + 1; m < keys.size() && keys[m].first == keys[k].first;
         ++m) {
      const SplitItem& a = items[keys[k].second];
      const SplitItem& b = items[keys[m].second];
      if (a.path != b.path || a.path.empty()) continue;
      problems.push_back(Where(path, lines[keys[m].second]) + ": path " +
                         JsonWriter::Escape(b.path) +
                         " is listed twice (also on line " +
                         std::to_string(lines[keys[k].second]) + ")");
      break;  // each later copy is reported against its previous one
    }
  }
  if (problems.empty()) return Status::OK();
  std::sort(problems.begin(), problems.end());  // file:line order, mostly
  std::string msg = problems[0];
  constexpr size_t kShown = 10;
  for (size_t k = 1; k < problems.size() && k < kShown; ++k)
    msg += "\n  " + problems[k];
  if (problems.size() > kShown)
    msg += "\n  ... " + std::to_string(problems.size() - kShown) + " more";
  return Status::InvalidArgument("the listing is refused (" +
                                 std::to_string(problems.size()) +
                                 " bad items): " + msg);
}

}  // namespace

Result<std::vector<SplitItem>> ItemsFromList(Env* env,
                                             const std::string& list_path) {
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewSequentialFile(list_path));
  auto info = env->Stat(list_path);
  ByteReader in(std::move(file),
                info.ok() && info->type == FileType::kRegular ? info->size : 0);
  // A UTF-8 byte order mark (Excel writes one) is not part of the text.
  in.ConsumePrefix("\xEF\xBB\xBF");
  // Leading blank lines; then JSONL if the first character is '{'.
  uint64_t line = 1;
  for (int c = in.Peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r';
       c = in.Peek()) {
    in.Get();
    if (c == '\r' && in.Peek() == '\n') in.Get();
    if (c == '\n' || c == '\r') ++line;
  }
  FERRY_RETURN_IF_ERROR(in.status());  // a directory, /proc/self/mem, ...
  std::vector<SplitItem> items;
  std::vector<uint64_t> lines;
  if (in.Peek() == '{') {
    FERRY_RETURN_IF_ERROR(ReadJsonl(&in, line, list_path, &items, &lines));
  } else {
    FERRY_RETURN_IF_ERROR(ReadCsv(&in, line, list_path, &items, &lines));
  }
  FERRY_RETURN_IF_ERROR(in.status());
  FERRY_RETURN_IF_ERROR(CheckPaths(list_path, items, lines));
  return items;
}

}  // namespace ferry
