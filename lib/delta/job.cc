// lib/delta: driving a librsync job (docs/delta.md).
#include "delta/job.h"

#include <mutex>

namespace ferry::delta {
namespace {

constexpr size_t kOutBuffer = 64 << 10;  // librsync advises >= 32 KiB

void IgnoreTrace(rs_loglevel, const char*) {}

}  // namespace

Status RsStatus(rs_result r, std::string_view what) {
  std::string w(what);
  switch (r) {
    case RS_DONE:
      return Status::OK();
    case RS_INPUT_ENDED:
      return Status::Corruption(w, "truncated (ends before its last command)");
    case RS_BAD_MAGIC:
      return Status::Corruption(w, "bad magic number");
    case RS_CORRUPT:
    case RS_SYNTAX_ERROR:
    case RS_UNIMPLEMENTED:
      return Status::Corruption(w, "invalid command or value (librsync: " +
                                       std::string(rs_strerror(r)) + ")");
    case RS_MEM_ERROR:
      return Status::ResourceExhausted(w, "out of memory (librsync)");
    case RS_IO_ERROR:
      return Status::IOError(w, rs_strerror(r));
    default:
      return Status::InvalidArgument(
          w, std::string("librsync: ") + rs_strerror(r));
  }
}

void QuietLibrsync() {
  static std::once_flag once;
  std::call_once(once, [] { rs_trace_to(IgnoreTrace); });
}

Job::Job(rs_job_t* job, std::string what, ByteSink out)
    : job_(job),
      what_(std::move(what)),
      out_(std::move(out)),
      buf_(kOutBuffer) {}

Job::~Job() {
  if (job_) rs_job_free(job_);
}

Status Job::Fail(Status s) {
  if (error_.ok()) error_ = s;
  return s;
}

Status Job::Feed(std::string_view data, bool eof) {
  if (!error_.ok()) return error_;
  if (!job_)
    return Fail(Status::ResourceExhausted(what_, "librsync job not created"));
  if (done_) {
    if (data.empty()) return Status::OK();
    return Fail(Status::Corruption(what_, "bytes after its end"));
  }
  std::string_view in = data;
  if (!pending_.empty()) {
    pending_.append(data);
    in = pending_;
  }
  rs_buffers_t b{};
  b.next_in = const_cast<char*>(in.data());
  b.avail_in = in.size();
  b.eof_in = eof ? 1 : 0;
  for (;;) {
    const size_t in_before = b.avail_in;
    b.next_out = buf_.data();
    b.avail_out = buf_.size();
    rs_result r = rs_job_iter(job_, &b);
    const size_t produced = buf_.size() - b.avail_out;
    if (!callback_error_.ok()) return Fail(callback_error_);
    if (produced > 0) {
      Status s = out_(std::string_view(buf_.data(), produced));
      if (!s.ok()) return Fail(s);
    }
    if (r == RS_DONE) {
      done_ = true;
      if (b.avail_in > 0)
        return Fail(Status::Corruption(what_, "bytes after its end"));
      break;
    }
    if (r != RS_BLOCKED) return Fail(RsStatus(r, what_));
    if (produced == 0 && b.avail_in == in_before) {
      // No progress: librsync waits for input it did not get.
      if (eof)
        return Fail(Status::Corruption(
            what_, "truncated (ends before its last command)"));
      break;
    }
  }
  std::string rest(b.next_in, b.avail_in);
  pending_ = std::move(rest);
  return Status::OK();
}

}  // namespace ferry::delta
