// ByteSources (ferry/remote.h) for writes: bytes in memory, and a local file
// read at any offset (a retried request starts over).
// Thread-safety: one thread at a time per source.
#ifndef FERRY_LIB_REMOTE_BYTE_SOURCES_H_
#define FERRY_LIB_REMOTE_BYTE_SOURCES_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/remote.h"
#include "ferry/transfer.h"

namespace ferry::remote {

// The bytes of data (not owned: they must outlive the source).
class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string_view data) : data_(data) {}
  uint64_t size() const override { return data_.size(); }
  Status ReadAt(uint64_t offset, size_t n, char* scratch, size_t* got) override;

 private:
  std::string_view data_;
};

// The body of an upload: its bytes unchanged from start to end is checked
// after the last one went.
class CheckedSource : public ByteSource {
 public:
  virtual Status CheckUnchanged() const = 0;
};

// A local regular file as the body of requests, its size taken at Open.
class FileSource : public CheckedSource {
 public:
  // InvalidArgument for anything but a regular file (a FIFO, a device, a
  // socket: "not a regular file (FIFO)"), never opened; IOError "changed
  // while being uploaded" for one that reads past its size (/proc files).
  // root (a real path; empty: no check): the file opened must lie below
  // it, else IOError (PutItem::root).
  static Result<std::unique_ptr<FileSource>> Open(Env* env,
                                                  const std::string& path,
                                                  const std::string& root = "");
  uint64_t size() const override { return size_; }
  // A file that ends before the size it had at the start changed.
  Status ReadAt(uint64_t offset, size_t n, char* scratch, size_t* got) override;
  // After the last byte went: the file still has its size (and no byte
  // past it), and its name the same file with the same mtime and ctime (not
  // written since Open).
  Status CheckUnchanged() const override;

 private:
  Status Changed() const;
  Status CheckEndsAtSize() const;

  std::unique_ptr<RandomAccessFile> file_;
  uint64_t size_ = 0;
  std::string path_;
  Env* env_ = nullptr;
  FileInfo info_;  // at Open
};

// Local files one after another (a pack, PutItem::srcs): each opened as
// FileSource (same checks, one open at a time, when a read reaches it) and
// held to the size given (the size the publisher hashed); one that is not,
// or that changed by the time a read moves past it, fails the upload. A part
// with a hash is hashed as reads pass over it from its first byte to its
// last in order: bytes that are not the hash fail the read that ends it, so
// the upload never completes with them (a file rewritten between the
// publisher's hash and this read, whose size and stamps the open took).
class ConcatSource : public CheckedSource {
 public:
  ConcatSource(Env* env, std::vector<PutPart> parts, std::string root);
  uint64_t size() const override { return size_; }
  Status ReadAt(uint64_t offset, size_t n, char* scratch, size_t* got) override;
  Status CheckUnchanged() const override;

 private:
  Status OpenPart(size_t i);
  // Feeds part i's bytes from `in` to its hash when they continue it in
  // order; at the part's end, fails unless they are its hash.
  Status HashInOrder(size_t i, uint64_t in, std::string_view data);

  Env* env_;
  std::vector<PutPart> parts_;
  std::vector<uint64_t> starts_;  // offset of each part; size_ after the last
  // The part being hashed in order (SIZE_MAX: none) and its bytes so far.
  size_t hashing_ = SIZE_MAX;
  uint64_t hashed_ = 0;
  Hasher128 hasher_;
  std::string root_;
  uint64_t size_ = 0;
  size_t open_ = SIZE_MAX;  // the part file_ holds
  std::unique_ptr<FileSource> file_;
};

// PutItem's body: its srcs one after another, else its src.
Result<std::unique_ptr<CheckedSource>> OpenPutSource(Env* env,
                                                     const PutItem& item);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_BYTE_SOURCES_H_
