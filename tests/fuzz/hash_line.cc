// Fuzz target: hash-list lines (untrusted input of `ferry hash --check`).
// Any line either fails to parse or round-trips through FormatHashLine.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ferry/hash_list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  auto parsed = ferry::ParseHashLine(line);
  if (!parsed.ok()) return 0;
  auto again =
      ferry::ParseHashLine(ferry::FormatHashLine(parsed->hash, parsed->path));
  if (!again.ok() || again->path != parsed->path ||
      !(again->hash == parsed->hash)) {
    std::abort();
  }
  return 0;
}
