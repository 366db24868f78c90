#include "ferry/status.h"

#include <cerrno>
#include <cstring>

namespace ferry {

Status::Status(Code code, std::string_view msg, std::string_view msg2)
    : state_(std::make_unique<State>()) {
  state_->code = code;
  state_->msg.assign(msg);
  if (!msg2.empty()) {
    state_->msg.append(": ");
    state_->msg.append(msg2);
  }
}

Status::Status(const Status& other)
    : state_(other.state_ ? std::make_unique<State>(*other.state_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) {
    state_ = other.state_ ? std::make_unique<State>(*other.state_) : nullptr;
  }
  return *this;
}

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kNotFound:
      return "NotFound";
    case Status::Code::kCorruption:
      return "Corruption";
    case Status::Code::kInvalidArgument:
      return "InvalidArgument";
    case Status::Code::kNotSupported:
      return "NotSupported";
    case Status::Code::kIOError:
      return "IOError";
    case Status::Code::kUnavailable:
      return "Unavailable";
    case Status::Code::kResourceExhausted:
      return "ResourceExhausted";
    case Status::Code::kCancelled:
      return "Cancelled";
    case Status::Code::kFailedPrecondition:
      return "FailedPrecondition";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s = CodeName(state_->code);
  s.append(": ");
  s.append(state_->msg);
  return s;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(state_->code, context, state_->msg);
}

Status PosixError(std::string_view context, int err) {
  char buf[256];
  // GNU strerror_r returns the message pointer.
  const char* msg = strerror_r(err, buf, sizeof(buf));
  if (err == ENOENT) return Status::NotFound(context, msg);
  return Status::IOError(context, msg);
}

Status LockFileError(const std::string& path, int err) {
  const char* what = err == ELOOP    ? "a symbolic link"
                     : err == ENXIO  ? "a socket"
                     : err == EISDIR ? "a folder"
                                     : nullptr;
  if (what == nullptr) return PosixError(path, err);
  return Status::FailedPrecondition(
      path, std::string("is ") + what + ", not a lock file: remove it");
}

}  // namespace ferry
