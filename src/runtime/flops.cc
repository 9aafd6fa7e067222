// SPDX-License-Identifier: Apache-2.0
// FLOP estimates for inspect/bench reports. Dense ops count 2 per multiply-add; everything
// else counts one per output element, which is what it costs within a small factor.
#include "runtime/plan.h"

namespace ignis::runtime {

int64_t estimate_flops(const ir::Node& node, const std::vector<const ir::ValueType*>& inputs,
                       const std::vector<ir::ValueType>& outputs) {
  if (outputs.empty()) return 0;
  const Shape& out = outputs[0].shape;
  const std::string& op = node.op_type;
  auto in_shape = [&](size_t i) -> const Shape* { return i < inputs.size() && inputs[i] ? &inputs[i]->shape : nullptr; };
  const bool qlinear_conv = op == "QLinearConv" || op == "QLinearConvNhwc";
  if ((op == "Conv" || op == "FusedConv" || op == "ConvInteger" || qlinear_conv) && in_shape(qlinear_conv ? 3 : 1)) {
    const Shape& w = qlinear_conv ? *in_shape(3) : *in_shape(1);
    return 2 * out.numel() * w.numel(1, w.rank());  // per output: Cin/group * prod(kernel)
  }
  if (op == "BlockedConv" && in_shape(1) && out.rank() == 5) {
    // The output's padded lanes (past W's output channels) cost nothing worth counting.
    const Shape& w = *in_shape(1);
    return 2 * out[0] * out[2] * out[3] * w.numel();
  }
  if (op == "ConvTranspose" && in_shape(0) && in_shape(1)) {
    const Shape& x = *in_shape(0);
    const Shape& w = *in_shape(1);
    return 2 * x.numel() * w.numel(1, w.rank());
  }
  const bool matmul = op == "MatMul" || op == "FusedMatMul" || op == "MatMulInteger" || op == "MatMulIntegerToFloat" ||
                      op == "QLinearMatMul";
  if (matmul && in_shape(0) && in_shape(0)->rank() > 0) {
    const Shape& a = *in_shape(0);
    const bool trans_a = op == "FusedMatMul" && a.rank() >= 2 && node.attrs.get_int("transA", 0) != 0;
    return 2 * out.numel() * (trans_a ? a[a.rank() - 2] : a.back());
  }
  if (op == "Gemm" && in_shape(0)) {
    const Shape& a = *in_shape(0);
    const int64_t k = node.attrs.get_int("transA", 0) ? a[0] : a[a.rank() - 1];
    return 2 * out.numel() * k;
  }
  if (op == "Attention" && in_shape(0) && in_shape(1) && in_shape(2) && in_shape(0)->rank() == 3 &&
      in_shape(1)->rank() == 3 && in_shape(2)->rank() == 3) {
    // Q K^T and P V: 2 * B * Sq * Sk * (H*D + H*Dv)
    const Shape& q = *in_shape(0);
    const Shape& k = *in_shape(1);
    const Shape& v = *in_shape(2);
    return 2 * q[0] * q[1] * k[1] * (q[2] + v[2]);
  }
  return out.numel();
}

}  // namespace ignis::runtime
