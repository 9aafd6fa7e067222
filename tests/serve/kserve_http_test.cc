// SPDX-License-Identifier: Apache-2.0
#include "serve/codec/kserve_http.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/half.h"
#include "serve/datatype.h"

namespace ignis::serve {
namespace {

std::vector<std::string> strings_of(const Tensor& t) {
  const std::string* p = t.data_as<std::string>();
  return {p, p + t.numel()};
}

Status decode(const std::string& body, int64_t header_length, InferRequest* r) {
  return decode_infer_request(std::make_shared<const std::string>(body), header_length, DecodeLimits{}, r);
}

std::string decode_error(const std::string& body, int64_t header_length = -1) {
  InferRequest r;
  Status s = decode(body, header_length, &r);
  return s ? std::string("ok") : s.message();
}

TEST(DecodeInferRequest, ReadsJsonTensorsOfEveryType) {
  InferRequest r;
  const std::string body = R"({"id":"q7","parameters":{"priority":2,"timeout":1500,"binary_data_output":true},
    "inputs":[
      {"name":"f","shape":[2,2],"datatype":"FP32","data":[[1.5,-2],[3e2,0]]},
      {"name":"h","shape":[2],"datatype":"FP16","data":[0.5,-1]},
      {"name":"b","shape":[1],"datatype":"BF16","data":[2.0]},
      {"name":"d","shape":[1],"datatype":"FP64","data":[0.1]},
      {"name":"i8","shape":[3],"datatype":"INT8","data":[-128,0,127]},
      {"name":"u64","shape":[1],"datatype":"UINT64","data":[18446744073709551615]},
      {"name":"i64","shape":[2],"datatype":"INT64","data":[-9223372036854775808,5]},
      {"name":"ok","shape":[2],"datatype":"BOOL","data":[true,false]},
      {"name":"s","shape":[2],"datatype":"BYTES","data":["ab","\u00e9"]}],
    "outputs":[{"name":"y","parameters":{"binary_data":false}},{"name":"z"}]})";
  ASSERT_TRUE(decode(body, -1, &r)) << decode_error(body);
  EXPECT_EQ(r.id, "q7");
  EXPECT_EQ(r.priority, 2u);
  EXPECT_EQ(r.timeout_us, 1500u);
  EXPECT_TRUE(r.binary_output);
  ASSERT_EQ(r.inputs.size(), 9u);
  const float* f = r.inputs[0].tensor.data_as<float>();
  EXPECT_EQ(r.inputs[0].tensor.shape(), Shape({2, 2}));
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_EQ(f[1], -2.f);
  EXPECT_EQ(f[2], 300.f);
  EXPECT_EQ(half_to_float(r.inputs[1].tensor.data_as<uint16_t>()[1]), -1.f);
  EXPECT_EQ(bf16_to_float(r.inputs[2].tensor.data_as<uint16_t>()[0]), 2.f);
  EXPECT_EQ(r.inputs[3].tensor.data_as<double>()[0], 0.1);
  EXPECT_EQ(r.inputs[4].tensor.data_as<int8_t>()[0], -128);
  EXPECT_EQ(r.inputs[5].tensor.data_as<uint64_t>()[0], UINT64_MAX);
  EXPECT_EQ(r.inputs[6].tensor.data_as<int64_t>()[0], INT64_MIN);
  EXPECT_EQ(r.inputs[7].tensor.data_as<uint8_t>()[0], 1);
  EXPECT_EQ(r.inputs[7].tensor.data_as<uint8_t>()[1], 0);
  EXPECT_EQ(strings_of(r.inputs[8].tensor), (std::vector<std::string>{"ab", "\xc3\xa9"}));
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.outputs[0].binary, false);
  EXPECT_FALSE(r.outputs[1].binary.has_value());
}

