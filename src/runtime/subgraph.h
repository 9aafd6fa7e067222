// SPDX-License-Identifier: Apache-2.0
// Runs a node's graph attribute (If's branches, Loop's and Scan's body, FlexAttention's score
// and probability modifiers) as a graph of its own: its declared inputs followed by the
// outer-scope values it reads become graph inputs, and it is planned per input signature like
// a session's model, the plans kept for later calls.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "runtime/model.h"
#include "runtime/plan.h"

namespace ignis::runtime {

class Subgraph {
 public:
  // `body` must outlive nothing: it is copied (initializer data is shared, not duplicated).
  static Result<std::unique_ptr<Subgraph>> create(const ir::Graph& body);

  size_t declared_inputs() const { return declared_inputs_; }
  size_t num_outputs() const { return model_->graph_outputs.size(); }
  // The outer-scope names the body reads, in the order run() takes their values.
  const std::vector<std::string>& outer_names() const { return outer_names_; }
  const ir::Graph& graph() const { return model_->graph; }

  // `inputs`: the declared inputs, then one value per outer_names() entry. Thread-safe.
  Result<std::vector<Tensor>> run(std::span<const Tensor* const> inputs, ThreadPool* pool) const;

 private:
  Subgraph() = default;
  std::shared_ptr<Model> model_;
  size_t declared_inputs_ = 0;
  std::vector<std::string> outer_names_;
  mutable KernelCache kernels_;  // thread-safe
  struct Entry {
    std::vector<ir::ValueType> signature;
    std::shared_ptr<const Plan> plan;
  };
  mutable std::mutex mu_;
  mutable std::vector<Entry> plans_;
};

// A node's graph attribute with, for each outer name it reads, the index of that value among
// the node's inputs (which end with the outer-scope values of all its subgraphs).
struct NodeSubgraph {
  std::unique_ptr<Subgraph> graph;
  std::vector<int> outer_inputs;
};

// Builds the subgraph of graph attribute `attr` of the node a kernel is made for.
Result<NodeSubgraph> make_node_subgraph(const kernels::KernelInit& init, std::string_view attr);

// Runs `body` on `declared` followed by its outer values taken from the node's inputs.
Result<std::vector<Tensor>> run_node_subgraph(const NodeSubgraph& body, const kernels::KernelContext& ctx,
                                              std::vector<const Tensor*> declared);

}  // namespace ignis::runtime
