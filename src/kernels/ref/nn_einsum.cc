// SPDX-License-Identifier: Apache-2.0
// Reference Einsum: explicit index loops. Every label gets an extent and, per operand, a
// stride (summed over the operand's axes carrying it, which takes diagonals; zero where the
// operand broadcasts a size-1 ellipsis axis). Each output element sums the operands' product
// over all values of the labels absent from the output. Floats accumulate in double,
// integers in wrapping 64-bit arithmetic.
// Two-operand float equations that are batched matrix products (every label is a batch,
// row, column or contracted label, no diagonals or broadcasting) are instead gathered into
// [batch, M, K] and [batch, K, N] buffers and run through the shared GEMM.
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

// Calls f(i, offset) for the dense index i over the labels `order` (row-major over their
// extents) and the matching offset through per-label strides.
template <class F>
void walk_labels(const std::vector<int>& order, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                 F f) {
  int64_t total = 1;
  for (int l : order) total *= dims[l];
  std::vector<int64_t> idx(order.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    f(i, off);
    for (int a = static_cast<int>(order.size()) - 1; a >= 0; --a) {
      const int l = order[a];
      off += strides[l];
      if (++idx[a] < dims[l]) break;
      off -= strides[l] * dims[l];
      idx[a] = 0;
    }
  }
}

// Per-label strides of an operand, or empty when it repeats a label or broadcasts an axis.
std::vector<int64_t> label_strides(const EinsumEquation& e, const std::vector<int>& labels, const Shape& shape) {
  std::vector<int64_t> st(e.num_labels, 0);
  std::vector<bool> seen(e.num_labels, false);
  const std::vector<int64_t> rs = shape.strides();
  for (int ax = 0; ax < shape.rank(); ++ax) {
    const int l = labels[ax];
    if (seen[l] || shape[ax] != e.label_dims[l]) return {};
    seen[l] = true;
    st[l] = rs[ax];
  }
  return st;
}

template <class T>
bool try_einsum_gemm(const EinsumEquation& e, const std::vector<Shape>& shapes, const T* a, const T* b, T* y,
                     const Shape& y_shape, ThreadPool* pool) {
  if (shapes.size() != 2) return false;
  const std::vector<int64_t> sa = label_strides(e, e.inputs[0], shapes[0]);
  const std::vector<int64_t> sb = label_strides(e, e.inputs[1], shapes[1]);
  const std::vector<int64_t> sy = label_strides(e, e.output, y_shape);
  if (sa.empty() || sb.empty() || sy.empty()) return false;
  std::vector<bool> in_a(e.num_labels, false), in_b(e.num_labels, false), in_y(e.num_labels, false);
  for (int l : e.inputs[0]) in_a[l] = true;
  for (int l : e.inputs[1]) in_b[l] = true;
  for (int l : e.output) in_y[l] = true;
  std::vector<int> batch, rows, cols, depth;
  for (int l = 0; l < e.num_labels; ++l) {
    if (in_a[l] && in_b[l]) (in_y[l] ? batch : depth).push_back(l);
    else if (in_a[l] && in_y[l]) rows.push_back(l);
    else if (in_b[l] && in_y[l]) cols.push_back(l);
    else return false;  // summed within one operand: leave to the loops
  }
  auto extent = [&](const std::vector<int>& ls) {
    int64_t p = 1;
    for (int l : ls) p *= e.label_dims[l];
    return p;
  };
  const int64_t nb = extent(batch), m = extent(rows), n = extent(cols), k = extent(depth);
  auto concat = [](std::vector<int> x, const std::vector<int>& z) {
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  std::vector<T> ap(static_cast<size_t>(nb * m * k)), bp(static_cast<size_t>(nb * k * n)),
      yp(static_cast<size_t>(nb * m * n));
  walk_labels(concat(concat(batch, rows), depth), e.label_dims, sa, [&](int64_t i, int64_t off) { ap[i] = a[off]; });
  walk_labels(concat(concat(batch, depth), cols), e.label_dims, sb, [&](int64_t i, int64_t off) { bp[i] = b[off]; });
  const int threads = pool ? pool->threads() : 1;
  ThreadPool* inner = nb >= threads ? nullptr : pool;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      gemm<T>(false, false, m, n, k, T(1), ap.data() + i * m * k, k, bp.data() + i * k * n, n, T(0),
              yp.data() + i * m * n, n, inner);
  };
  if (inner) run(0, nb);
  else parallel_for(pool, nb, 1, run);
  walk_labels(concat(concat(batch, rows), cols), e.label_dims, sy, [&](int64_t i, int64_t off) { y[off] = yp[i]; });
  return true;
}

Status einsum_kernel(KernelContext& ctx) {
  std::vector<Shape> shapes;
  for (int i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.input(i).shape());
  IGNIS_ASSIGN_OR_RETURN(EinsumEquation e, parse_einsum(ctx.attrs().get_string("equation"), shapes));
  Tensor& y = ctx.output(0);
  if (y.numel() > 0 && ctx.num_inputs() == 2) {
    if (y.dtype() == DType::F32 &&
        try_einsum_gemm<float>(e, shapes, ctx.input(0).data_as<float>(), ctx.input(1).data_as<float>(),
                               y.data_as<float>(), y.shape(), ctx.pool()))
      return Status::ok();
    if (y.dtype() == DType::F64 &&
        try_einsum_gemm<double>(e, shapes, ctx.input(0).data_as<double>(), ctx.input(1).data_as<double>(),
                                y.data_as<double>(), y.shape(), ctx.pool()))
      return Status::ok();
  }
  const EinsumLoops loops = plan_einsum(e, shapes);
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
  r.add({.domain = "", .op_type = "Einsum", .since_opset = 12, .types = DTypeSet::numeric(),
         .id = "ref/einsum", .fn = einsum_kernel});
}

}  // namespace ignis::kernels::ref
