// Small pieces the transfer engine's download and upload loops share
// (private): the clock and progress ticks. Backoff and retry causes are
// remote/retry.h.
#ifndef FERRY_LIB_REMOTE_TRANSFER_UTIL_H_
#define FERRY_LIB_REMOTE_TRANSFER_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ferry/transfer.h"

namespace ferry::remote {

uint64_t NowMicros();  // steady clock

// The part size of an S3 upload for a --part-size: within S3's bounds for a
// multipart part (at least 5 MiB but for the last, at most 5 GiB), as
// botocore's transfer manager keeps it; a file up to it goes as one PUT.
// Real S3 refuses a smaller part only when the upload is completed
// (EntityTooSmall), after every byte went up.
constexpr uint64_t kMinUploadPart = uint64_t(5) << 20;
constexpr uint64_t kMaxUploadPart = uint64_t(5) << 30;
inline uint64_t UploadPartSize(uint64_t part_size) {
  return std::clamp(part_size, kMinUploadPart, kMaxUploadPart);
}

// How the HTTP engine shares the process's descriptors (soft RLIMIT_NOFILE;
// a Slurm job or container may set it low): 32 are left to the rest of the
// process; of the remainder B, connections take at most B/10 (each holds a
// socket, one kept for reuse, and up to two in-progress objects' part file
// and journal), downloads opened ahead at most B/8 (a part file each, at
// most Opener::kAhead) and files waiting for one syncfs at most B/4 (at most
// Publisher::kMaxOpen). Each at least 1, so a run always makes progress.
struct DescriptorPlan {
  int connections;
  size_t ahead;
  size_t publish;
};
DescriptorPlan PlanDescriptors(uint64_t nofile_limit, int connections);
DescriptorPlan PlanDescriptors(int connections);  // this process's limit now
// options with its connections as many as the process's limit allows.
TransferOptions WithinDescriptors(TransferOptions options);

// Connections a download run opens at most: one per kBytesPerConnection of
// the bytes it is known to fetch (an item's ranges, else its listed or
// expected size), or one per kItemsPerConnection items if that is more (each
// small object costs a round trip: 10,000 of 150 bytes over 2 connections
// took 12 times as long as their upload), at least 2 (a stalled answer does
// not hold up the rest), at most `connections`; an item of unknown size
// allows them all. A few MB in a few requests go over a connection or two:
// each further one costs a handshake (TLS: a few KB) and starts with a burst
// of its initial window, and 16 bursts at once overflowed the queue of a
// 200 Mbit/s link (docs/remote.md "Connections").
inline constexpr uint64_t kBytesPerConnection = uint64_t{1} << 20;
inline constexpr uint64_t kItemsPerConnection = 8;
int ConnectionsForWork(const std::vector<GetItem>& items, int connections);

// Calls TransferOptions::progress at most five times a second, and at the end.
class ProgressTicker {
 public:
  ProgressTicker(const TransferOptions& options, TransferReport* report)
      : cb_(options.progress), report_(report) {}
  void SetFilesTotal(uint64_t n) { p_.files_total = n; }
  void AddTotal(uint64_t bytes, uint64_t already_done) {
    p_.bytes_total += bytes;
    p_.bytes_done += already_done;
  }
  void AddDone(uint64_t bytes) { p_.bytes_done += bytes; }
  // An object started over: its total and what was done of it go.
  void Undo(uint64_t total, uint64_t done) {
    p_.bytes_total -= std::min(total, p_.bytes_total);
    p_.bytes_done -= std::min(done, p_.bytes_done);
  }
  void FileDone() { ++p_.files_done; }
  void Tick(bool last);

 private:
  std::function<void(const TransferProgress&)> cb_;
  TransferReport* report_;
  TransferProgress p_;
  uint64_t last_us_ = 0;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_TRANSFER_UTIL_H_
