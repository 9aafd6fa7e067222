// SPDX-License-Identifier: Apache-2.0
#include "testing/model_builder.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace ignis::testing {

struct ModelBuilder::Impl {
  onnx::ModelProto model;
};

ModelBuilder::ModelBuilder(int64_t opset) : impl_(new Impl) {
  impl_->model.set_ir_version(8);
  impl_->model.set_producer_name("ignis-tests");
  auto* os = impl_->model.add_opset_import();
  os->set_domain("");
  os->set_version(opset);
  impl_->model.mutable_graph()->set_name("test");
}

ModelBuilder::~ModelBuilder() { delete impl_; }

ModelBuilder& ModelBuilder::input(const std::string& name, DType dtype, std::vector<int64_t> dims,
                                  std::vector<std::string> dim_names) {
  auto* vi = impl_->model.mutable_graph()->add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(dtype));
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (dims[i] >= 0) d->set_dim_value(dims[i]);
    else d->set_dim_param(i < dim_names.size() ? dim_names[i] : "d" + std::to_string(i));
  }
  return *this;
}

ModelBuilder& ModelBuilder::output(const std::string& name, DType dtype) {
  auto* vi = impl_->model.mutable_graph()->add_output();
  vi->set_name(name);
  if (dtype != DType::Undefined) vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(dtype));
  return *this;
}

ModelBuilder& ModelBuilder::initializer_f32(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
  auto* t = impl_->model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  for (auto v : values) t->add_float_data(v);
  return *this;
}

ModelBuilder& ModelBuilder::initializer_i64(const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
  auto* t = impl_->model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (auto d : dims) t->add_dims(d);
  for (auto v : values) t->add_int64_data(v);
  return *this;
}

ModelBuilder& ModelBuilder::node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                                 const std::string& name, std::vector<std::pair<std::string, int64_t>> int_attrs,
                                 const std::string& domain) {
  auto* n = impl_->model.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_domain(domain);
  n->set_name(name.empty() ? op + "_" + std::to_string(impl_->model.graph().node_size()) : name);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  for (auto& [k, v] : int_attrs) {
    auto* a = n->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  return *this;
}

ModelBuilder& ModelBuilder::opset_import(const std::string& domain, int64_t version) {
  auto* os = impl_->model.add_opset_import();
  os->set_domain(domain);
  os->set_version(version);
  return *this;
}

namespace {

// A new attribute of the graph's last node.
onnx::AttributeProto* add_last_node_attr(onnx::ModelProto& model, const std::string& name,
                                         onnx::AttributeProto::AttributeType type) {
  auto* g = model.mutable_graph();
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

}  // namespace

ModelBuilder& ModelBuilder::float_attr(const std::string& name, float value) {
  add_last_node_attr(impl_->model, name, onnx::AttributeProto::FLOAT)->set_f(value);
  return *this;
}

ModelBuilder& ModelBuilder::string_attr(const std::string& name, const std::string& value) {
  add_last_node_attr(impl_->model, name, onnx::AttributeProto::STRING)->set_s(value);
  return *this;
}

ModelBuilder& ModelBuilder::ints_attr(const std::string& name, const std::vector<int64_t>& values) {
  auto* a = add_last_node_attr(impl_->model, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
  return *this;
}

std::string ModelBuilder::bytes() const { return impl_->model.SerializeAsString(); }

std::string ModelBuilder::write_temp(const std::string& stem) const {
  // The process id keeps tests that ctest runs in parallel off each other's files.
  const auto path =
      std::filesystem::temp_directory_path() / ("ignis_test_" + std::to_string(::getpid()) + "_" + stem + ".onnx");
  std::ofstream(path, std::ios::binary) << bytes();
  return path.string();
}

}  // namespace ignis::testing
