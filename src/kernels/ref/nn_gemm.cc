// SPDX-License-Identifier: Apache-2.0
// The shared reference GEMM and the MatMul and Gemm kernels built on it.
//
// GEMM scheme (portable C++, no intrinsics): the classic three-level blocking. B is packed
// per (kKc x kNc) block into kNr-wide column panels, A per (kMc x kKc) block into kMr-high
// row panels, both zero-padded at the edges, so the micro-kernel always runs a full
// kMr x kNr tile: kKc rank-1 updates of a register-resident accumulator. With kMr = 4 and
// kNr = 8 the accumulator is eight 128-bit registers, which g++ -O3 keeps in registers and
// vectorizes with plain SSE2; larger tiles spill (measured with a throwaway bench of the
// micro-kernel). The pool splits C into column (or row) stripes, one per thread, each
// packing its own panels.
#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "core/broadcast.h"
#include "core/strings.h"
#include "core/dtype_dispatch.h"
#include "kernels/ref/nn_internal.h"

namespace ignis::kernels::ref {

namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 128;   // A block kMc x kKc stays in L2
constexpr int64_t kNc = 2048;  // B block kKc x kNc stays in L2

template <class T>
T load_a(bool trans, const T* a, int64_t lda, int64_t i, int64_t p) {
  return trans ? a[p * lda + i] : a[i * lda + p];
}

// Packs op(A)[i0 : i0 + mc, p0 : p0 + kc] into kMr-row panels: panel r holds
// out[r * kMr * kc + p * kMr + i].
template <class T>
void pack_a(bool trans, const T* a, int64_t lda, int64_t i0, int64_t mc, int64_t p0, int64_t kc, T* out) {
  for (int64_t ir = 0; ir < mc; ir += kMr) {
    const int64_t rows = std::min<int64_t>(kMr, mc - ir);
    T* dst = out + ir * kc;
    if (!trans) {
      for (int64_t i = 0; i < rows; ++i) {
        const T* src = a + (i0 + ir + i) * lda + p0;
        for (int64_t p = 0; p < kc; ++p) dst[p * kMr + i] = src[p];
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        const T* src = a + (p0 + p) * lda + i0 + ir;
        for (int64_t i = 0; i < rows; ++i) dst[p * kMr + i] = src[i];
      }
    }
    for (int64_t i = rows; i < kMr; ++i)
      for (int64_t p = 0; p < kc; ++p) dst[p * kMr + i] = T(0);
  }
}

// Packs op(B)[p0 : p0 + kc, j0 : j0 + nc] into kNr-column panels: panel q holds
// out[q * kNr * kc + p * kNr + j].
template <class T>
void pack_b(bool trans, const T* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int64_t nc, T* out) {
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    const int64_t cols = std::min<int64_t>(kNr, nc - jr);
    T* dst = out + jr * kc;
    if (!trans) {
      for (int64_t p = 0; p < kc; ++p) {
        const T* src = b + (p0 + p) * ldb + j0 + jr;
        T* d = dst + p * kNr;
        if (cols == kNr) {
          for (int j = 0; j < kNr; ++j) d[j] = src[j];
        } else {
          for (int64_t j = 0; j < cols; ++j) d[j] = src[j];
          for (int64_t j = cols; j < kNr; ++j) d[j] = T(0);
        }
      }
    } else {
      for (int64_t j = 0; j < kNr; ++j) {
        if (j < cols) {
          const T* src = b + (j0 + jr + j) * ldb + p0;
          for (int64_t p = 0; p < kc; ++p) dst[p * kNr + j] = src[p];
        } else {
          for (int64_t p = 0; p < kc; ++p) dst[p * kNr + j] = T(0);
        }
      }
    }
  }
}

// tile = A panel (kMr x kc) * B panel (kc x kNr). Kept out of line so that the accumulator
// array is the only state and stays in registers.
template <class T>
__attribute__((noinline)) void micro_kernel(int64_t kc, const T* __restrict ap, const T* __restrict bp,
                                            T* __restrict tile) {
  T acc[kMr][kNr] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const T* bv = bp + p * kNr;
    const T* av = ap + p * kMr;
    for (int i = 0; i < kMr; ++i) {
      const T x = av[i];
      for (int j = 0; j < kNr; ++j) acc[i][j] += x * bv[j];
    }
  }
  for (int i = 0; i < kMr; ++i)
    for (int j = 0; j < kNr; ++j) tile[i * kNr + j] = acc[i][j];
}

