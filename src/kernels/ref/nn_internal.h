// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the reference NN kernels (src/kernels/ref/nn_*.cc): the blocked GEMM that
// Conv, ConvTranspose, MatMul and Gemm share, float staging for 16-bit types, and the
// per-file registration functions that ref::register_nn calls.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "ignis/tensor.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

// C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C, all row-major with leading
// dimensions lda/ldb/ldc; op(X) is X or its transpose. beta == 0 overwrites C without reading
// it (NaN in C does not leak). Splits the work over `pool` when given and worthwhile.
// Defined for T = float and double.
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc, ThreadPool* pool);

// Same contract for integer element types, computed with wrapping arithmetic (plain loops).
template <class T>
void gemm_integer(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                  const T* b, int64_t ldb, T* c, int64_t ldc);

// Element-wise copies between a tensor of a 16-bit float type and a float buffer.
std::vector<float> to_float_vector(const Tensor& t);
void store_float_vector(const std::vector<float>& v, Tensor& t);

void register_nn_gemm(KernelRegistry& r);    // MatMul, Gemm
void register_nn_conv(KernelRegistry& r);    // Conv, ConvTranspose
void register_nn_pool(KernelRegistry& r);    // MaxPool, AveragePool, LpPool, global pools, MaxUnpool
void register_nn_norm(KernelRegistry& r);    // BatchNorm, InstanceNorm, LayerNorm, GroupNorm, LRN, MVN
void register_nn_resize(KernelRegistry& r);  // Resize, Upsample
void register_nn_einsum(KernelRegistry& r);  // Einsum

}  // namespace ignis::kernels::ref
