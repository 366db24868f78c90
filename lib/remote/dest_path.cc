// Where listed keys go in a local folder (KeyPath, IsFolderMarker,
// FindDestClashes in ferry/transfer.h): a hostile or odd listing never
// writes outside the folder nor two objects onto one path.
#include <map>
#include <set>

#include "ferry/transfer.h"

namespace ferry {

Result<std::string> KeyPath(std::string_view dst, std::string_view key) {
  auto bad = [&](const char* why) {
    return Status::InvalidArgument("not a file name below " + std::string(dst),
                                   why);
  };
  if (key.empty()) return bad("empty key");
  if (key.find('\0') != std::string_view::npos) return bad("contains a NUL");
  if (key.front() == '/') return bad("starts with '/'");
  for (size_t start = 0; start <= key.size();) {
    size_t end = key.find('/', start);
    if (end == std::string_view::npos) end = key.size();
    std::string_view part = key.substr(start, end - start);
    if (part.empty()) return bad("has an empty segment ('//' or a final '/')");
    if (part == "." || part == "..") return bad("has a '.' or '..' segment");
    start = end + 1;
  }
  return JoinPath(dst, key);
}

bool IsFolderMarker(const ObjectInfo& info) {
  return info.size == 0 && (info.key.empty() || info.key.back() == '/');
}

std::vector<std::pair<size_t, Status>> FindDestClashes(
    const std::vector<GetItem>& items) {
  std::map<std::string_view, std::vector<size_t>> by_dest;
  for (size_t i = 0; i < items.size(); ++i) by_dest[items[i].dest].push_back(i);
  std::map<size_t, std::string> why;  // by item: the first clash found
  auto clash = [&](size_t i, const std::string& text) { why.emplace(i, text); };
  auto quoted = [&](size_t i) { return "'" + items[i].key + "'"; };
  for (const auto& [dest, idx] : by_dest) {
    for (size_t a : idx)
      for (size_t b : idx)
        if (a != b) clash(a, "goes to the same file as " + quoted(b));
    // Objects below this one: it would be a folder and a file at once.
    const std::string folder = std::string(dest) + "/";
    for (auto it = by_dest.lower_bound(folder);
         it != by_dest.end() && it->first.substr(0, folder.size()) == folder;
         ++it) {
      for (size_t below : it->second) {
        clash(below, "needs the folder " + std::string(dest) + ", which is " +
                         quoted(idx.front()));
        for (size_t a : idx) clash(a, "is also the folder of " + quoted(below));
      }
    }
    // Another object's working files (DEST.ferry-part, its journal).
    for (const char* suffix : {".ferry-part", ".ferry-part.journal"}) {
      auto it = by_dest.find(std::string(dest) + suffix);
      if (it == by_dest.end()) continue;
      for (size_t other : it->second) {
        clash(other,
              "is the name of the download file of " + quoted(idx.front()));
        for (size_t a : idx) clash(a, "downloads into " + quoted(other));
      }
    }
  }
  std::vector<std::pair<size_t, Status>> out;
  for (auto& [i, text] : why)
    out.emplace_back(i, Status::InvalidArgument(text));
  return out;
}

}  // namespace ferry
