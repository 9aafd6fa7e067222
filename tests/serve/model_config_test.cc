// SPDX-License-Identifier: Apache-2.0
#include "serve/model_config.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ignis::serve {
namespace {

constexpr const char* kTritonConfig = R"(
name: "resnet"
platform: "onnxruntime_onnx"
max_batch_size: 16
version_policy: { latest: { num_versions: 2 } }
input [
  {
    name: "x"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 3, 224, 224 ]
  }
]
output [ { name: "y", data_type: TYPE_FP32, dims: [ 1000 ] } ]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 500
  priority_levels: 2
  default_priority_level: 2
  default_queue_policy { timeout_action: REJECT default_timeout_microseconds: 1000 max_queue_size: 64 }
  priority_queue_policy { key: 1 value { max_queue_size: 8 allow_timeout_override: true } }
}
instance_group [ { count: 2, kind: KIND_CPU }, { count: 1, kind: KIND_GPU } ]
optimization { graph { level: -1 } cuda { graphs: true } }
parameters { key: "intra_op_thread_count" value: { string_value: "3" } }
parameters { key: "some_backend_knob" value: { string_value: "x" } }
model_warmup [ { name: "w" batch_size: 1 } ]
response_cache { enable: true }
)";

TEST(ParseModelConfig, ReadsTritonFieldsAndNamesTheIgnoredOnes) {
  std::vector<std::string> warnings;
  auto c = parse_model_config(kTritonConfig, &warnings);
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->name, "resnet");
  EXPECT_EQ(c->max_batch_size, 16);
  EXPECT_EQ(c->version_policy.kind, VersionPolicy::Kind::Latest);
  EXPECT_EQ(c->version_policy.latest, 2);
  ASSERT_EQ(c->inputs.size(), 1u);
  EXPECT_EQ(c->inputs[0].dtype, DType::F32);
  EXPECT_EQ(c->inputs[0].dims, (std::vector<int64_t>{3, 224, 224}));
  ASSERT_TRUE(c->dynamic_batching);
  EXPECT_EQ(c->dynamic_batching->preferred_batch_size, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(c->dynamic_batching->max_queue_delay_us, 500u);
  EXPECT_EQ(c->dynamic_batching->default_queue_policy.max_queue_size, 64u);
  EXPECT_EQ(c->dynamic_batching->default_queue_policy.default_timeout_us, 1000u);
  EXPECT_EQ(c->dynamic_batching->priority_queue_policy.at(1).max_queue_size, 8u);
  EXPECT_TRUE(c->dynamic_batching->priority_queue_policy.at(1).allow_timeout_override);
  EXPECT_EQ(c->instance_count, 3);
  EXPECT_EQ(c->threads, 3);
  EXPECT_EQ(c->optimization, OptLevel::Basic);
  EXPECT_TRUE(c->response_cache);
  auto has = [&](const std::string& w) { return std::find(warnings.begin(), warnings.end(), w) != warnings.end(); };
  EXPECT_TRUE(has("optimization.cuda")) << testing::PrintToString(warnings);
  EXPECT_TRUE(has("model_warmup"));
  EXPECT_TRUE(has("instance_group.kind"));
  EXPECT_TRUE(has("parameters[some_backend_knob]"));
  EXPECT_EQ(warnings.size(), 4u) << testing::PrintToString(warnings);
}

