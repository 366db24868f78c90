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
  // Reads up to n bytes (fewer only at the end) into out. After an error,
  // status() keeps it.
  virtual Status Read(size_t n, std::string* out);
  const Status& status() const { return status_; }
  // The file offset the error in status() is at.
  uint64_t error_offset() const { return error_offset_; }
  // Reads what is left, so the hashes cover the whole file.
  Status Drain();
  Hash128 xxh3() const { return hasher_.Digest(); }
  std::string md5() { return md5_ ? md5_->HexDigest() : std::string(); }
  uint64_t raw_bytes() const { return raw_bytes_; }

 protected:
  Status ReadRaw(size_t n, std::string* out) {
    return FileStream::Read(n, out);
  }
  Status Fail(Status s, uint64_t offset) {
    if (status_.ok()) {
      status_ = s;
      error_offset_ = offset;
    }
    return s;
  }

 private:
  std::unique_ptr<SequentialFile> f_;
  std::string chunk_;
  size_t pos_ = 0, len_ = 0;
  Hasher128 hasher_;
  std::unique_ptr<Md5> md5_;
  uint64_t raw_bytes_ = 0;
  Status status_;
  uint64_t error_offset_ = 0;
};

// The inflated bytes of a gzip file (TensorFlow's GZIP TFRecords); the
// hashes still cover the raw file. Framing as TensorFlow's ZlibInputStream
// reads it (since TF 2.5): members follow each other back to back (each
// with its CRC-32 and length trailer checked); anything else after a
// member, or a member cut short, is an error naming the file offset.
class GzipStream : public FileStream {
 public:
  using FileStream::FileStream;
  ~GzipStream() override;
  Status Read(size_t n, std::string* out) override;

 private:
  // File offset of the next compressed byte zlib has not consumed.
  uint64_t consumed() const { return raw_bytes() - z_.avail_in; }
  Status Error(const char* what);

  z_stream z_{};
  bool init_ = false, done_ = false;
  uint64_t member_start_ = 0, member_out_ = 0;
  int members_ = 0;
  std::string in_;
};

// True for names ending in ".gz" (gzip shards: ".tfrecord.gz", ".tar.gz").
bool IsGzipName(std::string_view name);
// True for WebDataset tar shards: ".tar" or ".tar.gz".
bool IsTarName(std::string_view name);

// Opens path as a stream of shard bytes: gzip-inflated for ".gz".
Result<std::unique_ptr<FileStream>> OpenShardStream(Env* env,
                                                    const std::string& path,
                                                    bool md5);
// The same, gzip-inflated or not as told (for files identified by bytes).
Result<std::unique_ptr<FileStream>> OpenShardStream(Env* env,
                                                    const std::string& path,
                                                    bool md5, bool gzip);

// One framed TFRecord (the next one starts kOverhead + payload size later).
// kDataCrc still delivers the payload: the framing is intact and reading
// can go on; kLengthCrc and kTruncated end the file, and so does kStream
// (the gzip layer failed: in->status() says how).
enum class TfStep { kEnd, kRecord, kDataCrc, kLengthCrc, kTruncated, kStream };
TfStep NextTfRecord(FileStream* in, std::string* payload);

// One tar entry (any type; the next header starts at TarEntryBytes later).
// kEnd after the two zero blocks; kBadEnd when the archive stops without
// them; kBadHeader / kTruncated / kStream (gzip) end the file and *error
// says why. After kBadHeader, header->name is the damaged block's name
// field as it stands (it may itself be damaged).
enum class TarStep { kEnd, kEntry, kBadEnd, kBadHeader, kTruncated, kStream };
TarStep NextTarEntry(FileStream* in, wds::Header* header, std::string* data,
                     std::string* error);
inline uint64_t TarEntryBytes(uint64_t size) {
  return wds::kBlock + (size + wds::kBlock - 1) / wds::kBlock * wds::kBlock;
}

}  // namespace ferry::pack

#endif  // FERRY_PACK_SHARD_STREAM_H_
