// SPDX-License-Identifier: Apache-2.0
// GPTQ for MatMulNBits' 4-bit blocks. For one output column w (length K) and H = X^T X, the
// output error ||X (w - w')||^2 is the quadratic form (w - w')^T H (w - w'). Quantizing row k
// and then re-solving the rows after k for the least output error moves them by
// -(w_k - q_k) / [H^-1]_kk times row k of H^-1 restricted to them; with H^-1 = U^T U (U upper)
// the same update over rows k.. is -(w_k - q_k) / U_kk * U[k][k..], and the inverse of what is
// left after dropping row k needs no recomputation: it is U's lower-right part. So one factor U
// serves every row and every column (Frantar et al. 2022, section 3).
//
// U comes from H without forming H^-1: the "reverse" Cholesky factorization H = R R^T with R
// upper gives H^-1 = R^-T R^-1, so U = R^-1.
#include "compress/gptq.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "core/thread_pool.h"

namespace ignis::compress {

namespace {

// Columns quantized together by one task: each row of U is read once per group, not per column.
constexpr int64_t kColumnGroup = 8;

// Task t of [0, ceil(n / 2)) stands for indices t and n - 1 - t, so that contiguous chunks of
// tasks get equal work when index i costs about i (or n - i) operations.
template <class F>
void for_each_paired(int64_t n, int64_t t, F&& f) {
  f(t);
  if (n - 1 - t != t) f(n - 1 - t);
}

// H = R R^T with R upper, in place of `a` (row-major n x n, only the upper triangle read).
// Columns are finished right to left; each entry of column j is one dot product of two rows
// over the columns already finished. False when a pivot is not positive.
bool reverse_cholesky(std::vector<double>& a, int64_t n, ThreadPool* pool) {
  for (int64_t j = n - 1; j >= 0; --j) {
    double* rj = a.data() + j * n;
    double d = rj[j];
    for (int64_t m = j + 1; m < n; ++m) d -= rj[m] * rj[m];
    if (!(d > 0.0)) return false;
    const double pivot = std::sqrt(d);
    rj[j] = pivot;
    parallel_for(pool, j, 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        double* ri = a.data() + i * n;
        double s = ri[j];
        for (int64_t m = j + 1; m < n; ++m) s -= ri[m] * rj[m];
        ri[j] = s / pivot;
      }
    });
  }
  return true;
}

// R^-1 for upper-triangular R (row-major n x n), by back substitution per column of the result.
std::vector<double> upper_inverse(const std::vector<double>& r, int64_t n, ThreadPool* pool) {
  std::vector<double> u(static_cast<size_t>(n * n), 0.0);
  parallel_for(pool, (n + 1) / 2, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> col(static_cast<size_t>(n));
    for (int64_t t = begin; t < end; ++t) {
      for_each_paired(n, t, [&](int64_t j) {
        col[static_cast<size_t>(j)] = 1.0 / r[static_cast<size_t>(j * n + j)];
        for (int64_t i = j - 1; i >= 0; --i) {
          const double* ri = r.data() + i * n;
          double s = 0.0;
          for (int64_t m = i + 1; m <= j; ++m) s += ri[m] * col[static_cast<size_t>(m)];
          col[static_cast<size_t>(i)] = -s / ri[i];
        }
        for (int64_t i = 0; i <= j; ++i) u[static_cast<size_t>(i * n + j)] = col[static_cast<size_t>(i)];
      });
    }
  });
  return u;
}

}  // namespace

void InputStatistics::add(const float* x, const float* x_ref, int64_t count, ThreadPool* pool) {
  if (h.empty()) {
    h.assign(static_cast<size_t>(k * k), 0.0);
    c.assign(static_cast<size_t>(k * k), 0.0);
  }
  rows += count;
  parallel_for(pool, k, 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      double* hi = h.data() + i * k;
      double* ci = c.data() + i * k;
      for (int64_t r = 0; r < count; ++r) {
        const double xi = x[r * k + i];
        if (xi == 0.0) continue;
        const float* xr = x + r * k;
        const float* yr = x_ref + r * k;
        for (int64_t j = 0; j < k; ++j) {
          hi[j] += xi * static_cast<double>(xr[j]);
          ci[j] += xi * static_cast<double>(yr[j]);
        }
      }
    }
  });
}

Result<std::vector<double>> gptq_inverse_factor(const std::vector<double>& h, int64_t k, double damping, double* damp,
                                                ThreadPool* pool) {
  std::vector<double> base = h;
  if (base.empty()) base.assign(static_cast<size_t>(k * k), 0.0);
  double mean = 0.0;
  for (int64_t i = 0; i < k; ++i) {
    double& d = base[static_cast<size_t>(i * k + i)];
    if (d == 0.0) d = 1.0;  // an input never seen: no evidence to trade its error against others'
    mean += d;
  }
  mean /= static_cast<double>(std::max<int64_t>(k, 1));
  // Rounding can leave a nearly singular H (inputs that always move together) indefinite; more
  // damping pulls it back toward round-to-nearest's diagonal.
  *damp = damping * mean;
  for (int attempt = 0; attempt < 3; ++attempt, *damp *= 10.0) {
    std::vector<double> a = base;
    for (int64_t i = 0; i < k; ++i) a[static_cast<size_t>(i * k + i)] += *damp;
    if (reverse_cholesky(a, k, pool)) return upper_inverse(a, k, pool);
  }
  return invalid_argument(str_cat("the ", k, "x", k, " input Hessian is not positive definite even with damping ",
                                  *damp / 10.0, " (non-finite activations?)"));
}

