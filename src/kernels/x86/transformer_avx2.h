// SPDX-License-Identifier: Apache-2.0
// AVX2 pieces of the x86 transformer kernels: one block of query rows of one attention head
// (attention_avx2.cc), row softmax (attention_avx2.cc) and last-axis layer normalization with
// an optional residual sum (norm_avx2.cc). They take plain pointers and strides; the op-level
// logic (shapes, broadcasting, threading, delegation) is in nn_transformer.cc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ignis::kernels::x86 {

// One block of `rows` query rows of one (batch, head):
//   P = softmax(scale * Q K^T + mask) over the key axis, Y = P V
// Q is [rows x d] (leading dimension ldq), K is [sk x d] (ldk), V is [sk x dv] (ldv), Y is
// [rows x dv] (ldy). Mask element (i, j) is mask[i * mask_rs + j * mask_cs] with mask_cs 0 or
// 1; mask may be null. sk and d are >= 1.
struct AttentionBlock {
  int64_t rows = 0, sk = 0, d = 0, dv = 0;
  const float* q = nullptr;
  int64_t ldq = 0;
  const float* k = nullptr;
  int64_t ldk = 0;
  const float* v = nullptr;
  int64_t ldv = 0;
  float* y = nullptr;
  int64_t ldy = 0;
  const float* mask = nullptr;
  int64_t mask_rs = 0, mask_cs = 0;
  float scale = 1.0f;
};

// Floats of scratch attention_f32_block needs for blocks of up to `rows` rows (64-byte
// multiples, so consecutive per-thread slices stay aligned).
size_t attention_f32_block_scratch(int64_t rows, int64_t sk, int64_t d, int64_t dv);

// Computes one block on the calling thread. `scratch` holds attention_f32_block_scratch
// floats for at least blk.rows rows, 64-byte aligned. Requires AVX2 + FMA.
void attention_f32_block(const AttentionBlock& blk, float* scratch);

// y[r] = softmax(x[r] + mask[r]) for `rows` rows of n >= 1 floats (row r of x at x + r * ldx,
// of y at y + r * ldy; x == y is allowed). Mask element (r, j) is mask[r * mask_rs + j *
// mask_cs] with mask_cs 0 or 1; mask may be null. Requires AVX2 + FMA.
void softmax_f32_rows(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows, int64_t n, const float* mask,
                      int64_t mask_rs, int64_t mask_cs);

// Layer normalization of one row of n >= 1 floats:
//   s = a + b + bias (b and bias optional), y = (s - mean(s)) / sqrt(var(s) + eps) * gamma + beta
// with beta optional. s is also written to `sum` when given; mean and 1 / sqrt(var + eps) to
// *mean_out / *inv_out when given. y may alias a (or b); sum may alias y. Mean and variance
// come from two passes over the row (the second about the mean, so no cancellation).
// Requires AVX2 + FMA.
struct LayerNormRow {
  const float* a = nullptr;
  const float* b = nullptr;
  const float* bias = nullptr;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float* sum = nullptr;
  float* y = nullptr;
  float* mean_out = nullptr;
  float* inv_out = nullptr;
  int64_t n = 0;
  float eps = 1e-5f;
};
void layer_norm_f32_row(const LayerNormRow& row);

}  // namespace ignis::kernels::x86
