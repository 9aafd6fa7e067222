// SPDX-License-Identifier: Apache-2.0
// Tests for the string kernels on what the node suites leave out: UTF-8 case changes, StringSplit
// with maxsplit and empty strings, RegexFullMatch on UTF-8 and its bad patterns (refused when
// the model loads), Cast between strings and numbers, TfIdfVectorizer on strings. Expected
// values: numpy 2.4's str() for the printed numbers, onnxruntime 1.32 for TfIdfVectorizer,
// Python's str.split (the ONNX reference) for StringSplit, Unicode's simple case mappings for
// the case changes; each written out here.
#include <gtest/gtest.h>
#include <locale.h>

#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "ignis/session.h"
#include "kernels/nn_test_util.h"
#include "testing/model_builder.h"

namespace ignis::nn_test {
namespace {

OpCall call(const std::string& op, std::vector<Tensor> inputs, int64_t opset) {
  OpCall c;
  c.op_type = op;
  c.opset = opset;
  c.inputs = std::move(inputs);
  return c;
}

std::vector<std::string> strings(const Tensor& t) { return values_of<std::string>(t); }

// A session of one node `name`: y = op(x) on a string vector, with one string attribute.
Result<Session> open_one_node(int64_t opset, const std::string& op, DType y, const std::string& attr,
                              const std::string& value) {
  testing::ModelBuilder b(opset);
  b.input("x", DType::String, {-1}).output("y", y).node(op, {"x"}, {"y"}, "name").string_attr(attr, value);
  const std::string bytes = b.bytes();
  return Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), SessionOptions{});
}

// The code of the error opening the model of open_one_node, whose message must contain `text`.
StatusCode expect_load_error(int64_t opset, const std::string& op, DType y, const std::string& attr,
                             const std::string& value, const std::string& text) {
  auto s = open_one_node(opset, op, y, attr, value);
  EXPECT_FALSE(s) << "expected an error containing: " << text;
  if (s) return StatusCode::Ok;
  EXPECT_NE(s.error().message().find(text), std::string::npos) << s.error().message();
  return s.error().code();
}

bool utf8_locale_installed() {
  for (const char* name : {"C.UTF-8", "C.utf8"}) {
    if (locale_t l = newlocale(LC_CTYPE_MASK, name, static_cast<locale_t>(nullptr))) {
      freelocale(l);
      return true;
    }
  }
  return false;
}

TEST(StringNormalizer, ChangesTheCaseOfUtf8Text) {
  if (!utf8_locale_installed()) GTEST_SKIP() << "no UTF-8 locale: only ASCII letters change case";
  // Simple (one-to-one) mappings: ß has no single uppercase letter and stays; Ǆ's lowercase
  // is ǆ. Bytes that are not UTF-8 pass through.
  const std::vector<std::string> in = {"école", "ΣΑΣ straße", "Ǆ", "\xff\xfe" "abc"};
  OpCall c = call("StringNormalizer", {make_tensor_str({4}, in)}, 10);
  c.attrs.set("case_change_action", attr_string("UPPER"));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{"ÉCOLE", "ΣΑΣ STRAßE", "Ǆ", "\xff\xfe" "ABC"}));

  c.attrs.set("case_change_action", attr_string("LOWER"));
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{"école", "σασ straße", "ǆ", "\xff\xfe" "abc"}));
}

TEST(StringNormalizer, StopwordsIgnoreCaseUnlessCaseSensitive) {
  if (!utf8_locale_installed()) GTEST_SKIP() << "no UTF-8 locale: only ASCII letters change case";
  OpCall c = call("StringNormalizer", {make_tensor_str({1, 4}, {"École", "école", "ECOLE", "x"})}, 10);
  c.attrs.set("stopwords", attr_strings({"ÉCOLE"}));
  c.attrs.set("case_change_action", attr_string("LOWER"));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 2}));
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{"ecole", "x"}));

  c.attrs.set("is_case_sensitive", attr_int(1));
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{"école", "école", "ecole", "x"}));
}

TEST(StringNormalizer, AllDroppedLeavesOneEmptyString) {
  OpCall c = call("StringNormalizer", {make_tensor_str({1, 2}, {"a", "a"})}, 10);
  c.attrs.set("stopwords", attr_strings({"a"}));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1}));
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{""}));

  c.inputs = {make_tensor_str({2, 2}, {"a", "b", "c", "d"})};
  expect_op_error(c, "[C] or [1, C]");
}