TEST(ParseModelConfig, RejectsWhatItCannotServe) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {Case{"platform: \"tensorrt_plan\"", "tensorrt_plan"},
                        Case{"max_batch_size: -2", "max_batch_size"},
                        Case{"input { name: \"x\" data_type: TYPE_FLOAT }", "TYPE_FLOAT"},
                        Case{"input { data_type: TYPE_FP32 }", "no name"},
                        Case{"input { name: \"x\" dims: [ -5 ] }", "dims"},
                        Case{"version_policy { latest { num_versions: 0 } }", "num_versions"},
                        Case{"dynamic_batching { priority_levels: 2 default_priority_level: 3 }", "default_priority_level"},
                        Case{"default_model_filename: \"../x.onnx\"", "file name"},
                        Case{"parameters { key: \"intra_op_thread_count\" value { string_value: \"many\" } }", "intra_op"},
                        Case{"instance_group { count: 0 }", "count"},
                        Case{"dynamic_batching { max_queue_delay_microseconds: soon }", "max_queue_delay_microseconds"},
                        Case{"dynamic_batching { max_queue_delay_microseconds: \"auto\" }", "max_queue_delay_microseconds"},
                        Case{"parameters { key: \"ignis.shape_buckets\" value { string_value: \"16,,32\" } }", "shape_buckets"},
                        Case{"parameters { key: \"ignis.shape_buckets\" value { string_value: \"0\" } }", "shape_buckets"},
                        Case{"parameters { key: \"ignis.pad_value.ids\" value { string_value: \"x\" } }", "pad_value"},
                        Case{"parameters { key: \"ignis.max_inflight\" value { string_value: \"-1\" } }", "max_inflight"},
                        Case{"parameters { key: \"ignis.precision\" value { string_value: \"int3\" } }", "ignis.precision"},
                        Case{"parameters { key: \"ignis.tuning\" value { string_value: \"always\" } }", "ignis.tuning"}}) {
    auto r = parse_model_config(c.text, nullptr);
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.error().message().find(c.message), std::string::npos) << c.text << ": " << r.error().message();
  }
}

TEST(ParseModelConfig, ReadsTheSchedulingExtensions) {
  auto c = parse_model_config(R"(
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: auto }
parameters { key: "ignis.p99_target_microseconds" value { string_value: "5000" } }
parameters { key: "ignis.shape_buckets" value { string_value: " 64, 16,32 ,16" } }
parameters { key: "ignis.pad_value.input_ids" value { string_value: "-1.5" } }
parameters { key: "ignis.max_inflight" value { string_value: "100" } }
parameters { key: "ignis.priority_aging_microseconds" value { string_value: "2000" } }
)",
                              nullptr);
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_TRUE(c->dynamic_batching);
  EXPECT_TRUE(c->dynamic_batching->auto_delay);
  EXPECT_EQ(c->p99_target_us, 5000u);
  EXPECT_EQ(c->shape_buckets, (std::vector<int64_t>{16, 32, 64}));
  EXPECT_EQ(c->pad_values.at("input_ids"), -1.5);
  EXPECT_EQ(c->max_inflight, 100u);
  EXPECT_EQ(c->priority_aging_us, 2000u);
}

TEST(ParseModelConfig, ReadsSessionSettings) {
  auto c = parse_model_config(R"(
parameters { key: "ignis.precision" value { string_value: "bf16" } }
parameters { key: "ignis.tuning" value { string_value: "measure" } }
parameters { key: "ignis.optimization" value { string_value: "extended" } }
)",
                              nullptr);
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->precision, Precision::Bf16);
  EXPECT_EQ(c->tuning, Tuning::Measure);
  EXPECT_EQ(c->optimization, OptLevel::Extended);
  auto half = parse_model_config("parameters { key: \"ignis.precision\" value { string_value: \"fp16\" } }", nullptr);
  ASSERT_TRUE(half) << half.error().message();
  EXPECT_EQ(half->precision, Precision::F16);
  auto plain = parse_model_config("max_batch_size: 4", nullptr);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->precision);  // the server's default
  EXPECT_FALSE(plain->tuning);
}

TEST(VersionPolicy, SelectsLatestAllAndSpecific) {
  VersionPolicy p;
  EXPECT_EQ(p.select({1, 3, 2}), (std::vector<int64_t>{3}));
  p.latest = 2;
  EXPECT_EQ(p.select({1, 3, 2}), (std::vector<int64_t>{3, 2}));
  p.kind = VersionPolicy::Kind::All;
  EXPECT_EQ(p.select({1, 3, 2}), (std::vector<int64_t>{3, 2, 1}));
  p.kind = VersionPolicy::Kind::Specific;
  p.specific = {1, 7};
  EXPECT_EQ(p.select({1, 3, 2}), (std::vector<int64_t>{1}));
}

}  // namespace
}  // namespace ignis::serve
