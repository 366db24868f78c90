// Status: the one error type of libferry (after leveldb's Status).
//
// A Status is either OK (free: no allocation) or carries a code and a message
// that names what failed (a file, a record, an offset). Library error codes
// (errno, CURLcode, rs_result, zstd, libpng/libjpeg) are converted to Status in
// exactly one adapter each. Status is a value type; distinct objects may be
// used from different threads freely.
#ifndef FERRY_STATUS_H_
#define FERRY_STATUS_H_

#include <memory>
#include <string>
#include <string_view>

#include "ferry/export.h"

namespace ferry {

class [[nodiscard]] FERRY_EXPORT Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound,
    kCorruption,       // integrity failure: bad checksum, bad format
    kInvalidArgument,  // caller error, bad option or bad input value
    kNotSupported,
    kIOError,            // local IO failure (disk full, permission, ...)
    kUnavailable,        // transient, retryable (network, 5xx, timeouts)
    kResourceExhausted,  // a configured limit was hit (pixels, memory)
    kCancelled,
    kFailedPrecondition,  // a condition on the state failed (object changed)
  };

  Status() noexcept = default;
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&& other) noexcept = default;
  Status& operator=(Status&& other) noexcept = default;
  ~Status() = default;

  static Status OK() { return Status(); }
  // A status rebuilt from its parts (as saved earlier): code and message.
  static Status FromCode(Code code, std::string_view msg) {
    return code == Code::kOk ? Status() : Status(code, msg, {});
  }
  static Status NotFound(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kNotFound, msg, msg2);
  }
  static Status Corruption(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kCorruption, msg, msg2);
  }
  static Status InvalidArgument(std::string_view msg,
                                std::string_view msg2 = {}) {
    return Status(Code::kInvalidArgument, msg, msg2);
  }
  static Status NotSupported(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kNotSupported, msg, msg2);
  }
  static Status IOError(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kIOError, msg, msg2);
  }
  static Status Unavailable(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kUnavailable, msg, msg2);
  }
  static Status ResourceExhausted(std::string_view msg,
                                  std::string_view msg2 = {}) {
    return Status(Code::kResourceExhausted, msg, msg2);
  }
  static Status Cancelled(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kCancelled, msg, msg2);
  }

  static Status FailedPrecondition(std::string_view msg,
                                   std::string_view msg2 = {}) {
    return Status(Code::kFailedPrecondition, msg, msg2);
  }

  bool ok() const { return state_ == nullptr; }
  Code code() const { return state_ ? state_->code : Code::kOk; }
  bool IsNotFound() const { return code() == Code::kNotFound; }
  bool IsCorruption() const { return code() == Code::kCorruption; }
  bool IsInvalidArgument() const { return code() == Code::kInvalidArgument; }
  bool IsIOError() const { return code() == Code::kIOError; }
  bool IsUnavailable() const { return code() == Code::kUnavailable; }
  bool IsNotSupported() const { return code() == Code::kNotSupported; }
  bool IsFailedPrecondition() const {
    return code() == Code::kFailedPrecondition;
  }
  // Transient failures worth retrying (rclone's Retry class).
  bool IsRetryable() const { return IsUnavailable(); }

  // The message alone ("" when OK).
  std::string_view message() const {
    return state_ ? std::string_view(state_->msg) : std::string_view();
  }
  // "OK" or "<Code name>: <message>".
  std::string ToString() const;

  // Returns a copy with `context + ": "` in front of the message.
  Status WithContext(std::string_view context) const;

 private:
  Status(Code code, std::string_view msg, std::string_view msg2);
  struct State {
    Code code;
    std::string msg;
  };
  std::unique_ptr<State> state_;
};

FERRY_EXPORT const char* CodeName(Status::Code code);

// errno adapter: ENOENT becomes NotFound, everything else IOError.
// The message is "<context>: <strerror(err)>".
FERRY_EXPORT Status PosixError(std::string_view context, int err);
// The error of an O_NOFOLLOW open of a lock file at path: what is in its
// place said plainly (a link, a socket, a folder: "remove it") where
// strerror says "Too many levels of symbolic links" or "No such device or
// address"; else PosixError.
FERRY_EXPORT Status LockFileError(const std::string& path, int err);

}  // namespace ferry

#define FERRY_RETURN_IF_ERROR(expr)        \
  do {                                     \
    ::ferry::Status _ferry_st = (expr);    \
    if (!_ferry_st.ok()) return _ferry_st; \
  } while (0)

#endif  // FERRY_STATUS_H_
