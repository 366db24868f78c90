#include "remote/range_check.h"

#include <charconv>
#include <string>

namespace ferry::remote {
namespace {

std::optional<uint64_t> ParseU64(std::string_view s) {
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string Describe(const ByteRange& r) {
  return r.length == ByteRange::kToEnd
             ? std::to_string(r.offset) + "-"
             : std::to_string(r.offset) + "-" +
                   std::to_string(r.offset + r.length - 1);
}

}  // namespace

std::optional<ContentRange> ParseContentRange(std::string_view v) {
  if (v.substr(0, 6) != "bytes ") return std::nullopt;
  v.remove_prefix(6);
  size_t slash = v.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  ContentRange cr;
  std::string_view total = v.substr(slash + 1), span = v.substr(0, slash);
  if (total != "*") {
    cr.total = ParseU64(total);
    if (!cr.total) return std::nullopt;
  }
  if (span == "*") {
    if (!cr.total) return std::nullopt;
    cr.unsatisfied = true;
    return cr;
  }
  size_t dash = span.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  auto first = ParseU64(span.substr(0, dash));
  auto last = ParseU64(span.substr(dash + 1));
  if (!first || !last || *last < *first) return std::nullopt;
  if (cr.total && *last >= *cr.total) return std::nullopt;
  cr.first = *first;
  cr.last = *last;
  return cr;
}

std::string RangeHeader(const ByteRange& range) {
  return "bytes=" + Describe(range);
}

std::string MultiRangeHeader(const std::vector<ByteRange>& ranges) {
  std::string h = "bytes=";
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (i > 0) h += ',';
    h += Describe(ranges[i]);
  }
  return h;
}

Result<GetAnswer> CheckGetAnswer(std::string_view what,
                                 const std::optional<ByteRange>& range,
                                 std::string_view etag, bool clip_ok,
                                 const HttpResponse& response) {
  const std::string w(what);
  GetAnswer a;
  if (const std::string* e = FindHeader(response.headers, "etag")) a.etag = *e;
  if (response.status == 412)
    return Status::FailedPrecondition(w, "object changed (412)");
  if (!etag.empty() && !a.etag.empty() && a.etag != etag) {
    return Status::FailedPrecondition(w, "object changed (ETag " + a.etag +
                                             ", expected " + std::string(etag) +
                                             ")");
  }
  std::optional<uint64_t> content_length;
  if (const std::string* cl = FindHeader(response.headers, "content-length")) {
    content_length = ParseU64(*cl);
    if (!content_length)
      return Status::Unavailable(w, "bad Content-Length: " + *cl);
  }
  const std::string* cr_text = FindHeader(response.headers, "content-range");
  if (!range) {
    if (response.status != 200)
      return Status::Unavailable(
          w, "answered " + std::to_string(response.status) + " to a GET");
    a.length = content_length.value_or(ByteRange::kToEnd);
    a.total = content_length;
    return a;
  }
  // An empty object has no byte to give: 416 "bytes */0" for a range from 0.
  if (response.status == 416 && clip_ok && range->offset == 0 && cr_text) {
    auto cr = ParseContentRange(*cr_text);
    if (cr && cr->unsatisfied && cr->total == 0u) {
      a.total = 0;
      return a;
    }
  }
  // s3rver answers a range of an empty object with 206 "bytes 0-0/0" (and
  // Content-Length 1, but sends no body): an impossible range that can only
  // mean "empty".
  if (response.status == 206 && clip_ok && range->offset == 0 && cr_text &&
      *cr_text == "bytes 0-0/0") {
    a.total = 0;
    return a;
  }
  // A 200 to the first request from 0, which has no condition (clip_ok), is
  // the whole object: a server that ignores Range (python3 -m http.server),
  // or nginx's answer for an empty file. Its size must be known.
  if (response.status == 200 && clip_ok && range->offset == 0 && etag.empty() &&
      content_length) {
    a.length = *content_length;
    a.total = content_length;
    return a;
  }
  if (response.status == 200) {
    return Status::Unavailable(
        w, "answered 200 (the whole object) to Range " + Describe(*range));
  }
  if (response.status != 206) {
    return Status::Unavailable(w, "answered " +
                                      std::to_string(response.status) +
                                      " to Range " + Describe(*range));
  }
  if (cr_text == nullptr)
    return Status::Unavailable(w, "206 without Content-Range");
  auto cr = ParseContentRange(*cr_text);
  if (!cr || cr->unsatisfied)
    return Status::Unavailable(w, "bad Content-Range: " + *cr_text);
  bool ok = cr->first == range->offset;
  if (ok && range->length != ByteRange::kToEnd) {
    uint64_t want_last = range->offset + range->length - 1;
    ok = cr->last == want_last || (clip_ok && cr->last < want_last &&
                                   cr->total && cr->last + 1 == *cr->total);
  } else if (ok) {
    ok = !cr->total || cr->last + 1 == *cr->total;
  }
  if (!ok) {
    return Status::Unavailable(w, "Content-Range " + *cr_text +
                                      " is not the range asked, " +
                                      Describe(*range));
  }
  a.offset = cr->first;
  a.length = cr->last - cr->first + 1;
  a.total = cr->total;
  if (content_length && *content_length != a.length) {
    return Status::Unavailable(
        w, "Content-Length " + std::to_string(*content_length) +
               " does not match Content-Range " + *cr_text);
  }
  return a;
}

}  // namespace ferry::remote