template <class T>
void store_tile(const T* tile, int64_t rows, int64_t cols, T* c, int64_t ldc, T alpha, T beta, bool first) {
  for (int64_t i = 0; i < rows; ++i) {
    T* crow = c + i * ldc;
    const T* t = tile + i * kNr;
    if (!first) {
      for (int64_t j = 0; j < cols; ++j) crow[j] += alpha * t[j];
    } else if (beta == T(0)) {
      for (int64_t j = 0; j < cols; ++j) crow[j] = alpha * t[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) crow[j] = alpha * t[j] + beta * crow[j];
    }
  }
}

// C = beta * C, with beta == 0 writing zeros (used when k == 0).
template <class T>
void scale_c(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
}

// One row of A against all of B: memory bound, so skip packing. The transposed-B form is a
// dot product per column, split into kNr partial sums so the loop vectorizes without
// reassociating a single sum.
template <class T>
void gemm_row(bool trans_a, bool trans_b, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
              int64_t ldb, T beta, T* c) {
  if (!trans_b) {
    std::unique_ptr<T[]> acc(new T[n]());
    for (int64_t p = 0; p < k; ++p) {
      const T x = load_a(trans_a, a, lda, 0, p);
      const T* brow = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) acc[j] += x * brow[j];
    }
    for (int64_t j = 0; j < n; ++j) c[j] = alpha * acc[j] + (beta == T(0) ? T(0) : beta * c[j]);
    return;
  }
  std::unique_ptr<T[]> arow(new T[k]);
  for (int64_t p = 0; p < k; ++p) arow[p] = load_a(trans_a, a, lda, 0, p);
  for (int64_t j = 0; j < n; ++j) {
    const T* bcol = b + j * ldb;
    T part[kNr] = {};
    int64_t p = 0;
    for (; p + kNr <= k; p += kNr)
      for (int q = 0; q < kNr; ++q) part[q] += arow[p + q] * bcol[p + q];
    T sum = T(0);
    for (; p < k; ++p) sum += arow[p] * bcol[p];
    for (int q = 0; q < kNr; ++q) sum += part[q];
    c[j] = alpha * sum + (beta == T(0) ? T(0) : beta * c[j]);
  }
}

template <class T>
void gemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                 const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) return scale_c(m, n, beta, c, ldc);
  if (m == 1) return gemm_row(trans_a, trans_b, n, k, alpha, a, lda, b, ldb, beta, c);
  const int64_t kc_max = std::min(k, kKc);
  const int64_t mc_max = std::min(m, kMc);
  const int64_t nc_max = std::min(n, kNc);
  const int64_t mc_pad = (mc_max + kMr - 1) / kMr * kMr;
  const int64_t nc_pad = (nc_max + kNr - 1) / kNr * kNr;
  std::unique_ptr<T[]> abuf(new T[mc_pad * kc_max]);
  std::unique_ptr<T[]> bbuf(new T[nc_pad * kc_max]);
  alignas(64) T tile[kMr * kNr];
  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      const bool first = pc == 0;
      pack_b(trans_b, b, ldb, pc, kc, jc, nc, bbuf.get());
      for (int64_t ic = 0; ic < m; ic += kMc) {
        const int64_t mc = std::min(kMc, m - ic);
        pack_a(trans_a, a, lda, ic, mc, pc, kc, abuf.get());
        for (int64_t jr = 0; jr < nc; jr += kNr) {
          const int64_t cols = std::min<int64_t>(kNr, nc - jr);
          for (int64_t ir = 0; ir < mc; ir += kMr) {
            micro_kernel(kc, abuf.get() + ir * kc, bbuf.get() + jr * kc, tile);
            store_tile(tile, std::min<int64_t>(kMr, mc - ir), cols, c + (ic + ir) * ldc + jc + jr, ldc, alpha, beta,
                       first);
          }
        }
      }
    }
  }
}

}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc, ThreadPool* pool) {
  const int threads = pool ? pool->threads() : 1;
  // Below ~1 MFLOP a thread hand-off costs more than it saves.
  if (threads <= 1 || m * n * k < (int64_t{1} << 19) || m <= 0 || n <= 0) {
    gemm_serial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const int64_t tiles_m = (m + kMr - 1) / kMr;
  const int64_t tiles_n = (n + kNr - 1) / kNr;
  const bool split_n = tiles_n >= tiles_m;
  const int64_t tiles = split_n ? tiles_n : tiles_m;
  const int64_t parts = std::min<int64_t>(threads, tiles);
  parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      const int64_t t0 = tiles * part / parts, t1 = tiles * (part + 1) / parts;
      if (split_n) {
        const int64_t j0 = t0 * kNr, j1 = std::min(n, t1 * kNr);
        const T* bp = trans_b ? b + j0 * ldb : b + j0;
        gemm_serial(trans_a, trans_b, m, j1 - j0, k, alpha, a, lda, bp, ldb, beta, c + j0, ldc);
      } else {
        const int64_t i0 = t0 * kMr, i1 = std::min(m, t1 * kMr);
        const T* ap = trans_a ? a + i0 : a + i0 * lda;
        gemm_serial(trans_a, trans_b, i1 - i0, n, k, alpha, ap, lda, b, ldb, beta, c + i0 * ldc, ldc);
      }
    }
  });
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t, ThreadPool*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                           int64_t, double, double*, int64_t, ThreadPool*);