TEST(StringSplit, MaxsplitWithADelimiterAndEmptyStrings) {
  // Python's str.split: "" is one empty part, "," two; after maxsplit splits the rest is one
  // part. (onnxruntime counts 0 parts in "".)
  OpCall c = call("StringSplit", {make_tensor_str({4}, {"", "a,,b", ",", "a"})}, 20);
  c.attrs.set("delimiter", attr_string(","));
  c.attrs.set("maxsplit", attr_int(1));
  c.num_outputs = 2;
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{4, 2}));
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{"", "", "a", ",b", "", "", "a", ""}));
  EXPECT_EQ(values_of<int64_t>((*r)[1]), (std::vector<int64_t>{1, 2, 2, 1}));

  c.attrs.set("maxsplit", attr_int(0));
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{"", "a,,b", ",", "a"}));
  EXPECT_EQ(values_of<int64_t>((*r)[1]), (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(StringSplit, MaxsplitOnWhitespaceDropsTheOuterWhitespace) {
  // Runs of whitespace separate; the remainder after maxsplit loses its trailing whitespace as
  // the spec says (Python's str.split keeps it).
  OpCall c = call("StringSplit", {make_tensor_str({2, 2}, {"", " \t ", "  x  y\tz  ", "x"})}, 20);
  c.attrs.set("maxsplit", attr_int(1));
  c.num_outputs = 2;
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{"", "", "", "", "x", "y\tz", "x", ""}));
  EXPECT_EQ(values_of<int64_t>((*r)[1]), (std::vector<int64_t>{0, 0, 2, 1}));
}

TEST(RegexFullMatch, MatchesWholeUtf8Strings) {
  OpCall c = call("RegexFullMatch", {make_tensor_str({5}, {"aab", "aabc", "", "é", "ée"})}, 20);
  c.attrs.set("pattern", attr_string("a+b|."));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  // "." is one code point, so "é" (two bytes) matches and "ée" does not.
  EXPECT_EQ(values_of<bool>((*r)[0]), (std::vector<bool>{true, false, false, true, false}));
}

TEST(RegexFullMatch, BadPatternFailsTheLoad) {
  EXPECT_EQ(expect_load_error(20, "RegexFullMatch", DType::Bool, "pattern", "(a|b",
                              "node 'name' (RegexFullMatch, opset 20): attribute 'pattern' \"(a|b\" is not a valid "
                              "RE2 regular expression: missing )"),
            StatusCode::InvalidArgument);

  auto session = open_one_node(20, "RegexFullMatch", DType::Bool, "pattern", "(a|b)");
  ASSERT_TRUE(session) << session.error().to_string();
  auto out = session->run({{"x", make_tensor_str({3}, {"a", "b", "ab"})}});
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(values_of<bool>((*out)[0]), (std::vector<bool>{true, true, false}));
}

TEST(StringNormalizer, BadCaseActionFailsTheLoad) {
  EXPECT_EQ(expect_load_error(10, "StringNormalizer", DType::String, "case_change_action", "TITLE",
                              "node 'name' (StringNormalizer, opset 10): attribute 'case_change_action' must be "
                              "NONE, LOWER or UPPER, got 'TITLE'"),
            StatusCode::InvalidArgument);
}

TEST(Cast, NumbersPrintAsNumpyPrintsThem) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  OpCall c = call("Cast",
                  {make_tensor_f32({11}, {1e-5f, 1e-4f, 100000.0f, 0.1f, -0.0f, 1e6f, 123456.7f, 16777216.0f,
                                          std::nanf(""), -kInf, 0.039187793f})},
                  19);
  c.attrs.set("to", attr_int(8));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(strings((*r)[0]),
            (std::vector<std::string>{"1e-05", "1e-04", "100000.0", "0.1", "-0.0", "1e+06", "123456.7",
                                      "1.6777216e+07", "NaN", "-INF", "0.039187793"}));

  c.inputs = {make_tensor<double>({4}, {1.0 / 3, 1e16, 9.99e15, 123456789.0})};
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(strings((*r)[0]),
            (std::vector<std::string>{"0.3333333333333333", "1e+16", "9990000000000000.0", "123456789.0"}));

  c.inputs = {make_tensor<Half>({3}, {Half{0x3555}, Half{0x6400}, Half{0x5bff}})};  // 0.3333, 1024, 255.9
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{"0.3333", "1.024e+03", "255.9"}));

  c.inputs = {make_tensor<bool>({2}, {true, false})};
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{"True", "False"}));

  c.inputs = {make_tensor_i64({2}, {-3, std::numeric_limits<int64_t>::min()})};
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(strings((*r)[0]), (std::vector<std::string>{"-3", "-9223372036854775808"}));
}

