#include "ferry/text.h"

#include <gtest/gtest.h>

#include <string>

namespace ferry {
namespace {

TEST(PrintableTest, ControlBytesAndBytesThatAreNotUtf8AreEscaped) {
  using std::string_literals::operator""s;
  EXPECT_EQ(Printable("plain/name.png"), "plain/name.png");
  EXPECT_EQ(Printable("a\nb\xff"), "a\\x0ab\\xff");
  EXPECT_EQ(Printable("\r\t\x1b[31m\x7f"), "\\x0d\\x09\\x1b[31m\\x7f");
  EXPECT_EQ(Printable("nul\0x"s), "nul\\x00x");
  EXPECT_EQ(Printable("back\\slash"), "back\\\\slash");  // unambiguous
  // UTF-8 as it is; C1 controls (U+0085, U+009B) escaped byte by byte.
  EXPECT_EQ(Printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(Printable("\xc2\x85\xc2\x9b\xc2\xa0"),
            "\\xc2\\x85\\xc2\\x9b\xc2\xa0");
  // A line separator and a right-to-left override (which shows "gpj.exe"
  // as "exe.jpg") escaped; their neighbours U+2027 and U+202F kept.
  EXPECT_EQ(Printable("a\xe2\x80\xa8"
                      "b\xe2\x80\xae"
                      "gpj.exe"),
            "a\\xe2\\x80\\xa8b\\xe2\\x80\\xaegpj.exe");
  EXPECT_EQ(Printable("\xe2\x81\xa6\xe2\x80\xa7\xe2\x80\xaf"),
            "\\xe2\\x81\\xa6\xe2\x80\xa7\xe2\x80\xaf");
  // Not UTF-8: a lone continuation byte, a cut sequence, an overlong form,
  // an encoded surrogate.
  EXPECT_EQ(Printable("\x80|\xe2\x82|\xc0\xaf|\xed\xa0\x80"),
            "\\x80|\\xe2\\x82|\\xc0\\xaf|\\xed\\xa0\\x80");
}

TEST(PrintableTest, AnyBytesMakeOneLine) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  const std::string shown = Printable(all);
  EXPECT_EQ(shown.find('\n'), std::string::npos);
  for (size_t i = 0; i < shown.size(); ++i)
    EXPECT_TRUE(static_cast<unsigned char>(shown[i]) >= 0x20 &&
                static_cast<unsigned char>(shown[i]) < 0x7f)
        << i;  // every lone high byte is escaped: all ASCII
}

}  // namespace
}  // namespace ferry