template <class T>
void gemm_integer(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                  int64_t ldb, T* c, int64_t ldc) {
  // Unsigned arithmetic wraps instead of overflowing; the cast back is modular (C++20).
  using U = std::make_unsigned_t<T>;
  std::unique_ptr<U[]> acc(new U[std::max<int64_t>(n, 1)]);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(acc.get(), acc.get() + n, U(0));
    for (int64_t p = 0; p < k; ++p) {
      const U x = static_cast<U>(load_a(trans_a, a, lda, i, p));
      if (!trans_b) {
        const T* brow = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) acc[j] += x * static_cast<U>(brow[j]);
      } else {
        for (int64_t j = 0; j < n; ++j) acc[j] += x * static_cast<U>(b[j * ldb + p]);
      }
    }
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = static_cast<T>(acc[j]);
  }
}

template void gemm_integer<int32_t>(bool, bool, int64_t, int64_t, int64_t, const int32_t*, int64_t, const int32_t*,
                                    int64_t, int32_t*, int64_t);
template void gemm_integer<int64_t>(bool, bool, int64_t, int64_t, int64_t, const int64_t*, int64_t, const int64_t*,
                                    int64_t, int64_t*, int64_t);
template void gemm_integer<uint32_t>(bool, bool, int64_t, int64_t, int64_t, const uint32_t*, int64_t,
                                     const uint32_t*, int64_t, uint32_t*, int64_t);
template void gemm_integer<uint64_t>(bool, bool, int64_t, int64_t, int64_t, const uint64_t*, int64_t,
                                     const uint64_t*, int64_t, uint64_t*, int64_t);

std::vector<float> to_float_vector(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data_as<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(to_compute(p[i]));
  });
  return v;
}

void store_float_vector(const std::vector<float>& v, Tensor& t) {
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data_as<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = from_compute<T>(v[i]);
  });
}

namespace {

// ---- MatMul -----------------------------------------------------------------------------

// numpy matmul dims: 1-D operands are promoted (A to [1, K], B to [K, 1]) and the promoted
// axis is dropped from the output, which shape inference already did.
struct MatMulPlan {
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> a_offsets, b_offsets;  // element offsets of each output batch's operands
  bool fold_batch = false;                    // B shared by all batches and A dense: one tall GEMM
};

MatMulPlan plan_matmul(const Shape& a, const Shape& b) {
  MatMulPlan p;
  Shape a_batch, b_batch;
  if (a.rank() == 1) {
    p.m = 1;
    p.k = a[0];
  } else {
    p.m = a[a.rank() - 2];
    p.k = a[a.rank() - 1];
    for (int i = 0; i < a.rank() - 2; ++i) a_batch.push_back(a[i]);
  }
  p.n = b.rank() == 1 ? 1 : b[b.rank() - 1];
  for (int i = 0; i < b.rank() - 2; ++i) b_batch.push_back(b[i]);
  const Shape out_batch = *broadcast_shapes(a_batch, b_batch);
  const int64_t batches = out_batch.numel();
  if (b_batch.numel() == 1 && a_batch == out_batch) {
    p.fold_batch = true;
    p.a_offsets = {0};
    p.b_offsets = {0};
    p.m *= batches;
    return p;
  }
  p.a_offsets.reserve(batches);
  p.b_offsets.reserve(batches);
  if (batches == 0) return p;
  StridedIndexer it(out_batch, {broadcast_strides(a_batch, out_batch), broadcast_strides(b_batch, out_batch)});
  do {
    p.a_offsets.push_back(it.offset(0) * p.m * p.k);
    p.b_offsets.push_back(it.offset(1) * p.k * p.n);
  } while (it.next());
  return p;
}

template <class T>
void run_matmul_plan(const MatMulPlan& p, const T* a, const T* b, T* y, ThreadPool* pool) {
  const int64_t batches = static_cast<int64_t>(p.a_offsets.size());
  const int64_t y_stride = p.m * p.n;
  const int threads = pool ? pool->threads() : 1;
  auto one = [&](int64_t i, ThreadPool* inner) {
    if constexpr (std::is_floating_point_v<T>)
      gemm<T>(false, false, p.m, p.n, p.k, T(1), a + p.a_offsets[i], p.k, b + p.b_offsets[i], p.n, T(0),
              y + i * y_stride, p.n, inner);
    else
      gemm_integer<T>(false, false, p.m, p.n, p.k, a + p.a_offsets[i], p.k, b + p.b_offsets[i], p.n, y + i * y_stride,
                      p.n);
  };
  if (batches >= threads && threads > 1) {
    parallel_for(pool, batches, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) one(i, nullptr);
    });
  } else {
    for (int64_t i = 0; i < batches; ++i) one(i, pool);
  }
}

