#include "remote/byteranges.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace ferry::remote {
namespace {

// Caps on what is held while looking for structure: a server that sends
// more is not one to trust.
constexpr size_t kMaxPreamble = 1024;
constexpr size_t kMaxHeaders = 8192;
constexpr size_t kMaxLine = 1024;
constexpr uint64_t kMaxEpilogue = 4096;

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string> ByterangesBoundary(std::string_view type) {
  size_t semi = type.find(';');
  if (!EqualsNoCase(Trim(type.substr(0, semi)), "multipart/byteranges"))
    return std::nullopt;
  while (semi != std::string_view::npos) {
    std::string_view rest = type.substr(semi + 1);
    size_t next = rest.find(';');
    std::string_view param = Trim(rest.substr(0, next));
    semi = next == std::string_view::npos ? next : semi + 1 + next;
    size_t eq = param.find('=');
    if (eq == std::string_view::npos ||
        !EqualsNoCase(Trim(param.substr(0, eq)), "boundary"))
      continue;
    std::string_view value = Trim(param.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    // RFC 2046: 1 to 70 characters, none of them CR or LF.
    if (value.empty() || value.size() > 70 ||
        value.find_first_of("\r\n") != std::string_view::npos)
      return std::nullopt;
    return std::string(value);
  }
  return std::nullopt;
}

ByterangesReader::ByterangesReader(std::string boundary, PartFn on_part,
                                   DataFn on_data, EndFn on_end)
    : boundary_("--" + std::move(boundary)),
      delimiter_("\r\n" + boundary_),
      on_part_(std::move(on_part)),
      on_data_(std::move(on_data)),
      on_end_(std::move(on_end)) {}

Status ByterangesReader::Fail(std::string why) {
  state_ = State::kFailed;
  return Status::Unavailable("multipart/byteranges answer", std::move(why));
}

Status ByterangesReader::Feed(std::string_view data) {
  while (!data.empty()) FERRY_RETURN_IF_ERROR(Step(&data));
  return Status::OK();
}

Status ByterangesReader::Step(std::string_view* data) {
  switch (state_) {
    case State::kFailed:
      return Fail("read after an error");
    case State::kData: {
      size_t n = static_cast<size_t>(std::min<uint64_t>(left_, data->size()));
      Status s = on_data_(data->substr(0, n));
      if (!s.ok()) {
        state_ = State::kFailed;
        return s;
      }
      data->remove_prefix(n);
      left_ -= n;
      if (left_ == 0) {
        state_ = State::kDelimiter;
        held_.clear();
      }
      return Status::OK();
    }
    case State::kEpilogue:
      epilogue_ += data->size();
      data->remove_prefix(data->size());
      if (epilogue_ > kMaxEpilogue)
        return Fail("more than " + std::to_string(kMaxEpilogue) +
                    " bytes after the closing boundary");
      return Status::OK();
    default:
      break;
  }
  // The other states look at one byte at a time.
  char c = data->front();
  data->remove_prefix(1);
  held_.push_back(c);
  switch (state_) {
    case State::kPreamble: {
      // The first boundary opens the body or a line of it.
      const size_t b = boundary_.size();
      if (held_.size() >= b &&
          held_.compare(held_.size() - b, b, boundary_) == 0 &&
          (held_.size() == b || held_[held_.size() - b - 1] == '\n')) {
        state_ = State::kAfterBoundary;
        held_.clear();
      } else if (held_.size() > kMaxPreamble) {
        return Fail("no boundary in its first " + std::to_string(kMaxPreamble) +
                    " bytes");
      }
      return Status::OK();
    }
    case State::kDelimiter: {
      // After a part's last byte: CRLF, then the boundary.
      if (held_.back() != delimiter_[held_.size() - 1])
        return Fail("a part does not end with the boundary");
      if (held_.size() == delimiter_.size()) {
        state_ = State::kAfterBoundary;
        held_.clear();
        if (on_end_) on_end_();
      }
      return Status::OK();
    }
    case State::kAfterBoundary: {
      if (held_ == "--") {  // the closing boundary
        state_ = State::kEpilogue;
        held_.clear();
        return Status::OK();
      }
      if (c != '\n') {
        if (held_.size() > kMaxLine) return Fail("a boundary line is too long");
        return Status::OK();
      }
      if (!Trim(held_.substr(0, held_.size() - 1)).empty())
        return Fail("text after a boundary");
      state_ = State::kHeaders;
      held_.clear();
      range_.reset();
      return Status::OK();
    }
    case State::kHeaders: {
      if (held_.size() > kMaxHeaders)
        return Fail("a part's headers pass " + std::to_string(kMaxHeaders) +
                    " bytes");
      if (c != '\n') return Status::OK();
      // The line just ended: it starts after the previous '\n'.
      size_t start = 0;
      if (held_.size() >= 2) {
        size_t nl = held_.rfind('\n', held_.size() - 2);
        if (nl != std::string::npos) start = nl + 1;
      }
      std::string_view line(held_.data() + start, held_.size() - 1 - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) return EndHeaders();
      size_t colon = line.find(':');
      if (colon == std::string_view::npos)
        return Fail("a part's header line has no colon");
      if (EqualsNoCase(Trim(line.substr(0, colon)), "content-range")) {
        std::string_view value = Trim(line.substr(colon + 1));
        auto cr = ParseContentRange(value);
        if (range_ || !cr || cr->unsatisfied)
          return Fail("a part's Content-Range is bad or repeated: " +
                      std::string(value));
        range_ = cr;
      }
      return Status::OK();
    }
    default:
      return Fail("unexpected state");
  }
}

Status ByterangesReader::EndHeaders() {
  held_.clear();
  if (!range_) return Fail("a part has no Content-Range");
  Status s = on_part_(*range_);
  if (!s.ok()) {
    state_ = State::kFailed;
    return s;
  }
  left_ = range_->last - range_->first + 1;
  state_ = State::kData;
  return Status::OK();
}

Status ByterangesReader::Finish() const {
  if (state_ == State::kEpilogue) return Status::OK();
  return Status::Unavailable("multipart/byteranges answer",
                             "the body ended before its closing boundary");
}

}  // namespace ferry::remote
