// SPDX-License-Identifier: Apache-2.0
// Reference kernel of com.microsoft MatMulNBits (bits = 4), onnxruntime's contrib op:
//   Y[m][n] = sum_k A[m][k] * W[n][k] + bias[n],  W[n][k] = (code(n, k) - zp(n, b)) * scale(n, b)
// with b = k / block_size. B is [N, n_blocks, block_size / 2]: byte (n, b, i) holds the codes of
// k = b * block_size + 2i (low nibble) and 2i + 1 (high nibble). Zero points are packed the same
// way, ceil(n_blocks / 2) bytes per column (8 when absent). Each W is formed in float32 as
// onnxruntime dequantizes it; the sums run in float64.
#include <cstdint>
#include <vector>

#include "kernels/registry.h"

namespace ignis::kernels::ref {
namespace {

Status matmul_nbits_kernel(KernelContext& ctx) {
  const int64_t k = ctx.attrs().get_int("K", 0), n = ctx.attrs().get_int("N", 0);
  const int64_t block = ctx.attrs().get_int("block_size", 0);
  const int64_t blocks = (k + block - 1) / block;
  const int64_t zp_row = (blocks + 1) / 2;
  const Tensor& a = ctx.input(0);
  const uint8_t* codes = ctx.input(1).data_as<uint8_t>();
  const float* scales = ctx.input(2).data_as<float>();
  const uint8_t* zps = ctx.has_input(3) ? ctx.input(3).data_as<uint8_t>() : nullptr;
  const float* bias = ctx.has_input(5) ? ctx.input(5).data_as<float>() : nullptr;

  // W [N x K] dequantized.
  std::vector<float> w(static_cast<size_t>(n * k));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t kk = 0; kk < k; ++kk) {
      const int64_t b = kk / block, i = kk % block;
      const uint8_t byte = codes[(j * blocks + b) * (block / 2) + i / 2];
      const int code = i % 2 == 0 ? byte & 0x0F : byte >> 4;
      int zp = 8;
      if (zps != nullptr) {
        const uint8_t zbyte = zps[j * zp_row + b / 2];
        zp = b % 2 == 0 ? zbyte & 0x0F : zbyte >> 4;
      }
      w[static_cast<size_t>(j * k + kk)] = static_cast<float>(code - zp) * scales[j * blocks + b];
    }
  }
  const int64_t rows = k > 0 ? a.numel() / k : 0;
  const float* x = a.data_as<float>();
  float* y = ctx.output(0).data_as<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t kk = 0; kk < k; ++kk)
        acc += static_cast<double>(x[r * k + kk]) * static_cast<double>(w[static_cast<size_t>(j * k + kk)]);
      if (bias != nullptr) acc += static_cast<double>(bias[j]);
      y[r * n + j] = static_cast<float>(acc);
    }
  }
  return Status::ok();
}

}  // namespace

void register_quantize_nbits(KernelRegistry& r) {
  r.add({.domain = "com.microsoft", .op_type = "MatMulNBits", .since_opset = 1, .types = DTypeSet{DType::F32},
         .id = "ref/matmulnbits", .fn = matmul_nbits_kernel});
}

}  // namespace ignis::kernels::ref