TEST(Cast, StringsParseAsNumbers) {
  const Tensor text = make_tensor_str({7}, {"  12 ", "+INF", "-inf", "NaN", "1e3", "2.7", "-0"});
  OpCall c = call("Cast", {text}, 19);
  c.attrs.set("to", attr_int(1));  // float
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  const std::vector<float> f = values_of<float>((*r)[0]);
  EXPECT_EQ(f[0], 12.0f);
  EXPECT_EQ(f[1], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[2], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f[3]));
  EXPECT_EQ(f[4], 1000.0f);
  EXPECT_EQ(f[5], 2.7f);
  EXPECT_TRUE(f[6] == 0.0f && std::signbit(f[6]));

  // Integers: exact, else truncated; narrowing wraps as between integer types.
  c.inputs = {make_tensor_str({6}, {"  12 ", "1e3", "2.7", "-2.7", "+5", "9223372036854775807"})};
  c.attrs.set("to", attr_int(7));  // int64
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<int64_t>((*r)[0]),
            (std::vector<int64_t>{12, 1000, 2, -2, 5, std::numeric_limits<int64_t>::max()}));

  c.inputs = {make_tensor_str({2}, {"300", "-1"})};
  c.attrs.set("to", attr_int(2));  // uint8
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<uint8_t>((*r)[0]), (std::vector<uint8_t>{44, 255}));

  c.inputs = {make_tensor_str({5}, {"True", "false", "0", "0.5", " 1 "})};
  c.attrs.set("to", attr_int(9));  // bool
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<bool>((*r)[0]), (std::vector<bool>{true, false, false, true, true}));

  c.inputs = {make_tensor_str({2}, {"1", "1.5x"})};
  c.attrs.set("to", attr_int(1));
  EXPECT_EQ(expect_op_error(c, "element 1 \"1.5x\" is not a float32 number"), StatusCode::InvalidArgument);
}

TEST(Cast, PrintedNumbersReadBackUnchanged) {
  const std::vector<float> values = random_floats(200, 7, -1e3f, 1e3f);
  OpCall to_text = call("Cast", {make_tensor_f32({200}, values)}, 19);
  to_text.attrs.set("to", attr_int(8));
  auto text = run_op(to_text);
  ASSERT_TRUE(text) << text.error().to_string();
  OpCall back = call("CastLike", {(*text)[0], make_tensor_f32({1}, {0.0f})}, 19);
  auto r = run_op(back);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0]), values);
}

TEST(Equal, ComparesStringsFromOpset19) {
  OpCall c = call("Equal", {make_tensor_str({2, 1}, {"a", "é"}), make_tensor_str({2}, {"é", "a"})}, 19);
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<bool>((*r)[0]), (std::vector<bool>{false, true, true, false}));
  c.opset = 18;
  EXPECT_EQ(expect_op_error(c, "needs Equal-19"), StatusCode::Unsupported);
}

TEST(TfIdfVectorizer, CountsStringNgrams) {
  // From onnxruntime: 1-grams a, b, c and 2-grams (a, b), (c, a), with one skip allowed.
  OpCall c = call("TfIdfVectorizer",
                  {make_tensor_str({2, 5}, {"a", "x", "b", "c", "a", "c", "a", "a", "b", "z"})}, 9);
  c.attrs.set("mode", attr_string("TFIDF"));
  c.attrs.set("min_gram_length", attr_int(1));
  c.attrs.set("max_gram_length", attr_int(2));
  c.attrs.set("max_skip_count", attr_int(1));
  c.attrs.set("ngram_counts", attr_ints({0, 3}));
  c.attrs.set("ngram_indexes", attr_ints({0, 1, 2, 3, 4}));
  c.attrs.set("pool_strings", attr_strings({"a", "b", "c", "a", "b", "c", "a"}));
  c.attrs.set("weights", attr_floats({1.0f, 2.0f, 0.5f, 3.0f, 1.5f}));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  expect_close((*r)[0], {2, 2, 0.5, 3, 1.5, 2, 2, 0.5, 6, 3}, 0, 0, "tfidf strings");

  c.attrs.set("pool_int64s", attr_ints({1, 2, 3, 1, 2, 3, 1}));
  expect_op_error(c, "needs attribute 'pool_strings', not 'pool_int64s'");
}

}  // namespace
}  // namespace ignis::nn_test
