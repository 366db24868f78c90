#include "remote/byte_sources.h"

#include <algorithm>
#include <cstring>

#include "ferry/walk.h"

namespace ferry::remote {

Status StringSource::ReadAt(uint64_t offset, size_t n, char* scratch,
                            size_t* got) {
  *got = offset >= data_.size()
             ? 0
             : std::min<size_t>(n, data_.size() - static_cast<size_t>(offset));
  if (*got > 0) std::memcpy(scratch, data_.data() + offset, *got);
  return Status::OK();
}

Result<std::unique_ptr<FileSource>> FileSource::Open(Env* env,
                                                     const std::string& path,
                                                     const std::string& root) {
  // Told before it is opened: a FIFO would wait for a writer, and the size
  // of a pipe or a device (0) is no size of its bytes: put uploaded
  // /dev/zero and `echo x | ferry put /dev/stdin` as empty objects.
  FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(path));
  if (info.type != FileType::kRegular) {
    return Status::InvalidArgument(path, std::string("not a regular file (") +
                                             FileTypeName(info.type) + ")");
  }
  FERRY_ASSIGN_OR_RETURN(auto f, env->NewRandomAccessFile(path));
  if (!root.empty()) {
    // What was opened, not what the name says now: a link swapped in
    // after the walk (to a file outside, or a folder on the way made a
    // link) is caught here, whatever the name points at afterwards.
    auto real = f->RealPath();
    if (real.ok() && !PathIsBelow(*real, root))
      return Status::IOError(path, "now leads outside " + root +
                                       " (a link put in its place since the "
                                       "walk): not uploaded");
  }
  FERRY_ASSIGN_OR_RETURN(uint64_t size, f->Size());
  auto s = std::make_unique<FileSource>();
  s->file_ = std::move(f);
  s->size_ = size;
  s->path_ = path;
  s->env_ = env;
  s->info_ = info;
  // A file with bytes past its size (/proc/cpuinfo says 0) is refused
  // before a request makes an object of its size.
  FERRY_RETURN_IF_ERROR(s->CheckEndsAtSize());
  return s;
}

Status FileSource::CheckEndsAtSize() const {
  char byte;
  std::string_view v;
  FERRY_RETURN_IF_ERROR(file_->Read(size_, 1, &v, &byte));
  if (!v.empty()) {
    return Status::IOError(path_,
                           "changed while being uploaded (it reads past its "
                           "size, " +
                               std::to_string(size_) + " bytes)");
  }
  return Status::OK();
}

Status FileSource::ReadAt(uint64_t offset, size_t n, char* scratch,
                          size_t* got) {
  std::string_view v;
  FERRY_RETURN_IF_ERROR(file_->Read(offset, n, &v, scratch));
  if (v.data() != scratch) std::memcpy(scratch, v.data(), v.size());
  *got = v.size();
  if (v.size() < n && offset + v.size() < size_) return Changed();
  return Status::OK();
}

Status FileSource::CheckUnchanged() const {
  // Cut short or grown, rewritten in place at its size (its mtime and ctime
  // moved: a write cannot set ctime back), or another file took its name:
  // its bytes may be a mix of old and new, never uploaded as the file.
  auto now = env_->Stat(path_);
  if (!now.ok()) return Changed();
  if (now->size != info_.size || now->mtime_ns != info_.mtime_ns ||
      now->ctime_ns != info_.ctime_ns || now->dev != info_.dev ||
      now->ino != info_.ino)
    return Changed();
  return CheckEndsAtSize();
}

Status FileSource::Changed() const {
  return Status::IOError(path_, "changed while being uploaded");
}

}  // namespace ferry::remote

namespace ferry::remote {

ConcatSource::ConcatSource(Env* env, std::vector<PutPart> parts,
                           std::string root)
    : env_(env), parts_(std::move(parts)), root_(std::move(root)) {
  for (const PutPart& p : parts_) {
    starts_.push_back(size_);
    size_ += p.size;
  }
  starts_.push_back(size_);
}

Status ConcatSource::OpenPart(size_t i) {
  if (open_ == i) return Status::OK();
  if (file_) {
    Status s = file_->CheckUnchanged();
    file_.reset();
    open_ = SIZE_MAX;
    FERRY_RETURN_IF_ERROR(s);
  }
  FERRY_ASSIGN_OR_RETURN(file_, FileSource::Open(env_, parts_[i].path, root_));
  if (file_->size() != parts_[i].size) {
    Status s = Status::IOError(
        parts_[i].path, "changed while being uploaded (" +
                            std::to_string(file_->size()) + " bytes, was " +
                            std::to_string(parts_[i].size) + ")");
    file_.reset();
    return s;
  }
  open_ = i;
  return Status::OK();
}

Status ConcatSource::ReadAt(uint64_t offset, size_t n, char* scratch,
                            size_t* got) {
  *got = 0;
  while (*got < n && offset < size_) {
    // The part holding offset (empty parts are skipped over).
    size_t i = static_cast<size_t>(
        std::upper_bound(starts_.begin(), starts_.end(), offset) -
        starts_.begin() - 1);
    FERRY_RETURN_IF_ERROR(OpenPart(i));
    const uint64_t in = offset - starts_[i];
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(n - *got, parts_[i].size - in));
    size_t read = 0;
    FERRY_RETURN_IF_ERROR(file_->ReadAt(in, want, scratch + *got, &read));
    if (read < want) return Status::IOError(parts_[i].path, "read short");
    FERRY_RETURN_IF_ERROR(
        HashInOrder(i, in, std::string_view(scratch + *got, read)));
    *got += read;
    offset += read;
  }
  return Status::OK();
}

Status ConcatSource::HashInOrder(size_t i, uint64_t in, std::string_view data) {
  const PutPart& p = parts_[i];
  if (!p.has_hash) return Status::OK();
  if (in == 0) {
    hasher_.Reset();
    hashing_ = i;
    hashed_ = 0;
  } else if (hashing_ != i || in != hashed_) {
    hashing_ = SIZE_MAX;  // out of order (a retried part): not checked
    return Status::OK();
  }
  hasher_.Update(data);
  hashed_ += data.size();
  if (hashed_ < p.size) return Status::OK();
  hashing_ = SIZE_MAX;
  if (hasher_.Digest() == p.hash) return Status::OK();
  return Status::IOError(p.path,
                         "changed while it was published (its bytes are no "
                         "longer those hashed): nothing uploaded; rerun");
}

Status ConcatSource::CheckUnchanged() const {
  return file_ ? file_->CheckUnchanged() : Status::OK();
}

Result<std::unique_ptr<CheckedSource>> OpenPutSource(Env* env,
                                                     const PutItem& item) {
  if (!item.srcs.empty())
    return std::unique_ptr<CheckedSource>(
        std::make_unique<ConcatSource>(env, item.srcs, item.root));
  FERRY_ASSIGN_OR_RETURN(auto f, FileSource::Open(env, item.src, item.root));
  return std::unique_ptr<CheckedSource>(std::move(f));
}

}  // namespace ferry::remote
