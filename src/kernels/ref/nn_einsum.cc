// SPDX-License-Identifier: Apache-2.0
// Reference Einsum: explicit index loops. Every label gets an extent and, per operand, a
// stride (summed over the operand's axes carrying it, which takes diagonals; zero where the
// operand broadcasts a size-1 ellipsis axis). Each output element sums the operands' product
// over all values of the labels absent from the output. Floats accumulate in double,
// integers in wrapping 64-bit arithmetic.
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/einsum_equation.h"
#include "core/strings.h"
#include "kernels/ref/nn_internal.h"

namespace ignis::kernels::ref {

namespace {

struct EinsumLoops {
  std::vector<int64_t> out_dims, sum_dims;
  // strides[op][i]: operand op's stride for output label i, then for summed label i.
  std::vector<std::vector<int64_t>> out_strides, sum_strides;
};

EinsumLoops plan_einsum(const EinsumEquation& e, const std::vector<Shape>& shapes) {
  EinsumLoops l;
  std::vector<bool> in_output(e.num_labels, false);
  for (int label : e.output) in_output[label] = true;
  std::vector<int> sum_labels;
  for (int label = 0; label < e.num_labels; ++label)
    if (!in_output[label]) sum_labels.push_back(label);
  for (int label : e.output) l.out_dims.push_back(e.label_dims[label]);
  for (int label : sum_labels) l.sum_dims.push_back(e.label_dims[label]);
  for (size_t op = 0; op < shapes.size(); ++op) {
    std::vector<int64_t> per_label(e.num_labels, 0);
    const std::vector<int64_t> st = shapes[op].strides();
    for (int ax = 0; ax < shapes[op].rank(); ++ax) {
      const int label = e.inputs[op][ax];
      if (shapes[op][ax] == 1 && e.label_dims[label] != 1) continue;  // broadcast axis
      per_label[label] += st[ax];
    }
    std::vector<int64_t> os, ss;
    for (int label : e.output) os.push_back(per_label[label]);
    for (int label : sum_labels) ss.push_back(per_label[label]);
    l.out_strides.push_back(os);
    l.sum_strides.push_back(ss);
  }
  return l;
}

template <class T>
void einsum_compute(const EinsumLoops& l, const std::vector<const T*>& xs, T* y, int64_t out_numel, ThreadPool* pool) {
  using C = compute_t<T>;
  using Acc = std::conditional_t<std::is_floating_point_v<C>, double, uint64_t>;
  const size_t nops = xs.size();
  const int no = static_cast<int>(l.out_dims.size()), ns = static_cast<int>(l.sum_dims.size());
  int64_t sum_numel = 1;
  for (int64_t d : l.sum_dims) sum_numel *= d;
  parallel_for(pool, out_numel, 256, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> oidx(no), sidx(ns), base(nops), cur(nops);
    // Position the output odometer at `begin`.
    int64_t rem = begin;
    for (int i = no - 1; i >= 0; --i) {
      oidx[i] = rem % l.out_dims[i];
      rem /= l.out_dims[i];
    }
    for (size_t op = 0; op < nops; ++op) {
      base[op] = 0;
      for (int i = 0; i < no; ++i) base[op] += oidx[i] * l.out_strides[op][i];
    }
    for (int64_t o = begin; o < end; ++o) {
      Acc acc = Acc(0);
      std::fill(sidx.begin(), sidx.end(), 0);
      cur = base;
      for (int64_t s = 0; s < sum_numel; ++s) {
        Acc prod = Acc(1);
        for (size_t op = 0; op < nops; ++op) {
          if constexpr (std::is_floating_point_v<C>) prod *= static_cast<double>(to_compute(xs[op][cur[op]]));
          else prod *= static_cast<uint64_t>(xs[op][cur[op]]);
        }
        acc += prod;
        for (int i = ns - 1; i >= 0; --i) {
          for (size_t op = 0; op < nops; ++op) cur[op] += l.sum_strides[op][i];
          if (++sidx[i] < l.sum_dims[i]) break;
          for (size_t op = 0; op < nops; ++op) cur[op] -= l.sum_strides[op][i] * l.sum_dims[i];
          sidx[i] = 0;
        }
      }
      if constexpr (std::is_floating_point_v<C>) y[o] = from_compute<T>(acc);
      else y[o] = static_cast<T>(acc);
      for (int i = no - 1; i >= 0; --i) {
        for (size_t op = 0; op < nops; ++op) base[op] += l.out_strides[op][i];
        if (++oidx[i] < l.out_dims[i]) break;
        for (size_t op = 0; op < nops; ++op) base[op] -= l.out_strides[op][i] * l.out_dims[i];
        oidx[i] = 0;
      }
    }
  });
}

Status einsum_kernel(KernelContext& ctx) {
  std::vector<Shape> shapes;
  for (int i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.input(i).shape());
  IGNIS_ASSIGN_OR_RETURN(EinsumEquation e, parse_einsum(ctx.attrs().get_string("equation"), shapes));
  const EinsumLoops loops = plan_einsum(e, shapes);
  Tensor& y = ctx.output(0);
  return visit_dtype(y.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return unsupported("Einsum: bool");
    } else {
      std::vector<const T*> xs;
      for (int i = 0; i < ctx.num_inputs(); ++i) xs.push_back(ctx.input(i).data_as<T>());
      einsum_compute<T>(loops, xs, y.data_as<T>(), y.numel(), ctx.pool());
      return Status::ok();
    }
  });
}

}  // namespace

void register_nn_einsum(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "Einsum", .since_opset = 12, .until_opset = 21, .types = DTypeSet::numeric(),
         .id = "ref/einsum", .fn = einsum_kernel});
}

}  // namespace ignis::kernels::ref