TEST(DecodeInferRequest, ReadsBinaryTensorsAfterTheJsonHeader) {
  const std::string json =
      R"({"inputs":[{"name":"x","shape":[3],"datatype":"FP32","parameters":{"binary_data_size":12}},)"
      R"({"name":"s","shape":[2],"datatype":"BYTES","parameters":{"binary_data_size":11}}]})";
  std::string body = json;
  const float xs[3] = {1.f, -0.f, 7.25f};
  body.append(reinterpret_cast<const char*>(xs), sizeof xs);
  auto put_str = [&](const std::string& s) {
    const uint32_t n = static_cast<uint32_t>(s.size());
    body.append(reinterpret_cast<const char*>(&n), 4);
    body += s;
  };
  put_str("abc");
  put_str("");
  InferRequest r;
  ASSERT_TRUE(decode(body, static_cast<int64_t>(json.size()), &r)) << decode_error(body, json.size());
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(std::memcmp(r.inputs[0].tensor.data(), xs, sizeof xs), 0);
  EXPECT_EQ(strings_of(r.inputs[1].tensor), (std::vector<std::string>{"abc", ""}));
}

TEST(DecodeInferRequest, NamesWhatIsWrong) {
  struct Case {
    std::string body;
    int64_t header;
    const char* expect;
  };
  const std::string bin1 = R"({"inputs":[{"name":"x","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}}]})";
  const std::vector<Case> cases = {
      {"", -1, "empty"},
      {"{", -1, "malformed JSON"},
      {"[1]", -1, "JSON object"},
      {R"({"inputs":[]})", -1, "empty"},
      {R"({"inputs":{}})", -1, "'inputs' array"},
      {R"({"inputs":[{"shape":[1],"datatype":"FP32","data":[1]}]})", -1, "'name'"},
      {R"({"inputs":[{"name":"x","shape":[1],"datatype":"FLOAT","data":[1]}]})", -1, "unknown datatype 'FLOAT'"},
      {R"({"inputs":[{"name":"x","shape":[-1],"datatype":"FP32","data":[1]}]})", -1, "non-negative"},
      {R"({"inputs":[{"name":"x","shape":[2],"datatype":"FP32","data":[1]}]})", -1, "1 elements but its shape needs 2"},
      {R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1,2]}]})", -1, "more elements"},
      {R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT8","data":[128]}]})", -1, "range"},
      {R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[1.5]}]})", -1, "an integer"},
      {R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":["1"]}]})", -1, "a number"},
      {R"({"inputs":[{"name":"x","shape":[1],"datatype":"BOOL","data":[1]}]})", -1, "true or false"},
      {R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32"}]})", -1, "neither"},
      {R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]},{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]})",
       -1, "given twice"},
      {R"({"inputs":[{"name":"x","shape":[100000,100000,100000],"datatype":"FP32","data":[1]}]})", -1, "more than"},
      {R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}],"outputs":[{"name":"y"},{"name":"y"}]})", -1,
       "requested twice"},
      {R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}],"parameters":{"priority":-1}})", -1, "priority"},
      {bin1, -1, "no Inference-Header-Content-Length"},
      {bin1 + "1234", static_cast<int64_t>(bin1.size()), "needs 8 bytes of binary data but only 4 remain"},
      {bin1 + "123456789", static_cast<int64_t>(bin1.size()), "1 bytes after the JSON header"},
      {bin1, 100000, "Inference-Header-Content-Length is 100000"},
      {"{\"inputs\":[{\"name\":\"\xff\",\"shape\":[1],\"datatype\":\"FP32\",\"data\":[1]}]}", -1, "malformed JSON"},
  };
  for (const auto& c : cases) {
    const std::string e = decode_error(c.body, c.header);
    EXPECT_NE(e.find(c.expect), std::string::npos) << "body: " << c.body << "\nerror: " << e;
  }
}

TEST(DecodeInferRequest, BinaryBytesMustMatchTheShape) {
  const std::string json = R"({"inputs":[{"name":"s","shape":[2],"datatype":"BYTES","parameters":{"binary_data_size":9}}]})";
  std::string body = json;
  const uint32_t n = 200;  // claims more than remains
  body.append(reinterpret_cast<const char*>(&n), 4);
  body += "hello";
  EXPECT_NE(decode_error(body, json.size()).find("claims 200 bytes"), std::string::npos);
}

