#include "ferry/hash_list.h"

#include <algorithm>

#include "core/ordered_pipeline.h"
#include "ferry/walk.h"

namespace ferry {
namespace {

struct FileResult {
  Status status;
  Hash128 hash;
  uint64_t size = 0;
};

FileResult HashOne(Env* env, const std::string& path) {
  FileResult r;
  auto h = HashFile(env, path, &r.size);
  if (h.ok()) {
    r.hash = *h;
  } else {
    r.status = h.status();
  }
  return r;
}

// Inputs expanded to files (WalkTree, hidden files included). A walked
// entry that is not a file (FIFO, device, link to a directory) or that
// cannot be read (unreadable folder, dangling link) keeps its reason and is
// reported in order; an input that cannot be walked fails when opened.
struct Input {
  std::string path;
  Status problem;
};

std::vector<Input> ExpandInputs(Env* env,
                                const std::vector<std::string>& inputs) {
  std::vector<Input> files;
  for (const std::string& input : inputs) {
    auto info = env->Stat(input);
    if (info.ok() && (info->type == FileType::kCharDevice ||
                      info->type == FileType::kBlockDevice ||
                      info->type == FileType::kSocket)) {
      // A device never ends (/dev/zero); a FIFO is read as a pipe.
      files.push_back({input, Status::InvalidArgument(
                                  input, std::string("not a regular file (") +
                                             FileTypeName(info->type) + ")")});
      continue;
    }
    if (!info.ok() || !info->is_dir) {
      files.push_back({input, Status::OK()});
      continue;
    }
    auto walk = WalkTree(env, input);
    if (!walk.ok()) {
      files.push_back({input, walk.status()});
      continue;
    }
    std::vector<Input> all;
    for (std::string& r : walk->files)
      all.push_back({JoinPath(input, r), Status::OK()});
    for (WalkProblem& p : walk->skipped)
      all.push_back({JoinPath(input, p.path), std::move(p.status)});
    for (WalkProblem& p : walk->errors) {
      all.push_back({JoinPath(input, p.path),
                     p.status.WithContext(JoinPath(input, p.path))});
    }
    std::sort(all.begin(), all.end(),
              [](const Input& a, const Input& b) { return a.path < b.path; });
    for (Input& i : all) files.push_back(std::move(i));
  }
  return files;
}

bool IsHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
          (c >= 'A' && c <= 'F')))
      return false;
  }
  return true;
}

std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      ++i;
      out.push_back(s[i] == 'n' ? '\n' : s[i]);
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

Result<HashSummary> HashPaths(
    const std::vector<std::string>& inputs, const HashOptions& options,
    const std::function<void(const HashEntry&)>& on_entry) {
  Progress* progress = options.progress ? options.progress : NullProgress();
  std::vector<Input> files = ExpandInputs(options.env, inputs);
  HashSummary summary;
  progress->Begin("hash", files.size(), 0);
  core::OrderedParallelMap<FileResult>(
      files.size(), options.jobs,
      [&](size_t i) {
        if (!files[i].problem.ok()) return FileResult{files[i].problem, {}, 0};
        return HashOne(options.env, files[i].path);
      },
      [&](size_t i, FileResult r) {
        HashEntry e{std::move(files[i].path), r.hash, r.size,
                    std::move(r.status)};
        if (e.status.ok()) {
          ++summary.files;
          summary.bytes += e.size;
        } else if (e.status.code() == Status::Code::kNotSupported) {
          ++summary.skipped;
        } else {
          ++summary.failed;
        }
        progress->Advance(1, e.size);
        on_entry(e);
      });
  progress->End();
  return summary;
}

std::string FormatHashLine(const Hash128& hash, std::string_view path) {
  // xxhsum 0.8.1 writes backslashes as they are; only a newline forces the
  // GNU escaped form: a leading backslash, then backslash and newline escaped.
  bool escape = path.find('\n') != std::string_view::npos;
  std::string line;
  if (escape) line.push_back('\\');
  line += hash.ToHex();
  line += "  ";
  if (!escape) {
    line.append(path);
  } else {
    for (char c : path) {
      if (c == '\\') {
        line += "\\\\";
      } else if (c == '\n') {
        line += "\\n";
      } else {
        line.push_back(c);
      }
    }
  }
  line.push_back('\n');
  return line;
}

Result<HashListLine> ParseHashLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.remove_suffix(1);
  bool escaped = !line.empty() && line.front() == '\\';
  if (escaped) line.remove_prefix(1);
  auto finish = [&](std::string_view hex,
                    std::string_view path) -> Result<HashListLine> {
    if (path.empty()) return Status::InvalidArgument("hash line has no path");
    FERRY_ASSIGN_OR_RETURN(Hash128 h, Hash128::FromHex(hex));
    return HashListLine{h, escaped ? Unescape(path) : std::string(path)};
  };
  constexpr std::string_view kBsd = "XXH128 (";
  if (line.substr(0, kBsd.size()) == kBsd) {
    size_t close = line.rfind(") = ");
    if (close == std::string_view::npos || close < kBsd.size()) {
      return Status::InvalidArgument("malformed BSD-style hash line");
    }
    return finish(line.substr(close + 4),
                  line.substr(kBsd.size(), close - kBsd.size()));
  }
  if (line.size() < 35 || !IsHex(line.substr(0, 32)) || line[32] != ' ' ||
      (line[33] != ' ' && line[33] != '*')) {
    return Status::InvalidArgument("not an XXH3-128 hash line");
  }
  return finish(line.substr(0, 32), line.substr(34));
}

Result<CheckSummary> CheckHashList(
    const std::string& list_path, const HashOptions& options,
    const std::function<void(const CheckEntry&)>& on_entry,
    const std::function<void(uint64_t, std::string_view)>& on_bad_line) {
  FERRY_ASSIGN_OR_RETURN(std::string text,
                         ReadFileToString(options.env, list_path));
  CheckSummary summary;
  std::vector<HashListLine> lines;
  uint64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty() || line == "\r") continue;
    auto parsed = ParseHashLine(line);
    if (!parsed.ok()) {
      ++summary.bad_lines;
      if (on_bad_line) on_bad_line(line_no, line);
      continue;
    }
    lines.push_back(std::move(parsed).value());
  }
  text.clear();
  text.shrink_to_fit();

  Progress* progress = options.progress ? options.progress : NullProgress();
  progress->Begin("check", lines.size(), 0);
  core::OrderedParallelMap<FileResult>(
      lines.size(), options.jobs,
      [&](size_t i) {
        return HashOne(options.env,
                       options.root.empty()
                           ? lines[i].path
                           : JoinPath(options.root, lines[i].path));
      },
      [&](size_t i, FileResult r) {
        CheckEntry e;
        e.path = std::move(lines[i].path);
        e.expected = lines[i].hash;
        e.actual = r.hash;
        if (!r.status.ok()) {
          e.outcome = r.status.IsNotFound() ? CheckEntry::Outcome::kMissing
                                            : CheckEntry::Outcome::kUnreadable;
          e.detail = std::move(r.status);
          ++summary.missing;
        } else if (r.hash == lines[i].hash) {
          ++summary.ok;
        } else {
          e.outcome = CheckEntry::Outcome::kMismatch;
          ++summary.mismatched;
        }
        progress->Advance(1, r.size);
        on_entry(e);
      });
  progress->End();
  return summary;
}

}  // namespace ferry
