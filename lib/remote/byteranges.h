// Reading a multipart/byteranges body (RFC 9110 §14.6, private to
// lib/remote): the answer of an HTTP server to a GET that asked for several
// ranges at once ("Range: bytes=A-B,C-D"), which the transfer engine uses
// for sync's block reuse over http(s):// (docs/delta.md "Several ranges to
// a GET", docs/remote.md "Ranges of an object").
// The body streams through in pieces of any size, down to one byte; each
// part's Content-Range is handed over before its bytes. Strict: a part
// without a Content-Range, a header block or preamble past its cap, a body
// that does not go on with the boundary after a part's last byte, or one
// that ends before the closing boundary is an error, never data.
//
// Thread-safety: one thread at a time.
#ifndef FERRY_LIB_REMOTE_BYTERANGES_H_
#define FERRY_LIB_REMOTE_BYTERANGES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/status.h"
#include "remote/range_check.h"

namespace ferry::remote {

// The boundary of a Content-Type "multipart/byteranges; boundary=X" (X may
// be quoted), or nullopt when the type is another or has no boundary.
std::optional<std::string> ByterangesBoundary(std::string_view content_type);

class ByterangesReader {
 public:
  // A part's Content-Range, before its bytes: not OK stops the reading
  // (Feed returns it).
  using PartFn = std::function<Status(const ContentRange&)>;
  // Some of the current part's bytes, in order.
  using DataFn = std::function<Status(std::string_view)>;
  // The current part is whole: its bytes and the boundary after them came
  // (a part whose bytes came but not that boundary is not whole: the
  // server sent fewer bytes than its Content-Range says).
  using EndFn = std::function<void()>;

  ByterangesReader(std::string boundary, PartFn on_part, DataFn on_data,
                   EndFn on_end = nullptr);

  // The next piece of the body. After an error the reader stays failed.
  Status Feed(std::string_view data);
  // The body ended: OK only after the closing boundary.
  Status Finish() const;
  bool done() const { return state_ == State::kEpilogue; }

 private:
  enum class State {
    kPreamble,
    kAfterBoundary,
    kHeaders,
    kData,
    kDelimiter,
    kEpilogue,
    kFailed
  };
  Status Fail(std::string why);
  // Consumes from *data what the state takes (one byte, or a run of a
  // part's bytes or of the epilogue).
  Status Step(std::string_view* data);
  Status EndHeaders();

  const std::string boundary_;   // "--" + the boundary
  const std::string delimiter_;  // CRLF + boundary_: what follows a part
  PartFn on_part_;
  DataFn on_data_;
  EndFn on_end_;
  State state_ = State::kPreamble;
  std::string held_;                   // a line (or preamble) not yet complete
  std::optional<ContentRange> range_;  // of the part whose headers are read
  uint64_t left_ = 0;                  // bytes of the current part to come
  uint64_t epilogue_ = 0;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_BYTERANGES_H_
