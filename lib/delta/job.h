// Internal to lib/delta: one librsync job driven with caller-owned buffers
// (rs_job_iter), and the one adapter from rs_result to Status.
//
// Thread-safety: a Job is used by one thread at a time.
#ifndef FERRY_LIB_DELTA_JOB_H_
#define FERRY_LIB_DELTA_JOB_H_

#include <librsync.h>

#include <string>
#include <string_view>
#include <vector>

#include "ferry/delta.h"

namespace ferry::delta {

// `what` names the stream in messages ("signature", "delta").
Status RsStatus(rs_result r, std::string_view what);

// Silences librsync's own logging to stderr (errors come back as Status).
void QuietLibrsync();

class Job {
 public:
  // Takes ownership of job (may be null: Feed then fails).
  Job(rs_job_t* job, std::string what, ByteSink out);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // Feeds input; eof: none follows. Output goes to the sink as produced.
  // Input after the job's end is refused (Corruption), as is input that
  // ends before the job does. Errors are sticky.
  Status Feed(std::string_view data, bool eof);
  bool done() const { return done_; }
  // Lets a librsync callback report why it failed (preferred over the
  // rs_result it returns).
  void set_callback_error(Status s) {
    if (callback_error_.ok()) callback_error_ = std::move(s);
  }

 private:
  Status Fail(Status s);

  rs_job_t* job_;
  std::string what_;
  ByteSink out_;
  std::vector<char> buf_;
  std::string pending_;  // input librsync did not take yet
  bool done_ = false;
  Status error_;
  Status callback_error_;
};

}  // namespace ferry::delta

#endif  // FERRY_LIB_DELTA_JOB_H_
