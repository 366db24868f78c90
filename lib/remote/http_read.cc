#include "remote/http_read.h"

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "remote/range_check.h"

namespace ferry::remote {
namespace {

// Passes a GET's body on once its answer was judged: the status and
// Content-Range are those asked, the ETag unchanged, and no more bytes come
// than the answer announced.
class CheckedSink : public ByteSink {
 public:
  explicit CheckedSink(ByteSink* out) : out_(out) {}

  Status Judge(HttpBackend* backend, const std::string& what,
               const std::optional<ByteRange>& asked, std::string* etag,
               const HttpResponse& r) {
    judged_ = true;
    const std::string* answer_etag = FindHeader(r.headers, "etag");
    const bool changed =
        !etag->empty() && answer_etag != nullptr && *answer_etag != *etag;
    if (asked && r.status == 200 && !changed) {
      // The whole object of exactly the length asked from 0: the range.
      const std::string* cl = FindHeader(r.headers, "content-length");
      if (asked->offset == 0 && asked->length != ByteRange::kToEnd && cl &&
          *cl == std::to_string(asked->length)) {
        if (etag->empty() && answer_etag) *etag = *answer_etag;
        expected_ = asked->length;
        return Status::OK();
      }
      // Before any 206 from this server, it ignores Range: asking again
      // gets the same answer (after one, a glitch: retried).
      if (!backend->ranges_seen())
        return Status::NotSupported(
            what,
            "the server ignores Range (answered 200 with the whole "
            "object to " +
                RangeHeader(*asked) + ")");
    }
    // Asked past the end: the caller's mistake, not worth a retry.
    const std::string* cr = FindHeader(r.headers, "content-range");
    if (asked && asked->length != ByteRange::kToEnd && r.status == 206 && cr) {
      auto c = ParseContentRange(*cr);
      if (c && c->total && asked->offset + asked->length > *c->total) {
        return Status::IOError(
            what, RangeHeader(*asked) + " ends beyond the end of the object (" +
                      *cr + ")");
      }
    }
    FERRY_ASSIGN_OR_RETURN(GetAnswer a,
                           CheckGetAnswer(what, asked, *etag, false, r));
    if (etag->empty()) *etag = a.etag;
    expected_ = a.length;
    if (r.status == 206) backend->set_ranges_seen();
    return Status::OK();
  }

  Status Append(std::string_view data) override {
    if (bytes_ + data.size() > expected_)
      return Status::Unavailable("body longer than announced");
    bytes_ += data.size();
    return out_->Append(data);
  }

  bool judged() const { return judged_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t expected() const { return expected_; }

 private:
  ByteSink* out_;
  bool judged_ = false;
  uint64_t bytes_ = 0, expected_ = ByteRange::kToEnd;
};

bool Is2xx(long status) { return status >= 200 && status < 300; }

}  // namespace

Status ReadObject(HttpBackend* backend, HttpClient* client,
                  std::string_view key, const std::string& what,
                  const ByteRange& range, const ReadOptions& options,
                  ByteSink* sink) {
  const RetryPolicy& policy = client->policy();
  std::string etag = options.if_match;
  uint64_t done = 0;
  for (int resumes = 0;; ++resumes) {
    ByteRange cur{range.offset + done, range.length == ByteRange::kToEnd
                                           ? ByteRange::kToEnd
                                           : range.length - done};
    std::optional<ByteRange> asked;
    if (cur.offset != 0 || cur.length != ByteRange::kToEnd) asked = cur;
    CheckedSink checked(sink);
    auto check = [&](const HttpResponse& r) {
      return checked.Judge(backend, what, asked, &etag, r);
    };
    auto r = client->Perform([&] { return backend->MakeGet(key, asked, etag); },
                             &checked, 64 << 10, check);
    done += checked.bytes();
    Status s = r.status();
    if (s.ok() && Is2xx(r->status)) {
      if (!checked.judged()) s = check(*r);
      if (s.ok() && checked.expected() != ByteRange::kToEnd &&
          checked.bytes() < checked.expected())
        s = Status::Unavailable(what, "short body");
      if (s.ok()) return Status::OK();
    } else if (s.ok()) {
      if (r->status == 416 && cur.length == ByteRange::kToEnd) {
        // Nothing from cur.offset on: fine if that is the object's end.
        auto st = backend->Stat(key);
        if (st.ok() && st->size == cur.offset &&
            (etag.empty() || st->etag == etag))
          return Status::OK();
      }
      return backend->ErrorFor(key, *r);
    }
    // The client retried what failed before a byte was kept; what failed
    // after goes on from the first byte not kept.
    if (!RetryPolicy::IsRetryable(s) || checked.bytes() == 0 ||
        resumes >= policy.max_retries)
      return s;
    std::this_thread::sleep_for(
        std::chrono::milliseconds(policy.BackoffMs(resumes + 1)));
  }
}

Result<SmallObject> ReadSmallIfChanged(HttpBackend* backend, HttpClient* client,
                                       std::string_view key,
                                       const std::string& what,
                                       std::string_view if_none_match,
                                       uint64_t max_bytes) {
  auto r = client->Perform(
      [&] { return backend->MakeGetIfNoneMatch(key, if_none_match); }, nullptr,
      max_bytes);
  if (!r.ok()) return r.status();  // larger than max_bytes: IOError
  SmallObject out;
  const std::string* etag = FindHeader(r->headers, "etag");
  if (r->status == 304) {
    out.unchanged = true;
    out.etag = etag ? *etag : std::string(if_none_match);
    return out;
  }
  if (r->status != 200) {
    if (Is2xx(r->status))
      return Status::IOError(what, "answered " + std::to_string(r->status) +
                                       " to a GET of the whole object");
    return backend->ErrorFor(key, *r);
  }
  out.etag = etag ? *etag : "";
  out.unchanged = !if_none_match.empty() && out.etag == if_none_match;
  if (!out.unchanged) out.bytes = std::move(r->body);
  return out;
}

}  // namespace ferry::remote
