// JsonWriter: a small streaming JSON writer for --json summaries. It writes
// as it goes (memory stays flat for long lists) and escapes strings per
// RFC 8259. Commas are placed automatically.
// Thread-safety: one thread at a time.
#ifndef FERRY_JSON_H_
#define FERRY_JSON_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/export.h"
#include "ferry/result.h"

namespace ferry {

class FERRY_EXPORT JsonWriter {
 public:
  // Writes to out (not owned); or, with out == nullptr, into str().
  explicit JsonWriter(std::FILE* out = nullptr) : out_(out) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Uint(uint64_t value);
  JsonWriter& Double(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  // What was written, when writing to memory.
  const std::string& str() const { return buf_; }

  // A JSON string literal for s. Bytes that are not UTF-8 (file names may
  // hold any bytes) become "\udc80".."\udcff", as Python's surrogateescape
  // reads them: valid UTF-8 out, and os.fsencode() (or ParseJson) gives the
  // original bytes back.
  static std::string Escape(std::string_view s);

 private:
  void Separate();
  void Put(std::string_view s);
  std::FILE* out_;
  std::string buf_;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
};

// A parsed JSON document (for reading ferry's own manifests back).
class FERRY_EXPORT JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type() const { return type_; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_number() const { return type_ == Type::kNumber; }

  // A string's bytes, or a number's text exactly as written (so that
  // 1600000000000000001 and 0.1 survive as they are).
  const std::string& str() const { return str_; }
  double number() const;
  // The number as a whole number (0 when negative or not a number).
  uint64_t uint() const;
  bool boolean() const { return bool_; }
  const std::vector<JsonValue>& items() const { return items_; }
  // Object members in document order.
  const std::vector<std::pair<std::string, JsonValue>>& members() const {
    return members_;
  }
  // The member named key, or a null value.
  const JsonValue& operator[](std::string_view key) const;

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool bool_ = false;
  std::string str_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Parses a whole JSON text (RFC 8259, with simdjson: invalid UTF-8 and
// unpaired surrogate escapes are errors); nesting is limited to 64 levels.
// A lone escape \udc80..\udcff decodes to the byte 0x80..0xff, the inverse
// of JsonWriter::Escape. Errors are Corruption.
FERRY_EXPORT Result<JsonValue> ParseJson(std::string_view text);

}  // namespace ferry

#endif  // FERRY_JSON_H_
