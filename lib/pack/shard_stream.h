// Streaming readers for shard files, shared by verify and inspect: bytes
// come in chunks (XXH3-128 and, on request, MD5 of the raw file kept on the
// way), gzip is inflated on the fly, and TFRecord records or tar entries are
// cut one at a time, so memory does not grow with the shard.
// Thread-safety: one object per thread.
#ifndef FERRY_PACK_SHARD_STREAM_H_
#define FERRY_PACK_SHARD_STREAM_H_

#include <zlib.h>

#include <memory>
#include <string>

#include "ferry/env.h"
#include "ferry/hash.h"
#include "formats/webdataset/tar.h"
#include "pack/md5.h"

namespace ferry::pack {

class FileStream {
 public:
  FileStream(std::unique_ptr<SequentialFile> f, bool md5);
  virtual ~FileStream() = default;
  // Reads up to n bytes (fewer only at the end) into out.
  virtual Status Read(size_t n, std::string* out);
  // Reads what is left, so the hashes cover the whole file.
  Status Drain();
  Hash128 xxh3() const { return hasher_.Digest(); }
  std::string md5() { return md5_ ? md5_->HexDigest() : std::string(); }
  uint64_t raw_bytes() const { return raw_bytes_; }

 protected:
  Status ReadRaw(size_t n, std::string* out) {
    return FileStream::Read(n, out);
  }

 private:
  std::unique_ptr<SequentialFile> f_;
  std::string chunk_;
  size_t pos_ = 0, len_ = 0;
  Hasher128 hasher_;
  std::unique_ptr<Md5> md5_;
  uint64_t raw_bytes_ = 0;
};

// The inflated bytes of a gzip file (TensorFlow's GZIP TFRecords); the
// hashes still cover the raw file.
class GzipStream : public FileStream {
 public:
  using FileStream::FileStream;
  ~GzipStream() override;
  Status Read(size_t n, std::string* out) override;

 private:
  z_stream z_{};
  bool init_ = false, done_ = false;
  std::string in_;
};

// Opens path as a stream of shard bytes: gzip-inflated for ".gz".
Result<std::unique_ptr<FileStream>> OpenShardStream(Env* env,
                                                    const std::string& path,
                                                    bool md5);

// One framed TFRecord (the next one starts kOverhead + payload size later).
// kDataCrc still delivers the payload: the framing is intact and reading
// can go on; kLengthCrc and kTruncated end the file.
enum class TfStep { kEnd, kRecord, kDataCrc, kLengthCrc, kTruncated };
TfStep NextTfRecord(FileStream* in, std::string* payload);

// One tar entry (any type; the next header starts at TarEntryBytes later).
// kEnd after the two zero blocks; kBadEnd when the archive stops without
// them; kBadHeader / kTruncated end the file and *error says why.
enum class TarStep { kEnd, kEntry, kBadEnd, kBadHeader, kTruncated };
TarStep NextTarEntry(FileStream* in, wds::Header* header, std::string* data,
                     std::string* error);
inline uint64_t TarEntryBytes(uint64_t size) {
  return wds::kBlock + (size + wds::kBlock - 1) / wds::kBlock * wds::kBlock;
}

}  // namespace ferry::pack

#endif  // FERRY_PACK_SHARD_STREAM_H_