Tensor gptq_target(const Tensor& w, const InputStatistics& s, const std::vector<double>& u, double damp,
                   ThreadPool* pool) {
  const int64_t k = w.dim(0), n = w.dim(1);
  const float* x = w.data_as<float>();
  // m = C W + damp W, then v = U m, then W' = U^T v = (U^T U) m.
  std::vector<double> m(static_cast<size_t>(k * n), 0.0), v(static_cast<size_t>(k * n), 0.0);
  parallel_for(pool, k, 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      double* mi = m.data() + i * n;
      for (int64_t j = 0; j < n; ++j) mi[j] = damp * static_cast<double>(x[i * n + j]);
      if (s.c.empty()) continue;
      for (int64_t l = 0; l < k; ++l) {
        const double cil = s.c[static_cast<size_t>(i * k + l)];
        if (cil == 0.0) continue;
        for (int64_t j = 0; j < n; ++j) mi[j] += cil * static_cast<double>(x[l * n + j]);
      }
    }
  });
  parallel_for(pool, k, 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      double* vi = v.data() + i * n;
      for (int64_t l = i; l < k; ++l) {
        const double uil = u[static_cast<size_t>(i * k + l)];
        for (int64_t j = 0; j < n; ++j) vi[j] += uil * m[static_cast<size_t>(l * n + j)];
      }
    }
  });
  Tensor out = Tensor::empty(DType::F32, w.shape());
  float* y = out.data_as<float>();
  parallel_for(pool, n, 8, [&](int64_t begin, int64_t end) {
    std::vector<double> col(static_cast<size_t>(k));
    for (int64_t j = begin; j < end; ++j) {
      std::fill(col.begin(), col.end(), 0.0);
      for (int64_t l = 0; l < k; ++l) {
        const double vl = v[static_cast<size_t>(l * n + j)];
        const double* ul = u.data() + l * k;
        for (int64_t i = l; i < k; ++i) col[static_cast<size_t>(i)] += ul[i] * vl;
      }
      for (int64_t i = 0; i < k; ++i) y[i * n + j] = static_cast<float>(col[static_cast<size_t>(i)]);
    }
  });
  return out;
}

Int4Codes gptq_int4(const Tensor& w, const std::vector<double>& u, int64_t block, ThreadPool* pool) {
  Int4Codes c = Int4Codes::sized(w.dim(0), w.dim(1), block);
  const int64_t k = c.k, n = c.n, blocks = c.blocks();
  const float* x = w.data_as<float>();
  const int64_t groups = (n + kColumnGroup - 1) / kColumnGroup;
  parallel_for(pool, groups, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> cur(static_cast<size_t>(kColumnGroup * k));  // the group's columns, updated
    std::vector<float> values(static_cast<size_t>(block));
    double err[kColumnGroup];
    Int4Grid grids[kColumnGroup];
    for (int64_t gi = begin; gi < end; ++gi) {
      const int64_t c0 = gi * kColumnGroup, width = std::min(kColumnGroup, n - c0);
      for (int64_t j = 0; j < width; ++j)
        for (int64_t i = 0; i < k; ++i) cur[static_cast<size_t>(j * k + i)] = x[i * n + c0 + j];
      for (int64_t b = 0; b < blocks; ++b) {
        const int64_t k0 = b * block, k1 = std::min(k, k0 + block);
        for (int64_t j = 0; j < width; ++j) {
          for (int64_t i = k0; i < k1; ++i)
            values[static_cast<size_t>(i - k0)] = static_cast<float>(cur[static_cast<size_t>(j * k + i)]);
          grids[j] = int4_block_grid(values.data(), 1, k1 - k0);
          c.grids[static_cast<size_t>((c0 + j) * blocks + b)] = grids[j];
        }
        for (int64_t row = k0; row < k1; ++row) {
          const double* ur = u.data() + row * k;
          for (int64_t j = 0; j < width; ++j) {
            const double v = cur[static_cast<size_t>(j * k + row)];
            const int q = int4_code(static_cast<float>(v), grids[j]);
            c.codes[static_cast<size_t>(row * n + c0 + j)] = static_cast<uint8_t>(q);
            err[j] = (v - static_cast<double>(int4_value(q, grids[j]))) / ur[row];
          }
          for (int64_t j = 0; j < width; ++j) {
            double* cj = cur.data() + j * k;
            const double e = err[j];
            for (int64_t i = row + 1; i < k; ++i) cj[i] -= e * ur[i];
          }
        }
      }
    }
  });
  return c;
}

}  // namespace ignis::compress
