// SPDX-License-Identifier: Apache-2.0
#include "onnx/import.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "ignis/session.h"
#include "onnx/export.h"

namespace ignis::onnx_io {
namespace {

std::span<const std::byte> as_bytes(const std::string& s) { return std::as_bytes(std::span<const char>(s.data(), s.size())); }

onnx::ModelProto identity_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* os = m.add_opset_import();
  os->set_version(17);
  auto* g = m.mutable_graph();
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  auto* out = g->add_output();
  out->set_name("y");
  auto* n = g->add_node();
  n->set_op_type("Add");
  n->add_input("x");
  n->add_input("w");
  n->add_output("y");
  return m;
}

TEST(Import, ReadsRawAndTypedTensorData) {
  auto m = identity_model();
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  const float vals[3] = {1.5f, -2.0f, 3.25f};
  w->set_raw_data(std::string(reinterpret_cast<const char*>(vals), sizeof vals));
  auto g = import_model(as_bytes(m.SerializeAsString()), "");
  ASSERT_TRUE(g) << g.error().to_string();
  const Tensor& t = g->initializers.at("w");
  EXPECT_EQ(t.shape(), (Shape{3}));
  EXPECT_EQ(t.data_as<float>()[2], 3.25f);

  w->clear_raw_data();
  for (float v : vals) w->add_float_data(v);
  g = import_model(as_bytes(m.SerializeAsString()), "");
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(g->initializers.at("w").data_as<float>()[1], -2.0f);
}

TEST(Import, RejectsDataThatDoesNotMatchDims) {
  auto m = identity_model();
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_float_data(1.0f);
  auto g = import_model(as_bytes(m.SerializeAsString()), "");
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().code(), StatusCode::InvalidModel);
  EXPECT_NE(g.error().message().find("'w'"), std::string::npos) << g.error().message();
}

TEST(Import, ReadsExternalDataNextToTheModel) {
  const auto dir = std::filesystem::temp_directory_path() / "ignis_external_data_test";
  std::filesystem::create_directories(dir);
  const float vals[3] = {10.0f, 20.0f, 30.0f};
  {
    std::ofstream f(dir / "weights.bin", std::ios::binary);
    const float pad = 0.0f;
    f.write(reinterpret_cast<const char*>(&pad), 4);  // offset 4
    f.write(reinterpret_cast<const char*>(vals), sizeof vals);
  }
  auto m = identity_model();
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add_kv = [&](const char* k, const char* v) {
    auto* kv = w->add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  };
  add_kv("location", "weights.bin");
  add_kv("offset", "4");
  add_kv("length", "12");
  {
    std::ofstream f(dir / "model.onnx", std::ios::binary);
    f << m.SerializeAsString();
  }
  auto session = Session::open((dir / "model.onnx").string());
  ASSERT_TRUE(session) << session.error().to_string();
  Tensor x = Tensor::zeros(DType::F32, {3});
  auto out = session->run({{"x", x}});
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ((*out)[0].data_as<float>()[1], 20.0f);

  // A location outside the model folder is refused.
  w->mutable_external_data(0)->set_value("../escape.bin");
  auto g = import_model(as_bytes(m.SerializeAsString()), dir.string());
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message().find("leaves the model folder"), std::string::npos) << g.error().message();
  std::filesystem::remove_all(dir);
}

TEST(Import, ConstantNodesBecomeInitializers) {
  auto m = identity_model();
  auto* c = m.mutable_graph()->add_node();
  c->set_op_type("Constant");
  c->add_output("w");
  auto* a = c->add_attribute();
  a->set_name("value_floats");
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float v : {1.0f, 2.0f, 3.0f}) a->add_floats(v);
  auto g = import_model(as_bytes(m.SerializeAsString()), "");
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->initializers.at("w").shape(), (Shape{3}));
}

