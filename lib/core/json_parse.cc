// ParseJson on simdjson's On-Demand API: simdjson checks the structure and
// that the text is UTF-8 (without control characters inside strings); this
// file builds the JsonValue tree, keeps every number as its text, and
// decodes string escapes (DecodeJsonString) so that the "\udcXX" escapes our
// writer uses for non-UTF-8 bytes come back as those bytes.
#include <simdjson.h>

#include <charconv>
#include <cstdlib>
#include <string>

#include "ferry/json.h"

namespace ferry {
namespace {

namespace od = simdjson::ondemand;

uint32_t Hex4(std::string_view s) {  // 0x10000 when not 4 hex digits
  if (s.size() < 4) return 0x10000;
  uint32_t v = 0;
  for (int k = 0; k < 4; ++k) {
    const char c = s[k];
    const int d = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                           : -1;
    if (d < 0) return 0x10000;
    v = v * 16 + uint32_t(d);
  }
  return v;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(char(cp));
  } else if (cp < 0x800) {
    out->push_back(char(0xC0 | (cp >> 6)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(char(0xE0 | (cp >> 12)));
    out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(char(0xF0 | (cp >> 18)));
    out->push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  }
}

// RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

Status Err(const std::string& what) {
  return Status::Corruption("JSON: " + what);
}
Status Err(simdjson::error_code e) { return Err(simdjson::error_message(e)); }

// The token's text without the whitespace after it.
std::string_view Trim(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' ||
                        t.back() == '\n' || t.back() == '\r'))
    t.remove_suffix(1);
  return t;
}

// The raw text of the token, without the whitespace after it.
std::string_view Token(od::value& v) { return Trim(v.raw_json_token()); }
std::string_view Token(od::document& d) {
  std::string_view t;
  return d.raw_json_token().get(t) ? std::string_view() : Trim(t);
}

// Decodes the text between a string's quotes (escapes checked here; simdjson
// checked the UTF-8 and that no control character is left unescaped).
Status DecodeJsonString(std::string_view raw, std::string* out) {
  out->clear();
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i >= raw.size()) return Err("bad escape");
    switch (raw[i]) {
      case '"':
      case '\\':
      case '/':
        out->push_back(raw[i]);
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'u': {
        uint32_t cp = Hex4(raw.substr(i + 1));
        if (cp > 0xFFFF) return Err("bad \\u escape");
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {  // must be a surrogate pair
          const uint32_t lo =
              raw.substr(i + 1, 2) == "\\u" ? Hex4(raw.substr(i + 3)) : 0x10000;
          if (lo < 0xDC00 || lo > 0xDFFF)
            return Err("unpaired surrogate \\u" +
                       std::string(raw.substr(i - 3, 4)));
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          i += 6;
        } else if (cp >= 0xDC80 && cp <= 0xDCFF) {
          // A lone U+DC80..U+DCFF is the byte 0x80..0xFF that was not
          // UTF-8 (Python's surrogateescape; JsonWriter::Escape writes it).
          out->push_back(char(cp - 0xDC00));
          break;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return Err("unpaired surrogate \\u" +
                     std::string(raw.substr(i - 3, 4)));
        }
        AppendUtf8(cp, out);
        break;
      }
      default:
        return Err("bad escape");
    }
  }
  return Status::OK();
}

}  // namespace

const JsonValue& JsonValue::operator[](std::string_view key) const {
  static const JsonValue kNull;
  for (const auto& [k, v] : members_) {
    if (k == key) return v;
  }
  return kNull;
}

double JsonValue::number() const {
  return type_ == Type::kNumber ? std::strtod(str_.c_str(), nullptr) : 0;
}

uint64_t JsonValue::uint() const {
  if (type_ != Type::kNumber) return 0;
  uint64_t v = 0;
  const char* end = str_.data() + str_.size();
  auto [ptr, ec] = std::from_chars(str_.data(), end, v);
  if (ec == std::errc() && ptr == end) return v;  // exact, up to 2^64-1
  const double d = number();  // 1e3, 2.0: as close as a double says
  return d > 0 && d < 0x1p64 ? static_cast<uint64_t>(d) : 0;
}

class JsonParser {
 public:
  // Fills *out from v (an on-demand value or document).
  template <typename V>
  static Status Build(V& v, JsonValue* out, int depth) {
    if (depth > 64) return Err("nested too deeply");
    od::json_type t;
    if (auto e = v.type().get(t)) return Err(e);
    switch (t) {
      case od::json_type::object: {
        out->type_ = JsonValue::Type::kObject;
        od::object obj;
        if (auto e = v.get_object().get(obj)) return Err(e);
        for (auto field : obj) {
          std::string_view key;
          if (auto e = field.unescaped_key().get(key)) return Err(e);
          JsonValue member;
          od::value val;
          if (auto e = field.value().get(val)) return Err(e);
          FERRY_RETURN_IF_ERROR(Build(val, &member, depth + 1));
          out->members_.emplace_back(std::string(key), std::move(member));
        }
        return Status::OK();
      }
      case od::json_type::array: {
        out->type_ = JsonValue::Type::kArray;
        od::array arr;
        if (auto e = v.get_array().get(arr)) return Err(e);
        for (auto item : arr) {
          od::value val;
          if (auto e = item.get(val)) return Err(e);
          JsonValue element;
          FERRY_RETURN_IF_ERROR(Build(val, &element, depth + 1));
          out->items_.push_back(std::move(element));
        }
        return Status::OK();
      }
      case od::json_type::string: {
        const std::string_view tok = Token(v);
        if (tok.size() < 2 || tok.back() != '"') return Err("bad string");
        out->type_ = JsonValue::Type::kString;
        FERRY_RETURN_IF_ERROR(
            DecodeJsonString(tok.substr(1, tok.size() - 2), &out->str_));
        od::raw_json_string consumed;
        if (auto e = v.get_raw_json_string().get(consumed)) return Err(e);
        return Status::OK();
      }
      case od::json_type::number: {
        const std::string_view tok = Token(v);
        if (!IsJsonNumber(tok))
          return Err("bad number '" + std::string(tok) + "'");
        out->type_ = JsonValue::Type::kNumber;
        out->str_.assign(tok);
        double ignored;  // consumes the number (may be out of range: 1e400)
        if (v.get_double().get(ignored)) {
        }
        return Status::OK();
      }
      case od::json_type::boolean: {
        out->type_ = JsonValue::Type::kBool;
        if (auto e = v.get_bool().get(out->bool_)) return Err(e);
        return Status::OK();
      }
      case od::json_type::null: {
        bool is_null = false;
        if (auto e = v.is_null().get(is_null)) return Err(e);
        if (!is_null) return Err("bad literal");
        return Status::OK();
      }
    }
    return Err("unexpected value");
  }
};

Result<JsonValue> ParseJson(std::string_view text) {
  // One parser per thread: it keeps its buffers between calls (JSONL
  // listings parse millions of lines).
  thread_local od::parser parser;
  thread_local std::string padded;
  padded.assign(text);
  padded.resize(text.size() + simdjson::SIMDJSON_PADDING, ' ');
  od::document doc;
  if (auto e = parser
                   .iterate(simdjson::padded_string_view(
                       padded.data(), text.size(), padded.size()))
                   .get(doc)) {
    return Err(e);
  }
  JsonValue v;
  FERRY_RETURN_IF_ERROR(JsonParser::Build(doc, &v, 0));
  const char* rest = nullptr;
  if (doc.current_location().get(rest) != simdjson::OUT_OF_BOUNDS)
    return Err("text after the value");
  return v;
}

}  // namespace ferry
