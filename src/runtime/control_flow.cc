// SPDX-License-Identifier: Apache-2.0
// Kernels for If, Loop and Scan. Each runs its bodies as runtime::Subgraph instances, so these
// kernels live beside the runtime rather than in src/kernels; registry.cc registers them.
//
// A node's inputs are its declared ones followed by the outer-scope values its bodies read
// (ir::outer_scope_names of its attributes); each body takes the subset it reads. The outputs
// are sized here (OpSchema::kernel_sizes_outputs): the kernel assigns each output tensor.
#include "runtime/control_flow.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "runtime/subgraph.h"

namespace ignis::runtime {
namespace {

using kernels::Kernel;
using kernels::KernelContext;
using kernels::KernelInit;


bool scalar_true(const Tensor& t) { return t.numel() >= 1 && load_as_double(t.dtype(), t.data(), 0) != 0.0; }

// ---- If ---------------------------------------------------------------------------------------

class IfKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<IfKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->then_, make_node_subgraph(init, "then_branch"));
    IGNIS_ASSIGN_OR_RETURN(k->else_, make_node_subgraph(init, "else_branch"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const NodeSubgraph& branch = scalar_true(ctx.input(0)) ? then_ : else_;
    IGNIS_ASSIGN_OR_RETURN(auto outs, run_node_subgraph(branch, ctx, {}));
    if (static_cast<int>(outs.size()) < ctx.num_outputs())
      return invalid_argument(str_cat("the branch gives ", outs.size(), " outputs; the node has ", ctx.num_outputs()));
    for (int o = 0; o < ctx.num_outputs(); ++o)
      if (ctx.has_output(o)) ctx.output(o) = std::move(outs[o]);
    return Status::ok();
  }

 private:
  NodeSubgraph then_, else_;
};

// ---- Stacking per-iteration values ---------------------------------------------------------

// Per-iteration tensors of one scan output, joined along a new axis `axis` (0 for Loop) at
// the end; `reverse` writes the last iteration first.
class Stack {
 public:
  Status add(Tensor t) {
    if (!parts_.empty() && (t.dtype() != parts_[0].dtype() || !(t.shape() == parts_[0].shape())))
      return invalid_argument(str_cat("iteration ", parts_.size(), " gives a ", dtype_name(t.dtype()), " ",
                                      t.shape().str(), " scan output; earlier iterations gave ",
                                      dtype_name(parts_[0].dtype()), " ", parts_[0].shape().str()));
    parts_.push_back(std::move(t));
    return Status::ok();
  }

  // `empty_type`: dtype and element shape when there were no iterations (the body's declaration).
  // `axis` may count from the end (-1: after the last axis of a step's value).
  Result<Tensor> join(int64_t axis_attr, bool reverse, const ValueInfo& empty_type) const {
    if (parts_.empty()) {
      Shape s{0};
      if (empty_type.has_shape)
        for (int64_t d : empty_type.dims) s.push_back(std::max<int64_t>(d, 0));
      const DType dt = empty_type.dtype == DType::Undefined ? DType::F32 : empty_type.dtype;
      return Tensor::zeros(dt, s);
    }
    const Shape& elem = parts_[0].shape();
    const int64_t normalized = axis_attr < 0 ? axis_attr + elem.rank() + 1 : axis_attr;
    if (normalized < 0 || normalized > elem.rank())
      return invalid_argument(str_cat("scan output axis ", axis_attr, " is out of range for rank ", elem.rank() + 1));
    const int axis = static_cast<int>(normalized);
    Shape shape;
    for (int d = 0; d < axis; ++d) shape.push_back(elem[d]);
    shape.push_back(static_cast<int64_t>(parts_.size()));
    for (int d = axis; d < elem.rank(); ++d) shape.push_back(elem[d]);
    Tensor out = Tensor::empty(parts_[0].dtype(), shape);
    const size_t esize = dtype_size(out.dtype());
    const int64_t outer = elem.numel(0, axis), inner = elem.numel(axis, elem.rank());
    const int64_t n = static_cast<int64_t>(parts_.size());
    auto* dst = static_cast<std::byte*>(out.data());
    for (int64_t k = 0; k < n; ++k) {
      const auto* src = static_cast<const std::byte*>(parts_[static_cast<size_t>(reverse ? n - 1 - k : k)].data());
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + ((o * n + k) * inner) * esize, src + o * inner * esize, static_cast<size_t>(inner) * esize);
    }
    return out;
  }

