#include "remote/aws_ini.h"

#include <optional>

#include "remote/sigv4.h"

namespace ferry::remote {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

size_t IndentOf(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && IsBlank(line[n])) ++n;
  return n;
}

Status SyntaxError(std::string_view file, int line, std::string_view what) {
  return Status::InvalidArgument(std::string(file) + ":" +
                                 std::to_string(line) + ": " +
                                 std::string(what));
}

}  // namespace

Result<IniFile> ParseAwsIni(std::string_view text, std::string_view file) {
  IniFile ini;
  IniSection* section = nullptr;
  std::string* value = nullptr;  // the option a deeper line continues
  size_t value_indent = 0;
  int line_no = 0;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_no;
    std::string_view body = Trim(line);
    if (body.empty() || body[0] == '#' || body[0] == ';') continue;
    size_t indent = IndentOf(line);
    if (value != nullptr && indent > value_indent) {
      value->push_back('\n');
      value->append(body);
      continue;
    }
    value = nullptr;
    if (body[0] == '[') {
      size_t close = body.rfind(']');
      if (close == std::string_view::npos || close < 2)
        return SyntaxError(file, line_no, "malformed section header");
      std::string name(body.substr(1, close - 1));
      auto [it, inserted] = ini.try_emplace(name);
      if (!inserted)
        return SyntaxError(file, line_no, "section [" + name + "] repeated");
      section = &it->second;
      continue;
    }
    if (section == nullptr)
      return SyntaxError(file, line_no, "a setting before any [section]");
    size_t delim = body.find_first_of("=:");
    if (delim == std::string_view::npos)
      return SyntaxError(file, line_no, "expected 'name = value'");
    std::string key = AsciiLower(Trim(body.substr(0, delim)));
    if (key.empty())
      return SyntaxError(file, line_no, "a setting without a name");
    auto [it, inserted] =
        section->try_emplace(key, Trim(body.substr(delim + 1)));
    if (!inserted)
      return SyntaxError(file, line_no, "setting '" + key + "' repeated");
    value = &it->second;
    value_indent = indent;
  }
  return ini;
}

Result<IniSection> ParseAwsIniNested(std::string_view value,
                                     std::string_view file,
                                     std::string_view key) {
  IniSection nested;
  if (value.empty() || value[0] != '\n') return nested;
  while (!value.empty()) {
    size_t eol = value.find('\n');
    std::string_view line = Trim(value.substr(0, eol));
    value.remove_prefix(eol == std::string_view::npos ? value.size() : eol + 1);
    if (line.empty()) continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      return Status::InvalidArgument(std::string(file) + ": the nested '" +
                                     std::string(key) +
                                     "' settings need 'name = value' lines");
    nested[std::string(Trim(line.substr(0, eq)))] =
        std::string(Trim(line.substr(eq + 1)));
  }
  return nested;
}

}  // namespace ferry::remote
