// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the sequence and optional ops (schemas in src/ir/ops/sequence.cc,
// which validated positions and shapes against the run's values). Each makes a new container:
// containers never change once made, so items are shared between sequences, never copied,
// except a tensor the run does not own (a view of the caller's input), which is copied once.
// SequenceMap runs a body and lives with the control-flow kernels.
#include <cstring>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {
namespace {

constexpr DTypeSet kElements = DTypeSet::storable() | DTypeSet{DType::String};

// A handle that stays valid after the run: views of memory the run does not own are copied.
Tensor keep(const Tensor& t) { return t.owns_data() || dtype_is_container(t.dtype()) ? t : t.clone(); }

int64_t position(const KernelContext& ctx, int input, int64_t n, int64_t absent) {
  if (!ctx.has_input(input)) return absent;
  const Tensor& p = ctx.input(input);
  const int64_t v = load_as_int64(p.dtype(), p.data(), 0);
  return v < 0 ? v + n : v;
}

Status sequence_empty(KernelContext& ctx) {
  const auto dt = dtype_from_onnx(static_cast<int32_t>(ctx.attrs().get_int("dtype", 1)));
  ctx.output(0) = Tensor::sequence(dt.value_or(DType::F32), {});
  return Status::ok();
}

Status sequence_construct(KernelContext& ctx) {
  std::vector<Tensor> items;
  for (int i = 0; i < ctx.num_inputs(); ++i) items.push_back(keep(ctx.input(i)));
  ctx.output(0) = Tensor::sequence(ctx.input(0).dtype(), std::move(items));
  return Status::ok();
}

Status sequence_insert(KernelContext& ctx) {
  const TensorSequence& in = ctx.input(0).as_sequence();
  std::vector<Tensor> items = in.items;
  const int64_t at = position(ctx, 2, static_cast<int64_t>(items.size()), static_cast<int64_t>(items.size()));
  items.insert(items.begin() + at, keep(ctx.input(1)));
  ctx.output(0) = Tensor::sequence(ctx.input(1).dtype(), std::move(items));
  return Status::ok();
}

Status sequence_erase(KernelContext& ctx) {
  const TensorSequence& in = ctx.input(0).as_sequence();
  std::vector<Tensor> items = in.items;
  const int64_t at = position(ctx, 1, static_cast<int64_t>(items.size()), static_cast<int64_t>(items.size()) - 1);
  items.erase(items.begin() + at);
  ctx.output(0) = Tensor::sequence(in.element, std::move(items));
  return Status::ok();
}

Status sequence_at(KernelContext& ctx) {
  const auto& items = ctx.input(0).as_sequence().items;
  ctx.output(0) = keep(items[static_cast<size_t>(position(ctx, 1, static_cast<int64_t>(items.size()), 0))]);
  return Status::ok();
}

Status sequence_length(KernelContext& ctx) {
  *ctx.output(0).data_as<int64_t>() = static_cast<int64_t>(ctx.input(0).as_sequence().items.size());
  return Status::ok();
}

// Copies `len` entries of axis `axis` starting at `start` of `x` (viewed as [outer, n, inner]).
Tensor slice_axis(const Tensor& x, int axis, int64_t start, int64_t len, bool keep_axis) {
  Shape shape;
  for (int d = 0; d < x.rank(); ++d) {
    if (d != axis) shape.push_back(x.dim(d));
    else if (keep_axis) shape.push_back(len);
  }
  Tensor out = Tensor::empty(x.dtype(), shape);
  const size_t esize = dtype_size(x.dtype());
  const int64_t outer = x.shape().numel(0, axis), inner = x.shape().numel(axis + 1, x.rank()), n = x.dim(axis);
  const size_t block = static_cast<size_t>(len * inner) * esize;
  const auto* src = static_cast<const std::byte*>(x.data());
  auto* dst = static_cast<std::byte*>(out.data());
  for (int64_t o = 0; o < outer && block > 0; ++o)
    std::memcpy(dst + o * static_cast<int64_t>(block), src + ((o * n + start) * inner) * static_cast<int64_t>(esize), block);
  return out;
}

Status split_to_sequence(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t a = ctx.attrs().get_int("axis", 0);
  if (a < 0) a += x.rank();
  const int axis = static_cast<int>(a);
  const int64_t n = x.dim(axis);
  std::vector<int64_t> lengths;
  bool keep_axis = true;
  if (!ctx.has_input(1)) {
    lengths.assign(static_cast<size_t>(n), 1);
    keep_axis = ctx.attrs().get_int("keepdims", 1) != 0;
  } else if (const Tensor& split = ctx.input(1); split.rank() == 0) {
    const int64_t part = load_as_int64(split.dtype(), split.data(), 0);
    for (int64_t at = 0; at < n; at += part) lengths.push_back(std::min(part, n - at));
  } else {
    for (int64_t i = 0; i < split.numel(); ++i) lengths.push_back(load_as_int64(split.dtype(), split.data(), i));
  }
  std::vector<Tensor> items;
  int64_t start = 0;
  for (int64_t len : lengths) {
    items.push_back(slice_axis(x, axis, start, len, keep_axis));
    start += len;
  }
  ctx.output(0) = Tensor::sequence(x.dtype(), std::move(items));
  return Status::ok();
}

// The output's shape was inferred from the items; they are copied in along the axis.
Status concat_from_sequence(KernelContext& ctx) {
  const auto& items = ctx.input(0).as_sequence().items;
  Tensor& out = ctx.output(0);
  const bool new_axis = ctx.attrs().get_int("new_axis", 0) != 0;
  int64_t axis = ctx.attrs().get_int("axis");
  if (axis < 0) axis += out.rank();
  const int ax = static_cast<int>(axis);
  const size_t esize = dtype_size(out.dtype());
  const int64_t outer = out.shape().numel(0, ax), inner = out.shape().numel(ax + 1, out.rank()), total = out.dim(ax);
  auto* dst = static_cast<std::byte*>(out.data());
  int64_t offset = 0;
  for (const Tensor& t : items) {
    const int64_t len = new_axis ? 1 : t.dim(ax);
    const int64_t block = len * inner * static_cast<int64_t>(esize);
    const auto* src = static_cast<const std::byte*>(t.data());
    for (int64_t o = 0; o < outer && block > 0; ++o)
      std::memcpy(dst + ((o * total + offset) * inner) * static_cast<int64_t>(esize), src + o * block,
                  static_cast<size_t>(block));
    offset += len;
  }
  return Status::ok();
}

Status optional_make(KernelContext& ctx) {
  ctx.output(0) = ctx.has_input(0) ? Tensor::optional(keep(ctx.input(0))) : Tensor::optional(Tensor());
  return Status::ok();
}

Status optional_has_element(KernelContext& ctx) {
  bool has = ctx.has_input(0);
  if (has && ctx.input(0).dtype() == DType::Optional) has = ctx.input(0).as_optional().has_value();
  *ctx.output(0).data_as<bool>() = has;
  return Status::ok();
}

Status optional_get_element(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  ctx.output(0) = keep(in.dtype() == DType::Optional ? in.as_optional().value : in);
  return Status::ok();
}

// Identity on values that are not plain buffers: strings are copied, containers shared.
Status identity_object(KernelContext& ctx) {
  ctx.output(0) = ctx.input(0).clone();
  return Status::ok();
}

void add(KernelRegistry& r, std::string_view op, int since, DTypeSet types, std::string_view id, KernelFn fn) {
  r.add({.domain = "", .op_type = op, .since_opset = since, .types = types, .id = id, .fn = fn});
}

}  // namespace

