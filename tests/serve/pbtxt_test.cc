// SPDX-License-Identifier: Apache-2.0
#include "serve/pbtxt.h"

#include <gtest/gtest.h>

namespace ignis::serve {
namespace {

TEST(ParseTextMessage, ReadsScalarsMessagesAndLists) {
  auto m = parse_text_message(R"(
    # a comment
    name: "m\"x" 'y'
    max_batch_size: 8
    input [ { name: "a" dims: [ 1, -1, 3 ] }, { name: "b", dims: 2 } ]
    dynamic_batching < max_queue_delay_microseconds: 100; preserve_ordering: true >
    ratio: -1.5e-3
  )");
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_NE(m->find("name"), nullptr);
  EXPECT_EQ(m->find("name")->scalar, "m\"xy");
  EXPECT_TRUE(m->find("name")->quoted);
  EXPECT_EQ(m->find("max_batch_size")->as_int(), 8);
  auto inputs = m->all("input");
  ASSERT_EQ(inputs.size(), 2u);
  auto dims = inputs[0]->message->all("dims");
  ASSERT_EQ(dims.size(), 3u);
  EXPECT_EQ(dims[1]->as_int(), -1);
  EXPECT_EQ(inputs[1]->message->find("dims")->as_int(), 2);
  const TextField* db = m->find("dynamic_batching");
  ASSERT_EQ(db->kind, TextField::Kind::Message);
  EXPECT_EQ(db->message->find("max_queue_delay_microseconds")->as_uint(), 100u);
  EXPECT_EQ(db->message->find("preserve_ordering")->as_bool(), true);
  EXPECT_DOUBLE_EQ(*m->find("ratio")->as_double(), -1.5e-3);
}

TEST(ParseTextMessage, LastOccurrenceWinsForFind) {
  auto m = parse_text_message("a: 1 a: 2");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->find("a")->as_int(), 2);
  EXPECT_EQ(m->all("a").size(), 2u);
}

TEST(ParseTextMessage, ErrorsNameTheLine) {
  for (const char* bad : {"a { b: 1", "a: \"unterminated", "a 1", "a: [1, 2", ": 3", "a: \"\\q\"", "[ext]: 1"}) {
    auto m = parse_text_message(std::string("x: 1\n") + bad);
    ASSERT_FALSE(m) << bad;
    EXPECT_NE(m.error().message().find("line 2"), std::string::npos) << m.error().message();
  }
}

TEST(ParseTextMessage, RejectsDeepNestingWithoutCrashing) {
  std::string s;
  for (int i = 0; i < 10000; ++i) s += "a {";
  auto m = parse_text_message(s);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("nested"), std::string::npos);
}

TEST(ParseTextMessage, IntegersKeepTheirRange) {
  auto m = parse_text_message("a: 9223372036854775807 b: -9223372036854775808 c: 9223372036854775808 d: 0x10 e: 1.5");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->find("a")->as_int(), INT64_MAX);
  EXPECT_EQ(m->find("b")->as_int(), INT64_MIN);
  EXPECT_FALSE(m->find("c")->as_int());
  EXPECT_EQ(m->find("d")->as_int(), 16);
  EXPECT_FALSE(m->find("e")->as_int());
}

}  // namespace
}  // namespace ignis::serve
