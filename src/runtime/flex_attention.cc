// SPDX-License-Identifier: Apache-2.0
// FlexAttention: scores, score_mod, softmax, prob_mod, P V. The modifiers are the node's graph
// attributes, run as runtime::NodeSubgraph on the whole [B, Hq, L, S] tensor, once each per call.
// The arithmetic is the reference stages' (kernels/ref/transformer_flex.h), so this is the op's
// reference kernel; it lives here because kernels cannot run graphs.
#include "runtime/flex_attention.h"

#include <memory>
#include <optional>
#include <string_view>

#include "core/strings.h"
#include "kernels/ref/transformer_flex.h"
#include "runtime/subgraph.h"

namespace ignis::runtime {
namespace {

using kernels::Kernel;
using kernels::KernelContext;
using kernels::KernelInit;

Result<std::optional<NodeSubgraph>> optional_subgraph(const KernelInit& init, std::string_view attr) {
  if (init.attrs.get_graph(attr) == nullptr) return std::optional<NodeSubgraph>();
  IGNIS_ASSIGN_OR_RETURN(NodeSubgraph g, make_node_subgraph(init, attr));
  return std::optional<NodeSubgraph>(std::move(g));
}

class FlexAttentionKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<FlexAttentionKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->score_mod_, optional_subgraph(init, "score_mod"));
    IGNIS_ASSIGN_OR_RETURN(k->prob_mod_, optional_subgraph(init, "prob_mod"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
    const DType score_type = kernels::ref::flex_attention_score_dtype(ctx.attrs(), q.dtype());
    Tensor scores = Tensor::empty(score_type, Shape{q.dim(0), q.dim(1), q.dim(2), k.dim(2)});
    kernels::ref::flex_attention_scores(ctx.attrs(), q, k, scores, ctx.pool());
    if (score_mod_) {
      IGNIS_ASSIGN_OR_RETURN(scores, modify(*score_mod_, "score_mod", ctx, scores));
    }
    // A new tensor: a modifier's result may share its buffer with a value of its graph.
    Tensor probs = Tensor::empty(score_type, scores.shape());
    kernels::ref::flex_attention_softmax(scores, probs, ctx.pool());
    if (prob_mod_) {
      IGNIS_ASSIGN_OR_RETURN(probs, modify(*prob_mod_, "prob_mod", ctx, probs));
    }
    kernels::ref::flex_attention_output(probs, v, ctx.output(0), ctx.pool());
    return Status::ok();
  }

 private:
  // Runs a modifier on `x`; its one result must have x's dtype and shape.
  static Result<Tensor> modify(const NodeSubgraph& mod, std::string_view name, const KernelContext& ctx,
                               const Tensor& x) {
    IGNIS_ASSIGN_OR_RETURN(auto outs, run_node_subgraph(mod, ctx, {&x}));
    if (outs.size() != 1)
      return invalid_argument(str_cat("FlexAttention: ", name, " gave ", outs.size(), " outputs, not 1"));
    if (outs[0].dtype() != x.dtype() || !(outs[0].shape() == x.shape()))
      return invalid_argument(str_cat("FlexAttention: ", name, " must return its input's dtype and shape ",
                                      dtype_name(x.dtype()), " ", x.shape().str(), ", got ",
                                      dtype_name(outs[0].dtype()), " ", outs[0].shape().str()));
    return std::move(outs[0]);
  }

  std::optional<NodeSubgraph> score_mod_, prob_mod_;
};

}  // namespace

void register_flex_attention_kernels(kernels::KernelRegistry& r) {
  // A reference kernel ("ref/"): the stages are the plain loops of kernels/ref.
  r.add({.domain = "ai.onnx.preview", .op_type = "FlexAttention", .since_opset = 1, .until_opset = 1,
         .types = DTypeSet::floats(), .id = "ref/flexattention", .factory = FlexAttentionKernel::create});
}

}  // namespace ignis::runtime
