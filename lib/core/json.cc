#include "ferry/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "ferry/text.h"

namespace ferry {

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
