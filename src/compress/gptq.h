// SPDX-License-Identifier: Apache-2.0
// Calibrated 4-bit rounding (GPTQ, Frantar et al. 2022): the codes of a MatMul weight W [K, N]
// chosen to keep X Q(W) close to X W on the calibration activations X rather than each weight
// close to its own value. Only H = X^T X enters (and C = X^T X_ref for gptq_target), so the
// activations need not be kept.
#pragma once

#include <cstdint>
#include <vector>

#include "compress/int4_weights.h"
#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis {
class ThreadPool;
}

namespace ignis::compress {

// What GPTQ needs of a MatMul's input over the calibration samples, its rows x (length k) as
// the partly quantized model computes them and x_ref as the float model does: H = sum x^T x and
// C = sum x^T x_ref, k x k row-major float64; the rows themselves are not kept.
struct InputStatistics {
  int64_t k = 0;
  int64_t rows = 0;
  std::vector<double> h, c;
  // Adds `count` rows of x and x_ref ([count, k] float32 each). Parallel over k on `pool`.
  void add(const float* x, const float* x_ref, int64_t count, ThreadPool* pool);
};

// Upper-triangular U (row-major k x k) with U^T U = (H + damp I)^-1, damp = `damping` times the
// mean of H's diagonal. Inputs never seen (H[i][i] == 0) get H[i][i] = 1 first, so H = 0 gives
// a diagonal U (round-to-nearest). Fails when H stays indefinite even with 100x that damping.
// `damp` receives the damping added.
Result<std::vector<double>> gptq_inverse_factor(const std::vector<double>& h, int64_t k, double damping, double* damp,
                                                ThreadPool* pool);

// The weight GPTQ should round: the W' [K, N] with x W' closest to x_ref W over the samples,
// pulled toward W by the damping: (H + damp I) W' = C W + damp W, so W' = W when x = x_ref.
// Rounding W' instead of W lets each layer undo part of the error the quantized layers before
// it left in its input. `u` is gptq_inverse_factor's factor of H + damp I.
Tensor gptq_target(const Tensor& w, const InputStatistics& s, const std::vector<double>& u, double damp,
                   ThreadPool* pool);

// The codes of W [K, N] (float32) by GPTQ: rows k = 0..K-1 in order, each quantized to its
// block's grid, its error (w - q) / U[k][k] propagated to the rows after it in proportion
// U[k][i], with `u` from gptq_inverse_factor. A block's grid (int4_block_grid) is taken from
// its values as updated when its first row is reached; grids from the original values measured
// the same on all-MiniLM-L6-v2. Columns are independent and run in parallel.
Int4Codes gptq_int4(const Tensor& w, const std::vector<double>& u, int64_t block, ThreadPool* pool);

}  // namespace ignis::compress