// Low-bit tensors: 4- and 2-bit types arrive packed (raw_data or one packed byte per int32_data
// entry) and are held one byte per element; export packs them again.
TEST(Import, UnpacksLowBitTensorsAndExportPacksThem) {
  onnx::TensorProto tp;
  tp.set_data_type(22);
  tp.add_dims(3);
  tp.set_raw_data(std::string("\xF1\x07", 2));  // 1, -1, 7
  std::string bytes = tp.SerializeAsString();
  auto t = import_tensor_proto(as_bytes(bytes), nullptr);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->dtype(), DType::I4);
  EXPECT_EQ(t->nbytes(), 3u);
  EXPECT_EQ(t->data_as<int8_t>()[0], 1);
  EXPECT_EQ(t->data_as<int8_t>()[1], -1);
  EXPECT_EQ(t->data_as<int8_t>()[2], 7);

  tp.clear_raw_data();
  tp.set_data_type(25);
  tp.add_int32_data(0x39);  // 1, 2, 3
  bytes = tp.SerializeAsString();
  t = import_tensor_proto(as_bytes(bytes), nullptr);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->data_as<uint8_t>()[2], 3);

  tp.set_data_type(21);
  tp.set_raw_data(std::string("\x21\x43\x05", 3));  // 6 elements packed for a 3-element tensor
  tp.clear_int32_data();
  bytes = tp.SerializeAsString();
  EXPECT_FALSE(import_tensor_proto(as_bytes(bytes), nullptr));

  tp.clear_raw_data();
  tp.set_data_type(17);
  for (int v : {0x38, 0xB8, 0x7E}) tp.add_int32_data(v);  // 1, -1, 448
  bytes = tp.SerializeAsString();
  t = import_tensor_proto(as_bytes(bytes), nullptr);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->dtype(), DType::F8E4M3FN);
  EXPECT_EQ(t->data_as<uint8_t>()[2], 0x7E);

  // An int4 initializer survives export (packed) and import (unpacked).
  auto m = identity_model();
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(22);
  w->add_dims(3);
  w->set_raw_data(std::string("\xF1\x07", 2));
  auto g = import_model(as_bytes(m.SerializeAsString()), "");
  ASSERT_TRUE(g) << g.error().to_string();
  auto out = export_model(*g);
  ASSERT_TRUE(out) << out.error().to_string();
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(*out));
  ASSERT_EQ(back.graph().initializer_size(), 1);
  EXPECT_EQ(back.graph().initializer(0).raw_data(), std::string("\xF1\x07", 2));
}

// Sequence, optional and map types survive import (as ValueInfo::type_text) and export.
TEST(Import, ContainerTypesRoundTrip) {
  auto m = identity_model();
  auto* in = m.mutable_graph()->mutable_input(0);
  auto* opt = in->mutable_type()->mutable_optional_type()->mutable_elem_type();
  opt->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(7);
  auto* out = m.mutable_graph()->mutable_output(0);
  out->mutable_type()->mutable_map_type()->set_key_type(8);
  out->mutable_type()->mutable_map_type()->mutable_value_type()->mutable_tensor_type()->set_elem_type(1);
  auto g = import_model(as_bytes(m.SerializeAsString()), "");
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(g->inputs[0].dtype, DType::Optional);
  EXPECT_EQ(g->inputs[0].type_text, "optional(seq(tensor(int64)))");
  EXPECT_EQ(g->outputs[0].dtype, DType::Map);
  EXPECT_EQ(g->outputs[0].type_text, "map(string,tensor(float))");
  auto bytes = export_model(*g);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(*bytes));
  EXPECT_EQ(back.graph().input(0).type().SerializeAsString(), in->type().SerializeAsString());
  EXPECT_EQ(back.graph().output(0).type().SerializeAsString(), out->type().SerializeAsString());

  // Sparse tensors have no ignis form.
  in->mutable_type()->mutable_sparse_tensor_type()->set_elem_type(1);
  auto sparse = import_model(as_bytes(m.SerializeAsString()), "");
  ASSERT_FALSE(sparse);
  EXPECT_EQ(sparse.error().code(), StatusCode::Unsupported);
}

TEST(Import, StringTensorsKeepTheirBytes) {
  onnx::TensorProto tp;
  tp.set_data_type(onnx::TensorProto::STRING);
  tp.add_dims(2);
  tp.add_string_data("caf\xc3\xa9");
  tp.add_string_data(std::string("a\0b", 3));
  auto t = import_tensor_proto(as_bytes(tp.SerializeAsString()), nullptr);
  ASSERT_TRUE(t) << t.error().to_string();
  ASSERT_EQ(t->dtype(), DType::String);
  EXPECT_EQ(t->data_as<std::string>()[0], "caf\xc3\xa9");
  EXPECT_EQ(t->data_as<std::string>()[1], std::string("a\0b", 3));
  tp.add_string_data("extra");
  EXPECT_FALSE(import_tensor_proto(as_bytes(tp.SerializeAsString()), nullptr));
}

}  // namespace
}  // namespace ignis::onnx_io