 private:
  std::vector<Tensor> parts_;
};

// ---- Loop -------------------------------------------------------------------------------------

class LoopKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<LoopKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->body_, make_node_subgraph(init, "body"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const int carried = static_cast<int>(body_.graph->declared_inputs()) - 2;
    const int scans = static_cast<int>(body_.graph->num_outputs()) - 1 - carried;
    int64_t trip_limit = std::numeric_limits<int64_t>::max();
    if (ctx.has_input(0)) trip_limit = load_as_int64(ctx.input(0).dtype(), ctx.input(0).data(), 0);
    bool cond = !ctx.has_input(1) || scalar_true(ctx.input(1));
    std::vector<Tensor> state;
    for (int i = 0; i < carried; ++i) {
      if (!ctx.has_input(2 + i)) return invalid_argument(str_cat("loop-carried input ", 2 + i, " is missing"));
      state.push_back(ctx.input(2 + i));
    }
    std::vector<Stack> stacks(static_cast<size_t>(scans));
    Tensor iteration = Tensor::zeros(DType::I64, Shape{});
    Tensor cond_value = Tensor::zeros(DType::Bool, Shape{});
    for (int64_t i = 0; i < trip_limit && cond; ++i) {
      *iteration.data_as<int64_t>() = i;
      *cond_value.data_as<bool>() = cond;
      std::vector<const Tensor*> ins = {&iteration, &cond_value};
      for (const Tensor& t : state) ins.push_back(&t);
      IGNIS_ASSIGN_OR_RETURN(auto outs, run_node_subgraph(body_, ctx, std::move(ins)));
      cond = scalar_true(outs[0]);
      for (int c = 0; c < carried; ++c) state[static_cast<size_t>(c)] = std::move(outs[1 + c]);
      for (int s = 0; s < scans; ++s) IGNIS_RETURN_IF_ERROR(stacks[static_cast<size_t>(s)].add(std::move(outs[1 + carried + s])));
    }
    for (int o = 0; o < ctx.num_outputs(); ++o) {
      if (!ctx.has_output(o)) continue;
      if (o < carried) {
        ctx.output(o) = std::move(state[static_cast<size_t>(o)]);
      } else {
        const ValueInfo& decl = body_.graph->graph().outputs[static_cast<size_t>(1 + o)];
        IGNIS_ASSIGN_OR_RETURN(ctx.output(o), stacks[static_cast<size_t>(o - carried)].join(0, false, decl));
      }
    }
    return Status::ok();
  }

 private:
  NodeSubgraph body_;
};

// ---- Scan -------------------------------------------------------------------------------------

// Slice `index` of `t` along `axis`: the tensor with that axis removed.
Tensor slice_along(const Tensor& t, int axis, int64_t index) {
  Shape shape;
  for (int d = 0; d < t.rank(); ++d)
    if (d != axis) shape.push_back(t.dim(d));
  Tensor out = Tensor::empty(t.dtype(), shape);
  const size_t esize = dtype_size(t.dtype());
  const int64_t outer = t.shape().numel(0, axis), inner = t.shape().numel(axis + 1, t.rank()), n = t.dim(axis);
  const auto* src = static_cast<const std::byte*>(t.data());
  auto* dst = static_cast<std::byte*>(out.data());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + o * inner * esize, src + ((o * n + index) * inner) * esize, static_cast<size_t>(inner) * esize);
  return out;
}

// An axis attribute entry, negative counting from the end of a tensor of `rank`.
Result<int> axis_of(const std::vector<int64_t>& axes, size_t k, int rank, std::string_view what) {
  const int64_t a = k < axes.size() ? axes[k] : 0;
  const int64_t r = a < 0 ? a + rank : a;
  if (r < 0 || r >= rank) return invalid_argument(str_cat(what, " ", a, " is out of range for rank ", rank));
  return static_cast<int>(r);
}

class ScanKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<ScanKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->body_, make_node_subgraph(init, "body"));
    k->batched_ = init.opset < 9;
    k->num_scan_inputs_ = static_cast<int>(init.attrs.get_int("num_scan_inputs"));
    k->input_axes_ = init.attrs.get_ints("scan_input_axes");
    // Scan-8 names the input directions "directions"; its scan axis is always 0 within a batch.
    k->input_directions_ = init.attrs.get_ints(k->batched_ ? "directions" : "scan_input_directions");
    k->output_axes_ = init.attrs.get_ints("scan_output_axes");
    k->output_directions_ = init.attrs.get_ints("scan_output_directions");
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const int declared = static_cast<int>(body_.graph->declared_inputs());
    const int states = declared - num_scan_inputs_;
    if (!batched_) {
      std::vector<Tensor> ins;
      for (int i = 0; i < declared; ++i) ins.push_back(ctx.input(i));
      IGNIS_ASSIGN_OR_RETURN(auto outs, scan(ctx, ins));
      for (int o = 0; o < ctx.num_outputs(); ++o)
        if (ctx.has_output(o)) ctx.output(o) = std::move(outs[static_cast<size_t>(o)]);
      return Status::ok();
    }
    // Scan-8: input 0 is sequence_lens; states and scan inputs carry a batch axis 0, scanned
    // one batch entry at a time.
    const int64_t batch = ctx.input(1).rank() > 0 ? ctx.input(1).dim(0) : 0;
    if (ctx.has_input(0)) {
      const Tensor& lens = ctx.input(0);
      const int64_t full = ctx.input(1 + states).rank() > 1 ? ctx.input(1 + states).dim(1) : 0;
      for (int64_t b = 0; b < lens.numel(); ++b)
        if (load_as_int64(lens.dtype(), lens.data(), b) != full)
          return unsupported("Scan-8 with sequence_lens shorter than the scan inputs is not supported");
    }
    std::vector<Stack> per_output(static_cast<size_t>(ctx.num_outputs()));
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> ins;
      for (int i = 0; i < declared; ++i) ins.push_back(slice_along(ctx.input(1 + i), 0, b));
      IGNIS_ASSIGN_OR_RETURN(auto outs, scan(ctx, ins));
      for (int o = 0; o < ctx.num_outputs(); ++o)
        IGNIS_RETURN_IF_ERROR(per_output[static_cast<size_t>(o)].add(std::move(outs[static_cast<size_t>(o)])));
    }
    for (int o = 0; o < ctx.num_outputs(); ++o) {
      if (!ctx.has_output(o)) continue;
      IGNIS_ASSIGN_OR_RETURN(ctx.output(o), per_output[static_cast<size_t>(o)].join(0, false, ValueInfo{}));
    }
    return Status::ok();
  }

 private:
  // Scan-9 semantics on `ins` (states, then scan inputs): the final states, then the scan outputs.
  Result<std::vector<Tensor>> scan(const KernelContext& ctx, const std::vector<Tensor>& ins) const {
    const int declared = static_cast<int>(ins.size());
    const int states = declared - num_scan_inputs_;
    const int scan_outputs = static_cast<int>(body_.graph->num_outputs()) - states;
    std::vector<int> axes;
    int64_t length = -1;
    for (int k = 0; k < num_scan_inputs_; ++k) {
      const Tensor& x = ins[static_cast<size_t>(states + k)];
      IGNIS_ASSIGN_OR_RETURN(int axis, axis_of(input_axes_, static_cast<size_t>(k), x.rank(), "scan_input_axes entry"));
      if (length >= 0 && x.dim(axis) != length)
        return invalid_argument(str_cat("scan input ", states + k, " has ", x.dim(axis), " steps along axis ", axis,
                                        "; earlier scan inputs have ", length));
      length = x.dim(axis);
      axes.push_back(axis);
    }
    std::vector<Tensor> state(ins.begin(), ins.begin() + states);
    std::vector<Stack> stacks(static_cast<size_t>(scan_outputs));
    for (int64_t t = 0; t < length; ++t) {
      std::vector<Tensor> slices;
      for (int k = 0; k < num_scan_inputs_; ++k) {
        const auto kk = static_cast<size_t>(k);
        const bool reverse = kk < input_directions_.size() && input_directions_[kk] == 1;
        slices.push_back(slice_along(ins[static_cast<size_t>(states + k)], axes[kk], reverse ? length - 1 - t : t));
      }
      std::vector<const Tensor*> body_ins;
      for (const Tensor& s : state) body_ins.push_back(&s);
      for (const Tensor& s : slices) body_ins.push_back(&s);
      IGNIS_ASSIGN_OR_RETURN(auto outs, run_node_subgraph(body_, ctx, std::move(body_ins)));
      for (int s = 0; s < states; ++s) state[static_cast<size_t>(s)] = std::move(outs[static_cast<size_t>(s)]);
      for (int s = 0; s < scan_outputs; ++s)
        IGNIS_RETURN_IF_ERROR(stacks[static_cast<size_t>(s)].add(std::move(outs[static_cast<size_t>(states + s)])));
    }
    std::vector<Tensor> result = std::move(state);
    for (int k = 0; k < scan_outputs; ++k) {
      const auto kk = static_cast<size_t>(k);
      const ValueInfo& decl = body_.graph->graph().outputs[static_cast<size_t>(states + k)];
      const bool reverse = kk < output_directions_.size() && output_directions_[kk] == 1;
      const int64_t axis = kk < output_axes_.size() ? output_axes_[kk] : 0;
      IGNIS_ASSIGN_OR_RETURN(Tensor joined, stacks[kk].join(axis, reverse, decl));
      result.push_back(std::move(joined));
    }
    return result;
  }

  NodeSubgraph body_;
  bool batched_ = false;  // Scan-8
  int num_scan_inputs_ = 0;
  std::vector<int64_t> input_axes_, input_directions_, output_axes_, output_directions_;
};

