#include "formats/webdataset/tar.h"

#include <cstdio>
#include <cstring>

namespace ferry::wds {
namespace {

// Octal, zero-padded to width-1 digits, then NUL.
void PutOctal(char* field, size_t width, uint64_t v) {
  std::snprintf(field, width, "%0*llo", static_cast<int>(width - 1),
                static_cast<unsigned long long>(v));
}

uint64_t Checksum(const char* h) {
  uint64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<uint8_t>(h[i]);
  }
  return sum;
}

bool ParseOctal(const char* f, size_t width, uint64_t* v) {
  *v = 0;
  size_t i = 0;
  while (i < width && f[i] == ' ') ++i;
  bool any = false;
  for (; i < width && f[i] >= '0' && f[i] <= '7'; ++i) {
    *v = *v * 8 + uint64_t(f[i] - '0');
    any = true;
  }
  for (; i < width; ++i) {
    if (f[i] != '\0' && f[i] != ' ') return false;
  }
  return any;
}

}  // namespace

Status AppendEntry(std::string_view name, std::string_view data,
                   std::string* out) {
  if (name.empty() || name.size() > 100) {
    return Status::InvalidArgument("tar entry name must be 1-100 bytes: " +
                                   std::string(name));
  }
  if (data.size() >= (uint64_t{1} << 33))
    return Status::InvalidArgument("tar entry over 8 GiB");
  char h[kBlock];
  std::memset(h, 0, sizeof(h));
  std::memcpy(h, name.data(), name.size());
  PutOctal(h + 100, 8, 0444);          // mode
  PutOctal(h + 108, 8, 0);             // uid
  PutOctal(h + 116, 8, 0);             // gid
  PutOctal(h + 124, 12, data.size());  // size
  PutOctal(h + 136, 12, 0);            // mtime: fixed, for reproducible shards
  h[156] = '0';                        // regular file
  std::memcpy(h + 257, "ustar", 6);    // magic "ustar\0"
  std::memcpy(h + 263, "00", 2);       // version
  PutOctal(h + 329, 8, 0);             // devmajor
  PutOctal(h + 337, 8, 0);             // devminor
  std::snprintf(h + 148, 8, "%06llo",
                static_cast<unsigned long long>(Checksum(h)));
  h[155] = ' ';
  out->append(h, kBlock);
  out->append(data);
  out->append((kBlock - data.size() % kBlock) % kBlock, '\0');
  return Status::OK();
}

void AppendEnd(std::string* out) { out->append(2 * kBlock, '\0'); }

Status ParseHeader(std::string_view block, Header* h) {
  const char* p = block.data();
  uint64_t stored = 0;
  if (block.size() < kBlock || !ParseOctal(p + 148, 8, &stored) ||
      stored != Checksum(p)) {
    return Status::Corruption("header checksum mismatch");
  }
  if (!ParseOctal(p + 124, 12, &h->size))
    return Status::Corruption("bad size field");
  h->name.assign(p, strnlen(p, 100));
  h->type = p[156];
  return Status::OK();
}

Result<std::vector<Entry>> ListEntries(std::string_view a) {
  std::vector<Entry> out;
  if (a.size() % kBlock != 0) {
    return Status::Corruption("tar size " + std::to_string(a.size()) +
                              " is not a multiple of 512");
  }
  uint64_t pos = 0;
  static const char kZero[kBlock] = {};
  while (true) {
    if (a.size() - pos < kBlock)
      return Status::Corruption("tar ends without the two zero blocks");
    const char* h = a.data() + pos;
    if (std::memcmp(h, kZero, kBlock) == 0) {
      if (a.size() - pos < 2 * kBlock ||
          std::memcmp(h + kBlock, kZero, kBlock) != 0) {
        return Status::Corruption("tar end at offset " + std::to_string(pos) +
                                  ": one zero block, not two");
      }
      return out;
    }
    Header hd;
    Status s = ParseHeader(std::string_view(h, kBlock), &hd);
    if (!s.ok())
      return s.WithContext("tar header at offset " + std::to_string(pos));
    Entry e{hd.name, pos, pos + kBlock, hd.size};
    const uint64_t padded = (hd.size + kBlock - 1) / kBlock * kBlock;
    if (a.size() - e.data_offset < padded) {
      return Status::Corruption("tar header at offset " + std::to_string(pos),
                                "entry " + e.name + " runs past the end");
    }
    if (hd.type == '0' || hd.type == '\0') out.push_back(e);
    pos = e.data_offset + padded;
  }
}

void SplitName(std::string_view name, std::string* key, std::string* ext) {
  const size_t slash = name.rfind('/');
  const size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  const size_t dot = name.find('.', base);
  if (dot == std::string_view::npos) {
    key->assign(name);
    ext->clear();
  } else {
    key->assign(name.substr(0, dot));
    ext->assign(name.substr(dot + 1));
  }
}

std::string WidsUrl(std::string_view name) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' ||
                            c == '_' || c == '~';
    if (unreserved) {
      out.push_back(char(c));
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace ferry::wds