void register_sequence(KernelRegistry& r) {
  const DTypeSet seq{DType::Sequence};
  const DTypeSet none{DType::Undefined};
  add(r, "SequenceEmpty", 11, none, "ref/sequence_empty", sequence_empty);
  add(r, "SequenceConstruct", 11, kElements, "ref/sequence_construct", sequence_construct);
  add(r, "SequenceInsert", 11, seq, "ref/sequence_insert", sequence_insert);
  add(r, "SequenceErase", 11, seq, "ref/sequence_erase", sequence_erase);
  add(r, "SequenceAt", 11, seq, "ref/sequence_at", sequence_at);
  add(r, "SequenceLength", 11, seq, "ref/sequence_length", sequence_length);
  add(r, "SplitToSequence", 11, DTypeSet::storable(), "ref/split_to_sequence", split_to_sequence);
  add(r, "ConcatFromSequence", 11, seq, "ref/concat_from_sequence", concat_from_sequence);
  const DTypeSet any = kElements | DTypeSet::containers() | none;
  add(r, "Optional", 15, any, "ref/optional", optional_make);
  add(r, "OptionalHasElement", 15, any, "ref/optional_has_element", optional_has_element);
  add(r, "OptionalGetElement", 15, any, "ref/optional_get_element", optional_get_element);
  add(r, "Identity", 1, DTypeSet::containers() | DTypeSet{DType::String}, "ref/identity_object", identity_object);
}

}  // namespace ignis::kernels::ref
