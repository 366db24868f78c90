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
