// SPDX-License-Identifier: Apache-2.0
// Runs a MatMul whose weight is a blocked 4-bit DequantizeLinear on the packed weights:
//   MatMul(A, DequantizeLinear(W, scale, zero_point?, axis = 0, block_size = B))
//     =>  com.microsoft.MatMulNBits(A, W', scale', zero_point'?, K, N, bits = 4, block_size = B)
// This is the standard-ONNX form of 4-bit weight-only quantization (opset 21: int4/uint4 W
// [K, N] with one scale per B rows of each column), what onnxruntime's MatMulNBitsQuantizer
// writes with quant_format=QDQ. Without this pass fold_constants expands W into float32 and
// the product runs at float speed with 8x the weight memory.
//
// The repacking is exact: MatMulNBits holds W^T as unsigned 4-bit codes along K (two per byte,
// low nibble first) with (code - zero point) * scale, so an int4 value v becomes code v + 8
// with zero point z + 8 (8 when absent, MatMulNBits' default), and a uint4 value stays, with
// its zero point (0 when absent, written out since the default is 8). The product keeps the
// graph's float arithmetic (accuracy_level 0: A is not rounded to int8).
// Legality: W, scale and zero point are constants; W is rank 2; the blocks run along K
// (axis 0); B is a power of two >= 16 (what MatMulNBits accepts); scale is float32; A is
// float32. The DequantizeLinear stays for any other reader (dead code otherwise). An Add of a
// constant float32 [N] bias that alone reads the product becomes MatMulNBits' bias.
#include <cstdint>
#include <vector>

#include "core/low_bit.h"
#include "ir/rewrite.h"
#include "passes/graph_facts.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// The weight's value at (k, n) as a MatMulNBits code: int4 shifted into [0, 15].
uint8_t code_of(const Tensor& w, int64_t i) {
  const auto v = low_bit_int_to_int64(w.dtype(), w.data_as<uint8_t>()[i]);
  return static_cast<uint8_t>(w.dtype() == DType::I4 ? v + 8 : v);
}

struct Packed {
  Tensor b, scales, zero_points;
  bool has_zero_points = false;
};

// W [K, N] with scale / zero point [ceil(K / block), N] into MatMulNBits' inputs.
Packed pack(const Tensor& w, const Tensor& scale, const Tensor* zp, int64_t block) {
  const int64_t k = w.dim(0), n = w.dim(1), blocks = (k + block - 1) / block;
  Packed p;
  p.b = Tensor::zeros(DType::U8, Shape{n, blocks, block / 2});
  p.scales = Tensor::empty(DType::F32, Shape{n * blocks});
  uint8_t* b = p.b.data_as<uint8_t>();
  float* s = p.scales.data_as<float>();
  for (int64_t col = 0; col < n; ++col)
    for (int64_t row = 0; row < k; ++row) {
      const int64_t at = col * blocks * (block / 2) + row / 2;  // row / block blocks in, row % block deep
      b[at] = static_cast<uint8_t>(b[at] | (row % 2 == 0 ? code_of(w, row * n + col) : code_of(w, row * n + col) << 4));
    }
  for (int64_t col = 0; col < n; ++col)
    for (int64_t blk = 0; blk < blocks; ++blk) s[col * blocks + blk] = scale.data_as<float>()[blk * n + col];
  // int4 without a zero point is MatMulNBits' default of 8; anything else is written out.
  if (zp == nullptr && w.dtype() == DType::I4) return p;
  const int64_t row_bytes = (blocks + 1) / 2;
  p.zero_points = Tensor::zeros(DType::U8, Shape{n * row_bytes});
  p.has_zero_points = true;
  uint8_t* z = p.zero_points.data_as<uint8_t>();
  for (int64_t col = 0; col < n; ++col)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const uint8_t code = zp != nullptr ? code_of(*zp, blk * n + col) : 0;
      uint8_t& byte = z[col * row_bytes + blk / 2];
      byte = static_cast<uint8_t>(byte | (blk % 2 == 0 ? code : code << 4));
    }
  return p;
}

}  // namespace

Result<int> fuse_blocked_dq_into_matmul_nbits(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int mi) -> Result<bool> {
    const ir::Node& mm = g.nodes[mi];
    if (!is_onnx(mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1) return false;
    if (facts.dtype(mm.inputs[0]) != DType::F32) return false;
    const int di = index.producer(mm.inputs[1]);
    if (di < 0 || !is_onnx(g.nodes[di], "DequantizeLinear")) return false;
    const ir::Node& dq = g.nodes[di];
    const int64_t block = dq.attrs.get_int("block_size", 0);
    if (block < 16 || (block & (block - 1)) != 0 || dq.inputs.size() < 2) return false;
    const Tensor* w = ir::constant_value(g, dq.inputs[0]);
    const Tensor* scale = ir::constant_value(g, dq.inputs[1]);
    const bool has_zp = dq.inputs.size() > 2 && !dq.inputs[2].empty();
    const Tensor* zp = has_zp ? ir::constant_value(g, dq.inputs[2]) : nullptr;
    if (w == nullptr || scale == nullptr || (has_zp && zp == nullptr)) return false;
    if ((w->dtype() != DType::I4 && w->dtype() != DType::U4) || w->rank() != 2 || w->numel() == 0) return false;
    const int64_t axis = dq.attrs.get_int("axis", 1);
    if (axis != 0 && axis != -2) return false;
    const int64_t k = w->dim(0), n = w->dim(1), blocks = (k + block - 1) / block;
    if (scale->dtype() != DType::F32 || !(scale->shape() == Shape{blocks, n})) return false;
    if (zp != nullptr && (zp->dtype() != w->dtype() || !(zp->shape() == scale->shape()))) return false;

    Packed p = pack(*w, *scale, zp, block);
    const std::string base = mm.name.empty() ? mm.outputs[0] : mm.name;
    const std::string b_name = ir::unique_value_name(g, base + "_q4");
    g.initializers[b_name] = std::move(p.b);
    const std::string s_name = ir::unique_value_name(g, base + "_q4_scales");
    g.initializers[s_name] = std::move(p.scales);
    ir::Node fused;
    fused.name = mm.name;
    fused.op_type = "MatMulNBits";
    fused.domain = "com.microsoft";
    fused.inputs = {mm.inputs[0], b_name, s_name};
    if (p.has_zero_points) {
      const std::string z_name = ir::unique_value_name(g, base + "_q4_zero_points");
      g.initializers[z_name] = std::move(p.zero_points);
      fused.inputs.push_back(z_name);
    }
    // A following Add of a constant [N] float32 bias becomes the node's bias (input 5).
    std::vector<int> pattern = {mi};
    std::string out = mm.outputs[0];
    if (const auto add = constant_bias_add(g, index, out, n)) {
      fused.inputs.resize(5);  // zero points and g_idx keep their places (empty = omitted)
      fused.inputs.push_back(add->second);
      pattern.push_back(add->first);
      out = g.nodes[add->first].outputs[0];
    }
    fused.outputs = {out};
    set_int(fused, "K", k);
    set_int(fused, "N", n);
    set_int(fused, "bits", 4);
    set_int(fused, "block_size", block);
    set_int(fused, "accuracy_level", 0);
    import_microsoft_domain(g);
    replace_nodes(g, pattern, std::move(fused));
    ir::remove_unused_initializers(g);
    return true;
  });
}

}  // namespace ignis::passes
