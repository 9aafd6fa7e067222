// SPDX-License-Identifier: Apache-2.0
// What the optimizer can prove about each value without running the model: its dtype, its
// rank and, per dimension, a fixed extent or a symbol shared with a graph input ("batch").
// Propagated from the declared inputs and initializers through the ops whose shape rules are
// simple; anything else is Unknown, and passes do not fuse what they cannot prove.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ignis/dtype.h"
#include "ir/graph.h"

namespace ignis::passes {

// A dimension: a fixed extent (value >= 0), a named symbolic extent, or unknown. Symbols are
// the graph inputs' dim names, or "?<value>#<axis>" for an extent known only as that of
// another value; equal symbols are equal extents.
struct DimFact {
  int64_t value = -1;
  std::string symbol;

  static DimFact fixed(int64_t v) { return {v, {}}; }
  static DimFact named(std::string s) { return {-1, std::move(s)}; }
  bool is_fixed() const { return value >= 0; }
  bool is_unknown() const { return value < 0 && symbol.empty(); }
};

// True when a and b are provably the same extent at run time.
bool same_dim(const DimFact& a, const DimFact& b);

struct ValueFact {
  DType dtype = DType::Undefined;
  int rank = -1;               // -1: unknown
  std::vector<DimFact> dims;   // rank entries when the rank is known
  // For a small int64 / int32 tensor of rank 0 or 1 that holds extents (a Shape, what Gather,
  // Unsqueeze, Concat... make of one, a constant): its values, each a fixed number or an
  // extent of some value; empty when not known. Reshape reads its target shape from them.
  std::vector<DimFact> contents;

  bool has_rank() const { return rank >= 0; }
  // The last dimension; unknown when the rank is unknown or 0.
  DimFact last_dim() const { return rank > 0 ? dims.back() : DimFact{}; }
};

class GraphFacts {
 public:
  explicit GraphFacts(const ir::Graph& g);

  // Facts of `value`; all unknown for a value the graph does not define.
  const ValueFact& operator[](const std::string& value) const;
  DType dtype(const std::string& value) const { return (*this)[value].dtype; }
  int rank(const std::string& value) const { return (*this)[value].rank; }
  // True when both shapes are known to be equal, dimension by dimension.
  bool same_shape(const std::string& a, const std::string& b) const;
  // Elements per image of a 4-D value (C * H * W), or -1 when not all fixed: what a layout
  // pass weighs its reorders by.
  int64_t elements_per_image(const std::string& value) const;

 private:
  std::unordered_map<std::string, ValueFact> facts_;
  ValueFact unknown_;
};

}  // namespace ignis::passes
