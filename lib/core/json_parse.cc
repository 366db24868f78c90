#include <cstdlib>
#include <string>

#include "ferry/json.h"

namespace ferry {

const JsonValue& JsonValue::operator[](std::string_view key) const {
  static const JsonValue kNull;
  for (const auto& [k, v] : members_) {
    if (k == key) return v;
  }
  return kNull;
}

class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}

  Status Parse(JsonValue* v) {
    FERRY_RETURN_IF_ERROR(Value(v, 0));
    Ws();
    return i_ == s_.size() ? Status::OK() : Err("text after the value");
  }

 private:
  Status Err(const std::string& what) const {
    return Status::Corruption("JSON: " + what + " at byte " +
                              std::to_string(i_));
  }
  void Ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' ||
                              s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool Lit(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  static void Utf8(uint32_t cp, std::string* out) {
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
  Status Hex4(uint32_t* v) {
    if (i_ + 4 > s_.size()) return Err("short \\u escape");
    *v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[i_++];
      int d = (c >= '0' && c <= '9')   ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                       : -1;
      if (d < 0) return Err("bad \\u escape");
      *v = *v * 16 + uint32_t(d);
    }
    return Status::OK();
  }
  Status String(std::string* out) {
    ++i_;  // opening quote
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == '"') return Status::OK();
      if (static_cast<unsigned char>(c) < 0x20)
        return Err("control character in string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (i_ >= s_.size()) break;
      char e = s_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
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
          uint32_t cp;
          FERRY_RETURN_IF_ERROR(Hex4(&cp));
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(i_, 2) == "\\u") {
            i_ += 2;
            uint32_t lo;
            FERRY_RETURN_IF_ERROR(Hex4(&lo));
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          Utf8(cp, out);
          break;
        }
        default:
          return Err("bad escape");
      }
    }
    return Err("unterminated string");
  }
  Status Value(JsonValue* v, int depth) {
    if (depth > 64) return Err("nested too deeply");
    Ws();
    if (i_ >= s_.size()) return Err("unexpected end");
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v->type_ = JsonValue::Type::kObject;
      Ws();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return Status::OK();
      }
      for (;;) {
        Ws();
        if (i_ >= s_.size() || s_[i_] != '"') return Err("expected a key");
        std::string key;
        FERRY_RETURN_IF_ERROR(String(&key));
        Ws();
        if (i_ >= s_.size() || s_[i_++] != ':') return Err("expected ':'");
        JsonValue member;
        FERRY_RETURN_IF_ERROR(Value(&member, depth + 1));
        v->members_.emplace_back(std::move(key), std::move(member));
        Ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == '}') {
          ++i_;
          return Status::OK();
        }
        return Err("expected ',' or '}'");
      }
    }
    if (c == '[') {
      ++i_;
      v->type_ = JsonValue::Type::kArray;
      Ws();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return Status::OK();
      }
      for (;;) {
        JsonValue item;
        FERRY_RETURN_IF_ERROR(Value(&item, depth + 1));
        v->items_.push_back(std::move(item));
        Ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == ']') {
          ++i_;
          return Status::OK();
        }
        return Err("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v->type_ = JsonValue::Type::kString;
      return String(&v->str_);
    }
    if (Lit("true")) {
      v->type_ = JsonValue::Type::kBool;
      v->bool_ = true;
      return Status::OK();
    }
    if (Lit("false")) {
      v->type_ = JsonValue::Type::kBool;
      return Status::OK();
    }
    if (Lit("null")) return Status::OK();
    const size_t start = i_;
    while (i_ < s_.size() && std::string_view("+-0123456789.eE").find(s_[i_]) !=
                                 std::string_view::npos)
      ++i_;
    if (i_ == start) return Err("unexpected character");
    std::string num(s_.substr(start, i_ - start));
    char* end = nullptr;
    v->num_ = std::strtod(num.c_str(), &end);
    if (*end != '\0') return Err("bad number");
    v->type_ = JsonValue::Type::kNumber;
    return Status::OK();
  }

  std::string_view s_;
  size_t i_ = 0;
};

Result<JsonValue> ParseJson(std::string_view text) {
  JsonValue v;
  FERRY_RETURN_IF_ERROR(JsonParser(text).Parse(&v));
  return v;
}

}  // namespace ferry
