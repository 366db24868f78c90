// The zlib deflate adapter lives here.
#include "pack/shard_writer.h"

#include <zlib.h>

#include <cstdio>

#include "formats/tfrecord/tfrecord.h"
#include "formats/webdataset/tar.h"

namespace ferry::pack {

struct ShardWriter::Gzip {
  z_stream z{};
  bool ok = false;
  Gzip() {
    // TensorFlow's GZIP options: default level, window 15 + gzip wrapper,
    // memLevel 9.
    ok = deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 9,
                      Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~Gzip() { deflateEnd(&z); }
};

ShardWriter::~ShardWriter() = default;

Result<std::unique_ptr<ShardWriter>> ShardWriter::Open(Env* env,
                                                       std::string path,
                                                       ShardFormat format,
                                                       bool gzip) {
  std::unique_ptr<ShardWriter> w(new ShardWriter());
  w->env_ = env;
  w->format_ = format;
  FERRY_ASSIGN_OR_RETURN(w->file_, AtomicFileWriter::Create(env, path));
  w->path_ = std::move(path);
  if (gzip) {
    w->gzip_ = std::make_unique<Gzip>();
    if (!w->gzip_->ok)
      return Status::ResourceExhausted("zlib deflateInit2 failed");
  }
  if (format == ShardFormat::kWebDataset) w->md5_ = std::make_unique<Md5>();
  if (format == ShardFormat::kWebDataset)
    w->idx_ = "";  // header added at Finish
  return w;
}

Status ShardWriter::Emit(std::string_view bytes) {
  hasher_.Update(bytes);
  if (md5_) md5_->Update(bytes);
  file_bytes_ += bytes.size();
  return file_->Append(bytes);
}

Status ShardWriter::Write(std::string_view bytes) {
  offset_ += bytes.size();
  if (!gzip_) return Emit(bytes);
  z_stream& z = gzip_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  char out[1 << 16];
  while (z.avail_in > 0) {
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = sizeof(out);
    if (deflate(&z, Z_NO_FLUSH) == Z_STREAM_ERROR)
      return Status::IOError(path_, "deflate failed");
    FERRY_RETURN_IF_ERROR(
        Emit(std::string_view(out, sizeof(out) - z.avail_out)));
  }
  return Status::OK();
}

Status ShardWriter::AddTfRecord(std::string_view example) {
  buf_.clear();
  tfrecord::AppendRecord(example, &buf_);
  idx_ += tfrecord::DaliIndexLine(offset_, example.size());
  ++records_;
  return Write(buf_);
}

Status ShardWriter::AddSample(
    const std::string& key,
    const std::vector<std::pair<std::string, std::string>>& parts) {
  buf_.clear();
  std::string line;
  for (const auto& [ext, data] : parts) {
    const std::string name = key + "." + ext;
    const uint64_t data_offset = offset_ + buf_.size() + wds::kBlock;
    FERRY_RETURN_IF_ERROR(wds::AppendEntry(name, data, &buf_));
    if (!line.empty()) line.push_back(' ');
    line += ext + " " + std::to_string(data_offset) + " " +
            std::to_string(data.size()) + " " + name;
  }
  idx_ += line + "\n";
  ++records_;
  return Write(buf_);
}

std::string ShardWriter::md5_hex() const { return md5_done_; }

Status ShardWriter::Finish(const std::function<Status()>& before_commit) {
  if (format_ == ShardFormat::kWebDataset) {
    buf_.clear();
    wds::AppendEnd(&buf_);
    FERRY_RETURN_IF_ERROR(Write(buf_));
    idx_ = "v1.2 " + std::to_string(records_) + "\n" + idx_;
  }
  if (gzip_) {
    z_stream& z = gzip_->z;
    char out[1 << 16];
    int rc;
    do {
      z.next_in = nullptr;
      z.avail_in = 0;
      z.next_out = reinterpret_cast<Bytef*>(out);
      z.avail_out = sizeof(out);
      rc = deflate(&z, Z_FINISH);
      if (rc == Z_STREAM_ERROR) return Status::IOError(path_, "deflate failed");
      FERRY_RETURN_IF_ERROR(
          Emit(std::string_view(out, sizeof(out) - z.avail_out)));
    } while (rc != Z_STREAM_END);
  }
  if (md5_) md5_done_ = md5_->HexDigest();
  if (before_commit) FERRY_RETURN_IF_ERROR(before_commit());
  FERRY_RETURN_IF_ERROR(file_->Commit());
  // Offsets refer to the uncompressed stream: DALI cannot index gzip shards.
  if (gzip_) {
    idx_.clear();
    return Status::OK();
  }
  return WriteFileAtomically(env_, path_ + ".idx", idx_);
}

}  // namespace ferry::pack
