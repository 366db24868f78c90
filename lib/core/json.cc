#include "ferry/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace ferry {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  const unsigned char c = s[i];
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char b = s[i + k];
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
  }
  return n;
}

}  // namespace

std::string JsonWriter::Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (c >= 0x80) {
      const size_t n = Utf8Length(s, i);
      if (n == 0) {  // not UTF-8: the byte as a lone surrogate escape
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\udc%02x", c);
        out += buf;
      } else {
        out.append(s.substr(i, n));
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
        break;
    }
  }
  out.push_back('"');
  return out;
}

void JsonWriter::Put(std::string_view s) {
  if (out_) {
    std::fwrite(s.data(), 1, s.size(), out_);
  } else {
    buf_.append(s);
  }
}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) Put(",");
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  Separate();
  Put("{");
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  first_.pop_back();
  Put("}");
  if (first_.empty()) Put("\n");
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  Separate();
  Put("[");
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  first_.pop_back();
  Put("]");
  if (first_.empty()) Put("\n");
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  Separate();
  Put(Escape(key));
  Put(":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  Separate();
  Put(Escape(value));
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  Separate();
  Put(std::to_string(value));
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t value) {
  Separate();
  Put(std::to_string(value));
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  Separate();
  if (!std::isfinite(value)) {
    Put("null");
    return *this;
  }
  // The shortest text that reads back as exactly this double.
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), value);
  Put(std::string_view(buf, r.ptr - buf));
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  Separate();
  Put(value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  Separate();
  Put("null");
  return *this;
}

}  // namespace ferry