TEST(EncodeInferResponse, WritesJsonAndBinaryOutputs) {
  InferResponse r;
  r.model = "m";
  r.version = "3";
  r.id = "abc";
  Tensor a = Tensor::empty(DType::F32, Shape({2}));
  a.data_as<float>()[0] = 0.5f;
  a.data_as<float>()[1] = -2.f;
  Tensor b = Tensor::empty(DType::I64, Shape({1, 1}));
  b.data_as<int64_t>()[0] = -7;
  Tensor c = Tensor::empty(DType::Bool, Shape({2}));
  c.data_as<uint8_t>()[0] = 1;
  c.data_as<uint8_t>()[1] = 0;
  r.outputs = {{"a", a, false}, {"b", b, true}, {"c", c, false}};
  std::string body;
  int64_t header = 0;
  encode_infer_response(r, &body, &header);
  ASSERT_GT(header, 0);
  const std::string json = body.substr(0, static_cast<size_t>(header));
  EXPECT_EQ(json,
            R"({"model_name":"m","model_version":"3","id":"abc","outputs":[)"
            R"({"name":"a","datatype":"FP32","shape":[2],"data":[0.5,-2]},)"
            R"({"name":"b","datatype":"INT64","shape":[1,1],"parameters":{"binary_data_size":8}},)"
            R"({"name":"c","datatype":"BOOL","shape":[2],"data":[true,false]}]})");
  ASSERT_EQ(body.size(), json.size() + 8);
  int64_t v = 0;
  std::memcpy(&v, body.data() + header, 8);
  EXPECT_EQ(v, -7);

  r.outputs = {{"a", a, false}};
  encode_infer_response(r, &body, &header);
  EXPECT_EQ(header, -1);
}

TEST(EncodeInferResponse, FloatsRoundTripAndNonFiniteAreNamed) {
  InferResponse r;
  Tensor a = Tensor::empty(DType::F32, Shape({3}));
  a.data_as<float>()[0] = 0.1f;
  a.data_as<float>()[1] = std::numeric_limits<float>::infinity();
  a.data_as<float>()[2] = std::numeric_limits<float>::quiet_NaN();
  r.outputs = {{"a", a, false}};
  std::string body;
  int64_t header = 0;
  encode_infer_response(r, &body, &header);
  EXPECT_NE(body.find("[0.1,Infinity,NaN]"), std::string::npos) << body;
}


TEST(EncodeInferResponse, BytesOutputsAsJsonStringsAndLengthPrefixedBinary) {
  InferResponse r;
  r.model = "m";
  r.version = "1";
  const std::vector<std::string> words = {"cat", "", "quote \" and \\ inside"};
  r.outputs = {{"j", string_tensor({3}, words), false}, {"b", string_tensor({1, 3}, words), true}};
  std::string body;
  int64_t header = 0;
  encode_infer_response(r, &body, &header);
  ASSERT_GT(header, 0);
  const std::string json = body.substr(0, static_cast<size_t>(header));
  const size_t packed = 3 * 4 + 3 + 0 + words[2].size();
  EXPECT_EQ(json, R"({"model_name":"m","model_version":"1","outputs":[)"
                  R"({"name":"j","datatype":"BYTES","shape":[3],"data":["cat","","quote \" and \\ inside"]},)"
                  R"({"name":"b","datatype":"BYTES","shape":[1,3],"parameters":{"binary_data_size":)" +
                      std::to_string(packed) + "}}]}");
  ASSERT_EQ(body.size(), json.size() + packed);
  // The binary part is what a request carries for BYTES: decoding it gives the words back.
  const std::string req_json = R"({"inputs":[{"name":"t","shape":[3],"datatype":"BYTES","parameters":{"binary_data_size":)" +
                               std::to_string(packed) + "}}]}";
  InferRequest back;
  const std::string req = req_json + body.substr(static_cast<size_t>(header));
  ASSERT_TRUE(decode(req, static_cast<int64_t>(req_json.size()), &back)) << decode_error(req, req_json.size());
  EXPECT_EQ(strings_of(back.inputs[0].tensor), words);
}

}  // namespace
}  // namespace ignis::serve
