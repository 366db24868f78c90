// Fuzz target: the manifest reader (formats/manifest), fed untrusted bytes as
// sync fetches them. Each input is read to its end or refused with
// Corruption; an accepted manifest keeps its invariants.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "formats/manifest/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferry::manifest;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  StringSource source(bytes);
  ManifestReader reader(&source);
  ferry::Status s = reader.Open();
  uint64_t files = 0, total = 0;
  std::string last;
  bool done = false;
  while (s.ok() && !done) {
    File file;
    s = reader.Next(&file, &done);
    if (!s.ok() || done) break;
    if (!CheckFile(file, reader.header().part_size(),
                   reader.header().format_version())
             .ok())
      std::abort();
    if (files > 0 && !(last < file.path())) std::abort();
    last = file.path();
    ++files;
    total += file.size();
  }
  if (!s.ok() && !s.IsCorruption()) std::abort();
  if (s.ok()) {
    if (reader.footer().file_count() != files) std::abort();
    if (reader.footer().total_bytes() != total) std::abort();
    if (!VerifyId(bytes, reader.id()).ok()) std::abort();
  }
  return 0;
}
