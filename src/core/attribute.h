// SPDX-License-Identifier: Apache-2.0
// Node attributes as kernels and shape inference read them. Independent of protobuf.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ignis/tensor.h"

namespace ignis {

namespace ir {
struct Graph;
}

struct Attribute {
  enum class Kind { Float, Int, String, Tensor, Floats, Ints, Strings, Graph, Other };
  Kind kind = Kind::Other;
  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  // Kind::Graph: a control-flow body (If's branches, Loop's and Scan's body). Immutable once
  // imported, so copies of the node share it.
  std::shared_ptr<const ir::Graph> graph;
};

const char* attribute_kind_name(Attribute::Kind kind);

// Ordered name -> Attribute map with typed getters. Getters return the default when the
// attribute is absent; a present attribute of the wrong kind is reported by `check_kinds`,
// which shape inference calls, so kernels may trust the getters.
class AttrMap {
 public:
  void set(std::string name, Attribute a);
  const Attribute* find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }

  int64_t get_int(std::string_view name, int64_t def = 0) const;
  float get_float(std::string_view name, float def = 0.0f) const;
  std::string get_string(std::string_view name, std::string def = "") const;
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> def = {}) const;
  std::vector<float> get_floats(std::string_view name, std::vector<float> def = {}) const;
  std::vector<std::string> get_strings(std::string_view name) const;
  const Tensor* get_tensor(std::string_view name) const;
  // Null when absent or not a graph.
  const ir::Graph* get_graph(std::string_view name) const;

  const std::vector<std::pair<std::string, Attribute>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<std::pair<std::string, Attribute>> items_;
};

}  // namespace ignis
