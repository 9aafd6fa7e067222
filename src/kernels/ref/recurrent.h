// SPDX-License-Identifier: Apache-2.0
// The recurrent ops' time loop (recurrent.cc), shared with faster kernels: those supply only
// the float32 matrix products (with weights they prepared once) and the Sigmoid and Tanh of a
// row of gates; the loop and the gate math stay in one place.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "ignis/status.h"
#include "kernels/kernel.h"

namespace ignis::kernels::ref {

enum class RecurrentCell { Lstm, Gru, Rnn };

// The float32 products of direction d (W_d is [gates*hidden, input], R_d [gates*hidden,
// hidden]) and the activations the default gates use.
class RecurrentKernels {
 public:
  virtual ~RecurrentKernels() = default;
  // xw[rows, gates*hidden] = x[rows, input] · W_d^T.
  virtual void project(int64_t d, int64_t rows, const float* x, float* xw, ThreadPool* pool) const = 0;
  // out[b, 0:n] = h[b, :] · R_d[row0 : row0 + n, :]^T for b < batch, rows of `out` ldo apart.
  // row0 is 0, or 2*hidden for GRU's candidate gate (then n = hidden).
  virtual void recur(int64_t d, int64_t row0, int64_t n, const float* h, int64_t batch, float* out, int64_t ldo,
                     ThreadPool* pool) const = 0;
  // v[0:n] = sigmoid(v), tanh(v) in place.
  virtual void sigmoid(float* v, int64_t n) const = 0;
  virtual void tanh(float* v, int64_t n) const = 0;
};

// Runs LSTM, GRU or RNN on the node's inputs and outputs. `fast`, when not null, computes the
// float32 products and activations; the node's W and R data are then not read (they may be
// released).
Status run_recurrent_op(KernelContext& ctx, RecurrentCell cell, const RecurrentKernels* fast);

}  // namespace ignis::kernels::ref
