#include "remote/byteranges.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ferry::remote {
namespace {

// What a reader handed over: each part's range and bytes.
struct Seen {
  std::vector<std::pair<ContentRange, std::string>> parts;
  int whole = 0;        // parts whose closing boundary came
  Status stop_at_part;  // returned by the part callback when set
};

std::unique_ptr<ByterangesReader> Reader(Seen* seen,
                                         std::string boundary = "B0UND") {
  return std::make_unique<ByterangesReader>(
      std::move(boundary),
      [seen](const ContentRange& cr) {
        if (!seen->stop_at_part.ok()) return seen->stop_at_part;
        seen->parts.emplace_back(cr, "");
        return Status::OK();
      },
      [seen](std::string_view data) {
        seen->parts.back().second.append(data);
        return Status::OK();
      },
      [seen] { ++seen->whole; });
}

// Feeds body in pieces of `piece` bytes (0: whole); then Finish.
Status FeedAll(ByterangesReader* r, std::string_view body, size_t piece) {
  if (piece == 0) piece = body.size();
  for (size_t at = 0; at < body.size(); at += piece)
    FERRY_RETURN_IF_ERROR(r->Feed(body.substr(at, piece)));
  return r->Finish();
}

// nginx's layout: a CRLF before the first boundary; each part's bytes
// followed by CRLF and the next boundary; the closing one, then CRLF.
const std::string kNginx =
    "\r\n--B0UND\r\n"
    "Content-Type: application/octet-stream\r\n"
    "Content-Range: bytes 0-4/100\r\n"
    "\r\n"
    "he\r\nl"
    "\r\n--B0UND\r\n"
    "Content-Type: application/octet-stream\r\n"
    "content-range:  bytes 90-99/100 \r\n"
    "\r\n"
    "--B0UND--\r"
    "\r\n--B0UND--\r\n";

TEST(ByterangesTest, ReadsEachPartWholeOrOneByteAtATime) {
  for (size_t piece : {size_t{0}, size_t{1}, size_t{3}, size_t{7}}) {
    Seen seen;
    auto r = Reader(&seen);
    ASSERT_TRUE(FeedAll(r.get(), kNginx, piece).ok()) << piece;
    ASSERT_EQ(seen.parts.size(), 2u) << piece;
    EXPECT_EQ(seen.parts[0].first.first, 0u);
    EXPECT_EQ(seen.parts[0].first.last, 4u);
    EXPECT_EQ(seen.parts[0].first.total, 100u);
    // Bytes that look like line ends or boundaries are data inside a part.
    EXPECT_EQ(seen.parts[0].second, "he\r\nl");
    EXPECT_EQ(seen.parts[1].first.first, 90u);
    EXPECT_EQ(seen.parts[1].second, "--B0UND--\r");
    EXPECT_EQ(seen.whole, 2);
    EXPECT_TRUE(r->done());
  }
}

TEST(ByterangesTest, TakesABoundaryAtTheStartAPreambleAndBareLineFeeds) {
  Seen seen;
  auto r = Reader(&seen);
  const std::string body =
      "--B0UND\r\nContent-Range: bytes 3-3/*\r\n\r\nx\r\n--B0UND--";
  ASSERT_TRUE(FeedAll(r.get(), body, 1).ok());
  ASSERT_EQ(seen.parts.size(), 1u);
  EXPECT_FALSE(seen.parts[0].first.total.has_value());
  EXPECT_EQ(seen.parts[0].second, "x");

  Seen seen2;
  auto r2 = Reader(&seen2);
  const std::string with_preamble =
      "a preamble --B0UND mentioned\nand more\n--B0UND\n"
      "Content-Range: bytes 0-1/2\n\nab\r\n--B0UND--\r\nan epilogue";
  ASSERT_TRUE(FeedAll(r2.get(), with_preamble, 2).ok());
  ASSERT_EQ(seen2.parts.size(), 1u);
  EXPECT_EQ(seen2.parts[0].second, "ab");
}

TEST(ByterangesTest, RefusesWhatIsNotAWellFormedBody) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"no Content-Range", "--B0UND\r\nContent-Type: x\r\n\r\nab\r\n--B0UND--"},
      {"a part longer than its range",
       "--B0UND\r\nContent-Range: bytes 0-1/9\r\n\r\nabc\r\n--B0UND--"},
      {"a part shorter than its range",
       "--B0UND\r\nContent-Range: bytes 0-3/9\r\n\r\nab\r\n--B0UND--"},
      {"ends before the closing boundary",
       "--B0UND\r\nContent-Range: bytes 0-1/9\r\n\r\nab\r\n--B0UND\r\n"},
      {"ends inside a part", "--B0UND\r\nContent-Range: bytes 0-5/9\r\n\r\nab"},
      {"empty body", ""},
      {"an unsatisfied range", "--B0UND\r\nContent-Range: bytes */9\r\n\r\n"},
      {"a range past the total",
       "--B0UND\r\nContent-Range: bytes 5-9/9\r\n\r\nabcde\r\n--B0UND--"},
      {"two Content-Ranges",
       "--B0UND\r\nContent-Range: bytes 0-0/9\r\nContent-Range: bytes 0-0/9"
       "\r\n\r\na\r\n--B0UND--"},
      {"no headers (a bare line feed)", "--B0UND\r\n\nab\r\n--B0UND--"},
      {"no headers", "--B0UND\r\n\r\nab\r\n--B0UND--"},
      {"a header line without a colon",
       "--B0UND\r\nContent-Range bytes 0-0/9\r\n\r\na\r\n--B0UND--"},
      {"text after a boundary",
       "--B0UND junk\r\nContent-Range: bytes 0-0/9\r\n\r\na\r\n--B0UND--"},
      {"another boundary",
       "--B0UND\r\nContent-Range: bytes 0-0/9\r\n\r\na\r\n--OTHER--"},
      {"no boundary at all", std::string(5000, 'x')},
      {"headers without end", "--B0UND\r\n" + std::string(10000, 'h')},
      {"a long epilogue",
       "--B0UND\r\nContent-Range: bytes 0-0/9\r\n\r\na\r\n--B0UND--" +
           std::string(5000, 'e')},
  };
  for (const auto& [why, body] : bad) {
    for (size_t piece : {size_t{0}, size_t{1}}) {
      Seen seen;
      auto r = Reader(&seen);
      Status s = FeedAll(r.get(), body, piece);
      EXPECT_FALSE(s.ok()) << why << " piece " << piece;
      EXPECT_TRUE(s.IsUnavailable()) << why << ": " << s.ToString();
    }
  }
}

