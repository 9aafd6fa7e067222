// SPDX-License-Identifier: Apache-2.0
// Builds small ONNX models in memory for tests (serialized ModelProto bytes).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ignis/dtype.h"

namespace ignis::testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17);
  ~ModelBuilder();
  ModelBuilder(const ModelBuilder&) = delete;
  ModelBuilder& operator=(const ModelBuilder&) = delete;
  ModelBuilder(ModelBuilder&& o) noexcept : impl_(o.impl_) { o.impl_ = nullptr; }

  // dims < 0 are symbolic (named "d<i>" unless dim_names is given).
  ModelBuilder& input(const std::string& name, DType dtype, std::vector<int64_t> dims,
                      std::vector<std::string> dim_names = {});
  ModelBuilder& output(const std::string& name, DType dtype = DType::Undefined);
  ModelBuilder& initializer_f32(const std::string& name, std::vector<int64_t> dims, std::vector<float> values);
  ModelBuilder& initializer_i64(const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values);
  ModelBuilder& node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                     const std::string& name = "", std::vector<std::pair<std::string, int64_t>> int_attrs = {},
                     const std::string& domain = "");
  ModelBuilder& opset_import(const std::string& domain, int64_t version);
  // Adds a float attribute to the most recently added node.
  ModelBuilder& float_attr(const std::string& name, float value);
  // Adds a string attribute to the most recently added node.
  ModelBuilder& string_attr(const std::string& name, const std::string& value);
  // Adds an int-list attribute to the most recently added node.
  ModelBuilder& ints_attr(const std::string& name, const std::vector<int64_t>& values);

  std::string bytes() const;
  // Writes the model to a temporary file and returns its path.
  std::string write_temp(const std::string& stem) const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace ignis::testing