Status matmul_kernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.output(0);
  const MatMulPlan plan = plan_matmul(a.shape(), b.shape());
  switch (a.dtype()) {
    case DType::F32:
      run_matmul_plan(plan, a.data_as<float>(), b.data_as<float>(), y.data_as<float>(), ctx.pool());
      break;
    case DType::F64:
      run_matmul_plan(plan, a.data_as<double>(), b.data_as<double>(), y.data_as<double>(), ctx.pool());
      break;
    case DType::F16:
    case DType::BF16: {
      const std::vector<float> af = to_float_vector(a), bf = to_float_vector(b);
      std::vector<float> yf(static_cast<size_t>(y.numel()));
      run_matmul_plan(plan, af.data(), bf.data(), yf.data(), ctx.pool());
      store_float_vector(yf, y);
      break;
    }
    case DType::I32:
      run_matmul_plan(plan, a.data_as<int32_t>(), b.data_as<int32_t>(), y.data_as<int32_t>(), ctx.pool());
      break;
    case DType::I64:
      run_matmul_plan(plan, a.data_as<int64_t>(), b.data_as<int64_t>(), y.data_as<int64_t>(), ctx.pool());
      break;
    case DType::U32:
      run_matmul_plan(plan, a.data_as<uint32_t>(), b.data_as<uint32_t>(), y.data_as<uint32_t>(), ctx.pool());
      break;
    case DType::U64:
      run_matmul_plan(plan, a.data_as<uint64_t>(), b.data_as<uint64_t>(), y.data_as<uint64_t>(), ctx.pool());
      break;
    default:
      return unsupported(str_cat("MatMul: dtype ", dtype_name(a.dtype())));
  }
  return Status::ok();
}

// ---- Gemm -------------------------------------------------------------------------------

struct GemmDims {
  int64_t m, n, k, lda, ldb;
  bool trans_a, trans_b;
};

GemmDims gemm_dims(const KernelContext& ctx) {
  GemmDims d;
  d.trans_a = ctx.attrs().get_int("transA", 0) != 0;
  d.trans_b = ctx.attrs().get_int("transB", 0) != 0;
  const Shape& a = ctx.input(0).shape();
  const Shape& b = ctx.input(1).shape();
  d.m = d.trans_a ? a[1] : a[0];
  d.k = d.trans_a ? a[0] : a[1];
  d.n = d.trans_b ? b[0] : b[1];
  d.lda = a[1];
  d.ldb = b[1];
  return d;
}

// Fills y[m x n] with beta * C broadcast (C has rank <= 2); returns whether C contributes.
template <class T, class Load>
bool fill_gemm_bias(const KernelContext& ctx, double beta, int64_t m, int64_t n, T* y, Load load) {
  if (!ctx.has_input(2) || beta == 0.0) return false;
  const Tensor& c = ctx.input(2);
  const Shape out{m, n};
  const std::vector<int64_t> s = broadcast_strides(c.shape(), out);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) y[i * n + j] = load(c, i * s[0] + j * s[1], beta);
  return true;
}