// ---- SequenceMap --------------------------------------------------------------------------

// SequenceMap(input_sequence, additional_inputs...): the body runs once per item of the
// sequences, which must have one length; tensor inputs are passed whole to every run. Output
// k gathers the body's output k of each run into a sequence.
class SequenceMapKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<SequenceMapKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->body_, make_node_subgraph(init, "body"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const int declared = static_cast<int>(body_.graph->declared_inputs());
    const size_t n = ctx.input(0).as_sequence().items.size();
    for (int i = 1; i < declared; ++i) {
      if (!ctx.has_input(i)) return invalid_argument(str_cat("input ", i, " is missing"));
      if (ctx.input(i).dtype() == DType::Sequence && ctx.input(i).as_sequence().items.size() != n)
        return invalid_argument(str_cat("input ", i, " has ", ctx.input(i).as_sequence().items.size(),
                                        " tensors; input 0 has ", n));
    }
    std::vector<std::vector<Tensor>> gathered(static_cast<size_t>(ctx.num_outputs()));
    for (size_t k = 0; k < n; ++k) {
      std::vector<const Tensor*> ins;
      for (int i = 0; i < declared; ++i) {
        const Tensor& in = ctx.input(i);
        ins.push_back(in.dtype() == DType::Sequence ? &in.as_sequence().items[k] : &in);
      }
      IGNIS_ASSIGN_OR_RETURN(auto outs, run_node_subgraph(body_, ctx, std::move(ins)));
      for (size_t o = 0; o < gathered.size(); ++o) gathered[o].push_back(std::move(outs[o]));
    }
    for (int o = 0; o < ctx.num_outputs(); ++o) {
      if (!ctx.has_output(o)) continue;
      auto& items = gathered[static_cast<size_t>(o)];
      const DType element = items.empty() ? body_.graph->graph().outputs[static_cast<size_t>(o)].dtype : items[0].dtype();
      ctx.output(o) = Tensor::sequence(element, std::move(items));
    }
    return Status::ok();
  }

 private:
  NodeSubgraph body_;
};

}  // namespace

void register_control_flow_kernels(kernels::KernelRegistry& r) {
  const DTypeSet any = DTypeSet::storable() | DTypeSet::containers() | DTypeSet{DType::String, DType::Undefined};
  r.add({.domain = "", .op_type = "If", .since_opset = 1, .types = DTypeSet{DType::Bool}, .id = "runtime/if",
         .factory = IfKernel::create});
  r.add({.domain = "", .op_type = "Loop", .since_opset = 1, .types = any, .id = "runtime/loop",
         .factory = LoopKernel::create});
  r.add({.domain = "", .op_type = "Scan", .since_opset = 8, .types = any, .id = "runtime/scan",
         .factory = ScanKernel::create});
  r.add({.domain = "", .op_type = "SequenceMap", .since_opset = 17, .types = DTypeSet{DType::Sequence},
         .id = "runtime/sequence_map", .factory = SequenceMapKernel::create});
}

}  // namespace ignis::runtime
