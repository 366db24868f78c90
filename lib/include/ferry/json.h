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
#include <vector>

#include "ferry/export.h"

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

  static std::string Escape(std::string_view s);

 private:
  void Separate();
  void Put(std::string_view s);
  std::FILE* out_;
  std::string buf_;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
};

}  // namespace ferry

#endif  // FERRY_JSON_H_