template <class T>
void gemm_float_like(KernelContext& ctx, const GemmDims& d, const T* a, const T* b, T* y,
                     const std::vector<float>* c_staged) {
  const double alpha = ctx.attrs().get_float("alpha", 1.0f);
  const double beta = ctx.attrs().get_float("beta", 1.0f);
  const bool has_c = fill_gemm_bias(ctx, beta, d.m, d.n, y, [&](const Tensor& c, int64_t i, double bt) {
    const double v = c_staged ? (*c_staged)[i] : static_cast<double>(c.data_as<T>()[i]);
    return static_cast<T>(bt * v);
  });
  gemm<T>(d.trans_a, d.trans_b, d.m, d.n, d.k, static_cast<T>(alpha), a, d.lda, b, d.ldb, has_c ? T(1) : T(0), y, d.n,
          ctx.pool());
}

template <class T>
void gemm_int(KernelContext& ctx, const GemmDims& d) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  T* y = ctx.output(0).data_as<T>();
  gemm_integer<T>(d.trans_a, d.trans_b, d.m, d.n, d.k, a.data_as<T>(), d.lda, b.data_as<T>(), d.ldb, y, d.n);
  const double alpha = ctx.attrs().get_float("alpha", 1.0f);
  const double beta = ctx.attrs().get_float("beta", 1.0f);
  const bool has_c = ctx.has_input(2) && beta != 0.0;
  if (alpha == 1.0 && (!has_c || beta == 1.0)) {
    if (!has_c) return;
    const Tensor& c = ctx.input(2);
    const std::vector<int64_t> s = broadcast_strides(c.shape(), Shape{d.m, d.n});
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        using U = std::make_unsigned_t<T>;
        T& out = y[i * d.n + j];
        out = static_cast<T>(static_cast<U>(out) + static_cast<U>(c.data_as<T>()[i * s[0] + j * s[1]]));
      }
    return;
  }
  // Non-unit alpha/beta on integers: scale in double and truncate toward zero.
  std::vector<int64_t> s;
  if (has_c) s = broadcast_strides(ctx.input(2).shape(), Shape{d.m, d.n});
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t j = 0; j < d.n; ++j) {
      double v = alpha * static_cast<double>(y[i * d.n + j]);
      if (has_c) v += beta * static_cast<double>(ctx.input(2).data_as<T>()[i * s[0] + j * s[1]]);
      y[i * d.n + j] = static_cast<T>(v);
    }
}

Status gemm_kernel(KernelContext& ctx) {
  const GemmDims d = gemm_dims(ctx);
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.output(0);
  switch (a.dtype()) {
    case DType::F32:
      gemm_float_like<float>(ctx, d, a.data_as<float>(), b.data_as<float>(), y.data_as<float>(), nullptr);
      break;
    case DType::F64:
      gemm_float_like<double>(ctx, d, a.data_as<double>(), b.data_as<double>(), y.data_as<double>(), nullptr);
      break;
    case DType::F16:
    case DType::BF16: {
      const std::vector<float> af = to_float_vector(a), bf = to_float_vector(b);
      std::vector<float> cf;
      if (ctx.has_input(2)) cf = to_float_vector(ctx.input(2));
      std::vector<float> yf(static_cast<size_t>(y.numel()));
      gemm_float_like<float>(ctx, d, af.data(), bf.data(), yf.data(), &cf);
      store_float_vector(yf, y);
      break;
    }
    case DType::I32: gemm_int<int32_t>(ctx, d); break;
    case DType::I64: gemm_int<int64_t>(ctx, d); break;
    case DType::U32: gemm_int<uint32_t>(ctx, d); break;
    case DType::U64: gemm_int<uint64_t>(ctx, d); break;
    default:
      return unsupported(str_cat("Gemm: dtype ", dtype_name(a.dtype())));
  }
  return Status::ok();
}

constexpr DTypeSet kMatMulTypes{DType::F32, DType::F64, DType::F16, DType::BF16,
                                DType::I32, DType::I64, DType::U32, DType::U64};

}  // namespace

void register_nn_gemm(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "MatMul", .since_opset = 1, .types = kMatMulTypes,
         .id = "ref/matmul", .fn = matmul_kernel});
  r.add({.domain = "", .op_type = "Gemm", .since_opset = 1, .types = kMatMulTypes,
         .id = "ref/gemm", .fn = gemm_kernel});
}

}  // namespace ignis::kernels::ref
