#include "ferry/json.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(JsonWriterTest, NestsAndPlacesCommas) {
  JsonWriter w;
  w.BeginObject()
      .Key("a")
      .Int(-1)
      .Key("b")
      .BeginArray()
      .Uint(1)
      .String("x")
      .Bool(true)
      .Null()
      .EndArray()
      .Key("c")
      .BeginObject()
      .EndObject()
      .EndObject();
  EXPECT_EQ(w.str(), "{\"a\":-1,\"b\":[1,\"x\",true,null],\"c\":{}}\n");
}

TEST(JsonWriterTest, EscapesControlCharactersAndQuotes) {
  EXPECT_EQ(JsonWriter::Escape("a\"b\\c\n\x01é"), "\"a\\\"b\\\\c\\n\\u0001é\"");
}

TEST(JsonWriterTest, NonFiniteDoubleIsNull) {
  JsonWriter w;
  w.BeginArray().Double(1.5).Double(1.0 / 0.0).EndArray();
  EXPECT_EQ(w.str(), "[1.5,null]\n");
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

TEST(JsonParseTest, ReadsBackWhatTheWriterWrites) {
  JsonWriter w;
  w.BeginObject()
      .Key("name")
      .String("a \"q\" \n\xc3\xa9")
      .Key("n")
      .Uint(12345678901ull)
      .Key("f")
      .Double(0.5);
  w.Key("list")
      .BeginArray()
      .Int(-3)
      .Bool(true)
      .Null()
      .BeginObject()
      .EndObject()
      .EndArray()
      .EndObject();
  auto v = ParseJson(w.str());
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)["name"].str(), "a \"q\" \n\xc3\xa9");
  EXPECT_EQ((*v)["n"].uint(), 12345678901ull);
  EXPECT_EQ((*v)["f"].number(), 0.5);
  ASSERT_EQ((*v)["list"].items().size(), 4u);
  EXPECT_EQ((*v)["list"].items()[0].number(), -3);
  EXPECT_TRUE((*v)["list"].items()[1].boolean());
  EXPECT_TRUE((*v)["list"].items()[3].is_object());
  EXPECT_EQ((*v)["missing"].type(), JsonValue::Type::kNull);
  EXPECT_EQ((*ParseJson("\"\\u00e9\\ud83d\\ude00\"")).str(),
            "\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(JsonParseTest, RejectsBrokenText) {
  for (const char* bad : {"", "{", "{\"a\" 1}", "[1,]", "[1 2]", "\"open",
                          "tru", "{} x", "01x", "\"\\q\""}) {
    EXPECT_FALSE(ParseJson(bad).ok()) << bad;
  }
  EXPECT_FALSE(ParseJson(std::string(100, '[') + std::string(100, ']')).ok());
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

TEST(JsonWriterTest, NonUtf8BytesBecomeSurrogateEscapesThatReadBack) {
  const std::string name = "\xff\xfe/caf\xc3\xa9\xed\xa0\x80\xc3.png";
  const std::string lit = JsonWriter::Escape(name);
  EXPECT_EQ(lit,
            "\"\\udcff\\udcfe/caf\xc3\xa9\\udced\\udca0\\udc80\\udcc3.png\"");
  auto back = ParseJson(lit);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->str(), name);
}

TEST(JsonWriterTest, DoublesAreWrittenExactly) {
  JsonWriter w;
  w.BeginArray().Double(0.1).Double(7).Double(1.0 / 3).Double(1e300).EndArray();
  EXPECT_EQ(w.str(), "[0.1,7,0.3333333333333333,1e+300]\n");
  auto v = ParseJson(w.str());
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->items()[2].number(), 1.0 / 3);
}

TEST(JsonParseTest, UnpairedSurrogatesAndBadUtf8AreErrors) {
  for (const char* bad : {"\"\\ud800\\u0041\"", "\"\\ud800\"", "\"\\udc00\"",
                          "\"\\udfff\"", "\"\xff\"", "\"\xc3\"", "\"a\x01\""}) {
    EXPECT_FALSE(ParseJson(bad).ok()) << bad;
  }
}

TEST(JsonParseTest, NumbersKeepTheirText) {
  auto v =
      ParseJson("[1600000000000000001, 0.1, 1e20, -5, 18446744073709551615]");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->items()[0].str(), "1600000000000000001");
  EXPECT_EQ(v->items()[0].uint(), 1600000000000000001ull);
  EXPECT_EQ(v->items()[1].str(), "0.1");
  EXPECT_EQ(v->items()[2].uint(), 0u);  // above 2^64
  EXPECT_EQ(v->items()[3].uint(), 0u);
  EXPECT_EQ(v->items()[4].uint(), 18446744073709551615ull);
  auto s = ParseJson("\"12\"");  // a string is not a number
  EXPECT_EQ(s->number(), 0);
  EXPECT_EQ(s->uint(), 0u);
}

}  // namespace
}  // namespace ferry
