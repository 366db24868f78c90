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
      Status s = f_->Read(chunk_.size(), &got, chunk_.data());
      if (!s.ok()) return Fail(s, raw_bytes_);
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

// Names the gzip framing error at the current position.
Status GzipStream::Error(const char* what) {
  const std::string at = std::to_string(consumed());
  const std::string member = std::to_string(member_start_);
  std::string msg;
  if (members_ > 0 && member_out_ == 0) {
    msg = "data after the gzip stream's last member (which ends at offset " +
          member + ") is not a gzip member: " + what;
  } else if (std::strcmp(what, "incorrect data check") == 0) {
    msg = "gzip trailer (ending at offset " + at +
          ") of the member at offset " + member +
          ": CRC-32 does not match the data";
  } else if (std::strcmp(what, "incorrect length check") == 0) {
    msg = "gzip trailer (ending at offset " + at +
          ") of the member at offset " + member +
          ": ISIZE does not match the data's length";
  } else {
    msg = "gzip member at offset " + member + ": " + what + " (at offset " +
          at + ")";
  }
  return Fail(Status::Corruption(msg),
              members_ > 0 && member_out_ == 0 ? member_start_ : consumed());
}

Status GzipStream::Read(size_t n, std::string* out) {
  out->clear();
  if (!status().ok()) return status();
  if (!init_) {
    // GZIP only (window bits + 16), as TensorFlow's "GZIP" option.
    if (inflateInit2(&z_, 15 + 16) != Z_OK)
      return Fail(Status::ResourceExhausted("inflateInit2"), 0);
    init_ = true;
  }
  // More compressed input; false at the end of the file.
  auto refill = [&]() -> Result<bool> {
    FERRY_RETURN_IF_ERROR(ReadRaw(1 << 16, &in_));
    z_.next_in = reinterpret_cast<Bytef*>(in_.data());
    z_.avail_in = static_cast<uInt>(in_.size());
    return !in_.empty();
  };
  char buf[1 << 16];
  while (out->size() < n && !done_) {
    if (z_.avail_in == 0) {
      FERRY_ASSIGN_OR_RETURN(bool more, refill());
      if (!more) {
        if (raw_bytes() == 0) {  // an empty file holds no records
          done_ = true;
          break;
        }
        return Error(members_ > 0 && member_out_ == 0
                         ? "it is cut short"
                         : "the member is cut short (truncated file)");
      }
    }
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(std::min(sizeof(buf), n - out->size()));
    const int rc = inflate(&z_, Z_NO_FLUSH);
    const size_t got = reinterpret_cast<char*>(z_.next_out) - buf;
    out->append(buf, got);
    member_out_ += got;
    if (rc == Z_STREAM_END) {
      // Another member may follow, back to back (TF reads it too).
      ++members_;
      if (z_.avail_in == 0) {
        FERRY_ASSIGN_OR_RETURN(bool more, refill());
        if (!more) {
          done_ = true;
          break;
        }
      }
      member_start_ = consumed();
      member_out_ = 0;
      inflateReset(&z_);
    } else if (rc == Z_BUF_ERROR && z_.avail_in == 0) {
      continue;  // wants more input
    } else if (rc != Z_OK) {
      return Error(z_.msg ? z_.msg : "inflate failed");
    }
  }
  return Status::OK();
}

bool IsGzipName(std::string_view name) {
  return name.size() >= 3 && name.substr(name.size() - 3) == ".gz";
}

bool IsTarName(std::string_view name) {
  if (IsGzipName(name)) name.remove_suffix(3);
  return name.size() >= 4 && name.substr(name.size() - 4) == ".tar";
}

Result<std::unique_ptr<FileStream>> OpenShardStream(Env* env,
                                                    const std::string& path,
                                                    bool md5) {
  return OpenShardStream(env, path, md5, IsGzipName(path));
}

Result<std::unique_ptr<FileStream>> OpenShardStream(Env* env,
                                                    const std::string& path,
                                                    bool md5, bool gzip) {
  FERRY_ASSIGN_OR_RETURN(auto f, env->NewSequentialFile(path));
  if (gzip)
    return std::unique_ptr<FileStream>(
        std::make_unique<GzipStream>(std::move(f), md5));
  return std::make_unique<FileStream>(std::move(f), md5);
}

TfStep NextTfRecord(FileStream* in, std::string* payload) {
  std::string head, foot;
  if (!in->Read(tfrecord::kHeaderSize, &head).ok()) return TfStep::kStream;
  if (head.empty()) return TfStep::kEnd;
  if (head.size() < tfrecord::kHeaderSize) return TfStep::kTruncated;
  uint64_t len = 0;
  if (!tfrecord::DecodeHeader(head, &len)) return TfStep::kLengthCrc;
  Status s = in->Read(len, payload);
  if (s.ok() && payload->size() == len)
    s = in->Read(tfrecord::kFooterSize, &foot);
  if (!s.ok()) return TfStep::kStream;
  if (payload->size() < len || foot.size() < tfrecord::kFooterSize) {
    return TfStep::kTruncated;
  }
  return tfrecord::DataCrcMatches(*payload, foot) ? TfStep::kRecord
                                                  : TfStep::kDataCrc;
}

TarStep NextTarEntry(FileStream* in, wds::Header* h, std::string* data,
                     std::string* error) {
  std::string block, pad;
  auto stream_error = [&] {
    *error = in->status().ToString();
    return TarStep::kStream;
  };
  Status s = in->Read(wds::kBlock, &block);
  if (!s.ok()) return stream_error();
  if (block.size() < wds::kBlock) return TarStep::kBadEnd;
  if (block.find_first_not_of('\0') == std::string::npos) {
    s = in->Read(wds::kBlock, &block);
    if (!s.ok()) return stream_error();
    if (block.size() < wds::kBlock ||
        block.find_first_not_of('\0') != std::string::npos) {
      return TarStep::kBadEnd;
    }
    return TarStep::kEnd;
  }
  s = wds::ParseHeader(block, h);
  if (!s.ok()) {
    *error = std::string(s.message());
    h->name.assign(block.data(), strnlen(block.data(), 100));
    return TarStep::kBadHeader;
  }
  const uint64_t padding = (wds::kBlock - h->size % wds::kBlock) % wds::kBlock;
  s = in->Read(h->size, data);
  if (s.ok() && data->size() == h->size) s = in->Read(padding, &pad);
  if (!s.ok()) return stream_error();
  if (data->size() < h->size || pad.size() < padding) {
    *error = "entry " + h->name + " cut short";
    return TarStep::kTruncated;
  }
  return TarStep::kEntry;
}

}  // namespace ferry::pack