TEST(ByterangesTest, APartShortOfItsRangeIsNeverWhole) {
  // The server sends a byte less than the Content-Range says: the reader
  // takes the "\r" before the boundary as the part's last byte, and then
  // finds no boundary. The part had all its bytes counted, but is not whole.
  Seen seen;
  auto r = Reader(&seen);
  Status s = FeedAll(r.get(),
                     "--B0UND\r\nContent-Range: bytes 0-2/9\r\n\r\nab"
                     "\r\n--B0UND--",
                     1);
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  ASSERT_EQ(seen.parts.size(), 1u);
  EXPECT_EQ(seen.parts[0].second, "ab\r");
  EXPECT_EQ(seen.whole, 0);
}

TEST(ByterangesTest, APartRefusedByTheCallerStopsTheReading) {
  Seen seen;
  seen.stop_at_part = Status::FailedPrecondition("k", "object changed");
  auto r = Reader(&seen);
  Status s = r->Feed(kNginx);
  EXPECT_TRUE(s.IsFailedPrecondition()) << s.ToString();
  EXPECT_TRUE(seen.parts.empty());
  EXPECT_FALSE(r->Feed("more").ok());
  EXPECT_FALSE(r->Finish().ok());
}

TEST(ByterangesTest, FindsTheBoundaryOfAMultipartByterangesType) {
  EXPECT_EQ(ByterangesBoundary("multipart/byteranges; boundary=00000001"),
            "00000001");
  EXPECT_EQ(
      ByterangesBoundary("Multipart/ByteRanges;charset=x;BOUNDARY=\"a b\""),
      "a b");
  EXPECT_FALSE(ByterangesBoundary("application/octet-stream").has_value());
  EXPECT_FALSE(ByterangesBoundary("multipart/byteranges").has_value());
  EXPECT_FALSE(
      ByterangesBoundary("multipart/byteranges; boundary=").has_value());
  EXPECT_FALSE(ByterangesBoundary("multipart/mixed; boundary=x").has_value());
  EXPECT_FALSE(ByterangesBoundary("multipart/byteranges; boundary=" +
                                  std::string(71, 'x'))
                   .has_value());
}

TEST(ByterangesTest, AsksForSeveralRangesInOneHeader) {
  EXPECT_EQ(MultiRangeHeader({{0, 5}, {90, 10}, {200, 1}}),
            "bytes=0-4,90-99,200-200");
}

}  // namespace
}  // namespace ferry::remote
