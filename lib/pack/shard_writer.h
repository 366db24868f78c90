// Writes one shard: bytes go through an AtomicFileWriter (optionally through
// a gzip stream) while XXH3-128 and MD5 of the file bytes and the DALI index
// are kept, so nothing is read back. Finish publishes shard and index.
// Thread-safety: one thread at a time.
#ifndef FERRY_PACK_SHARD_WRITER_H_
#define FERRY_PACK_SHARD_WRITER_H_

#include <functional>
#include <memory>
#include <string>

#include "ferry/atomic_file.h"
#include "ferry/hash.h"
#include "ferry/pack.h"
#include "pack/md5.h"

namespace ferry::pack {

class ShardWriter {
 public:
  ~ShardWriter();
  static Result<std::unique_ptr<ShardWriter>> Open(Env* env, std::string path,
                                                   ShardFormat format,
                                                   bool gzip);
  // A TFRecord record (unframed Example) or a WebDataset sample's entries.
  Status AddTfRecord(std::string_view example);
  Status AddSample(
      const std::string& key,
      const std::vector<std::pair<std::string, std::string>>& parts);
  // Ends the archive, commits the shard and writes "<path>.idx"; when
  // before_commit is given and fails, neither (its error returned).
  Status Finish(const std::function<Status()>& before_commit = nullptr);

  uint64_t records() const { return records_; }
  uint64_t logical_bytes() const { return offset_; }  // before compression
  uint64_t file_bytes() const { return file_bytes_; }
  Hash128 xxh3() const { return hasher_.Digest(); }
  std::string md5_hex() const;
  // XXH3-128 of the ".idx" sidecar Finish wrote (of "" for gzip shards).
  Hash128 index_xxh3() const { return HashBytes(idx_); }

 private:
  ShardWriter() = default;
  Status Write(std::string_view bytes);  // logical bytes
  Status Emit(std::string_view bytes);   // file bytes

  Env* env_ = nullptr;
  std::string path_;
  ShardFormat format_ = ShardFormat::kTfRecord;
  std::unique_ptr<AtomicFileWriter> file_;
  struct Gzip;
  std::unique_ptr<Gzip> gzip_;
  std::unique_ptr<Md5> md5_;
  Hasher128 hasher_;
  std::string buf_, idx_;
  uint64_t offset_ = 0, file_bytes_ = 0, records_ = 0;
  std::string md5_done_;
};

}  // namespace ferry::pack

#endif  // FERRY_PACK_SHARD_WRITER_H_
