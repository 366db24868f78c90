// ustar archives as WebDataset shards (formats/webdataset/README.md): one
// regular-file entry per sample component, fixed metadata so the same
// samples always give the same bytes. Pure bytes in, bytes out.
// Thread-safety: pure functions.
#ifndef FERRY_FORMATS_WEBDATASET_TAR_H_
#define FERRY_FORMATS_WEBDATASET_TAR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/result.h"

namespace ferry::wds {

inline constexpr size_t kBlock = 512;

// Appends one entry (header + data padded to 512 bytes). name <= 100 bytes.
Status AppendEntry(std::string_view name, std::string_view data,
                   std::string* out);
// The two zero blocks that end an archive.
void AppendEnd(std::string* out);

struct Header {
  std::string name;
  uint64_t size = 0;
  char type = '0';
};
// Parses one 512-byte header block (not a zero block), checking its
// checksum and fields.
Status ParseHeader(std::string_view block, Header* h);

struct Entry {
  std::string name;
  uint64_t header_offset = 0;
  uint64_t data_offset = 0;  // header_offset + 512
  uint64_t size = 0;
};

// Lists every entry, checking header checksums, sizes, block structure and
// the end blocks. Errors name the entry and byte offset.
Result<std::vector<Entry>> ListEntries(std::string_view archive);

// WebDataset's key/extension split: key = directory + basename up to the
// first dot; extension = the rest.
void SplitName(std::string_view name, std::string* key, std::string* ext);

// A shard's URL in a wids index, relative to the index: bytes other than
// RFC 3986's unreserved ones percent-encoded ('#', '?' and ':' would
// otherwise end the path or read as a scheme).
std::string WidsUrl(std::string_view shard_name);

}  // namespace ferry::wds

#endif  // FERRY_FORMATS_WEBDATASET_TAR_H_
