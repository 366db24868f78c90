// The zlib inflate adapter for shard reading lives here.
#include "pack/shard_stream.h"

#include <algorithm>
#include <cstring>

#include "formats/tfrecord/tfrecord.h"

namespace ferry::pack {

FileStream::FileStream(std::unique_ptr<SequentialFile> f, bool md5)
    : f_(std::move(f)), chunk_(1 << 20, '\0') {
  if (md5) md5_ = std::make_unique<Md5>();
}

Status FileStream::Read(size_t n, std::string* out) {
  out->clear();
  while (out->size() < n) {
    if (pos_ == len_) {
      std::string_view got;
      FERRY_RETURN_IF_ERROR(f_->Read(chunk_.size(), &got, chunk_.data()));
      if (got.empty()) break;
      if (got.data() != chunk_.data())
        std::memmove(chunk_.data(), got.data(), got.size());
      hasher_.Update(got);
      if (md5_) md5_->Update(got);
      raw_bytes_ += got.size();
      pos_ = 0;
      len_ = got.size();
    }
    size_t take = std::min(n - out->size(), len_ - pos_);
    out->append(chunk_.data() + pos_, take);
    pos_ += take;
  }
  return Status::OK();
}

Status FileStream::Drain() {
  std::string sink;
  do {
    FERRY_RETURN_IF_ERROR(ReadRaw(1 << 20, &sink));
  } while (!sink.empty());
  return Status::OK();
}

GzipStream::~GzipStream() {
  if (init_) inflateEnd(&z_);
}

Status GzipStream::Read(size_t n, std::string* out) {
  out->clear();
  if (!init_) {
    if (inflateInit2(&z_, 15 + 32) != Z_OK)
      return Status::ResourceExhausted("inflateInit2");
    init_ = true;
  }
  char buf[1 << 16];
  while (out->size() < n && !done_) {
    if (z_.avail_in == 0) {
      FERRY_RETURN_IF_ERROR(ReadRaw(1 << 16, &in_));
      if (in_.empty())
        return Status::Corruption("gzip stream ends early (truncated)");
      z_.next_in = reinterpret_cast<Bytef*>(in_.data());
      z_.avail_in = static_cast<uInt>(in_.size());
    }
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(std::min(sizeof(buf), n - out->size()));
    int rc = inflate(&z_, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END)
      return Status::Corruption("gzip stream is corrupt");
    out->append(buf, reinterpret_cast<char*>(z_.next_out) - buf);
    if (rc == Z_STREAM_END) done_ = true;
  }
  return Status::OK();
}

Result<std::unique_ptr<FileStream>> OpenShardStream(Env* env,
                                                    const std::string& path,
                                                    bool md5) {
  FERRY_ASSIGN_OR_RETURN(auto f, env->NewSequentialFile(path));
  const bool gz =
      path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  if (gz)
    return std::unique_ptr<FileStream>(
        std::make_unique<GzipStream>(std::move(f), md5));
  return std::make_unique<FileStream>(std::move(f), md5);
}

TfStep NextTfRecord(FileStream* in, std::string* payload) {
  std::string head, foot;
  if (!in->Read(tfrecord::kHeaderSize, &head).ok()) return TfStep::kTruncated;
  if (head.empty()) return TfStep::kEnd;
  if (head.size() < tfrecord::kHeaderSize) return TfStep::kTruncated;
  uint64_t len = 0;
  if (!tfrecord::DecodeHeader(head, &len)) return TfStep::kLengthCrc;
  Status s = in->Read(len, payload);
  if (s.ok() && payload->size() == len)
    s = in->Read(tfrecord::kFooterSize, &foot);
  if (!s.ok() || payload->size() < len || foot.size() < tfrecord::kFooterSize) {
    return TfStep::kTruncated;
  }
  return tfrecord::DataCrcMatches(*payload, foot) ? TfStep::kRecord
                                                  : TfStep::kDataCrc;
}

TarStep NextTarEntry(FileStream* in, wds::Header* h, std::string* data,
                     std::string* error) {
  std::string block, pad;
  Status s = in->Read(wds::kBlock, &block);
  if (!s.ok() || block.size() < wds::kBlock) return TarStep::kBadEnd;
  if (block.find_first_not_of('\0') == std::string::npos) {
    s = in->Read(wds::kBlock, &block);
    if (!s.ok() || block.size() < wds::kBlock ||
        block.find_first_not_of('\0') != std::string::npos) {
      return TarStep::kBadEnd;
    }
    return TarStep::kEnd;
  }
  s = wds::ParseHeader(block, h);
  if (!s.ok()) {
    *error = std::string(s.message());
    return TarStep::kBadHeader;
  }
  const uint64_t padding = (wds::kBlock - h->size % wds::kBlock) % wds::kBlock;
  s = in->Read(h->size, data);
  if (s.ok() && data->size() == h->size) s = in->Read(padding, &pad);
  if (!s.ok() || data->size() < h->size || pad.size() < padding) {
    *error = "entry " + h->name + " cut short";
    return TarStep::kTruncated;
  }
  return TarStep::kEntry;
}

}  // namespace ferry::pack
