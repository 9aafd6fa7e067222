// SPDX-License-Identifier: Apache-2.0
// Drops the kernel taps of a convolution that only ever read padding. A dilated kernel on a
// small map can reach past the input from every output position: DeepLabV3's atrous pyramid
// runs 3x3 kernels with dilation 24 and 36 on a 14x14 map, where every tap but the centre reads
// zeros, so the convolution is a 1x1 one paying nine times its work. Per spatial axis, with
// input length L, output length O, stride s, dilation d and begin pad pb, tap k reads input
// o*s - pb + k*d for o in [0, O); when that is outside [0, L) for every o, the tap reads only
// padding. Leading taps [0, k0) and trailing taps (k1, K) of that kind are cut from W, and
//   pads' = (pb - k0*d, pe - (K-1-k1)*d)
// keeps every remaining tap reading the same input at the same output position, and the
// output length, floor((L + pb + pe - d*(K-1) - 1) / s) + 1, unchanged. An axis left with one
// tap gets dilation 1 (it has no second tap to space).
// Exactness: the dropped products are w*0 with w finite (checked), so each output loses only
// zero terms of its sum: the same value, up to the sign of an exact zero.
// Legality: Conv or ai.ignis FusedConv, auto_pad NOTSET, float32 constant W whose entries are
// all finite, X's spatial lengths fixed; only axes where both new pads stay >= 0 are trimmed.
#include <vector>

#include "ir/rewrite.h"
#include "passes/graph_facts.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// Whether tap k of an axis reads some input position from some output position.
bool tap_reads_input(int64_t k, int64_t length, int64_t out, int64_t stride, int64_t dilation, int64_t pad_begin) {
  for (int64_t o = 0; o < out; ++o) {
    const int64_t at = o * stride - pad_begin + k * dilation;
    if (at >= 0 && at < length) return true;
  }
  return false;
}

// W [M, C/group, k...] restricted to taps [begin[a], begin[a] + size[a]) of each spatial axis a.
Tensor slice_taps(const Tensor& w, const std::vector<int64_t>& begin, const std::vector<int64_t>& size) {
  const int spatial = w.rank() - 2;
  std::vector<int64_t> dims = {w.dim(0), w.dim(1)};
  dims.insert(dims.end(), size.begin(), size.end());
  Tensor out = Tensor::empty(DType::F32, Shape(dims));
  const float* src = w.data_as<const float>();
  float* dst = out.data_as<float>();
  const int64_t planes = w.dim(0) * w.dim(1);
  int64_t in_window = 1, out_window = 1;
  for (int a = 0; a < spatial; ++a) {
    in_window *= w.dim(a + 2);
    out_window *= size[a];
  }
  std::vector<int64_t> idx(static_cast<size_t>(spatial), 0);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < out_window; ++i) {
      // idx: the output tap's coordinates, last axis fastest; the source offset from them.
      int64_t rem = i, offset = 0;
      for (int a = spatial - 1; a >= 0; --a) {
        idx[a] = rem % size[a];
        rem /= size[a];
      }
      for (int a = 0; a < spatial; ++a) offset = offset * w.dim(a + 2) + begin[a] + idx[a];
      dst[p * out_window + i] = src[p * in_window + offset];
    }
  }
  return out;
}

}  // namespace

Result<int> trim_padded_conv_taps(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex&, int ci) -> Result<bool> {
    const ir::Node& conv = g.nodes[ci];
    if (!(is_onnx(conv, "Conv") || is_ignis(conv, "FusedConv")) || conv.inputs.size() < 2) return false;
    if (conv.attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return false;
    const Tensor* w = ir::constant_value(g, conv.inputs[1]);
    if (w == nullptr || w->dtype() != DType::F32 || w->rank() < 3) return false;
    const int spatial = w->rank() - 2;
    const ValueFact& x = facts[conv.inputs[0]];
    if (x.rank != w->rank()) return false;
    std::vector<int64_t> pads = conv.attrs.get_ints("pads");
    std::vector<int64_t> strides = conv.attrs.get_ints("strides");
    std::vector<int64_t> dilations = conv.attrs.get_ints("dilations");
    if (pads.empty()) pads.assign(2 * static_cast<size_t>(spatial), 0);
    if (strides.empty()) strides.assign(static_cast<size_t>(spatial), 1);
    if (dilations.empty()) dilations.assign(static_cast<size_t>(spatial), 1);
    if (pads.size() != 2 * static_cast<size_t>(spatial) || strides.size() != static_cast<size_t>(spatial) ||
        dilations.size() != static_cast<size_t>(spatial))
      return false;
    std::vector<int64_t> begin(static_cast<size_t>(spatial), 0), size(static_cast<size_t>(spatial));
    bool trimmed = false;
    for (int a = 0; a < spatial; ++a) {
      const int64_t k = w->dim(a + 2), s = strides[a], d = dilations[a];
      const int64_t pb = pads[a], pe = pads[a + spatial];
      size[a] = k;
      if (!x.dims[a + 2].is_fixed() || s < 1 || d < 1) continue;
      const int64_t length = x.dims[a + 2].value;
      const int64_t span = length + pb + pe - d * (k - 1) - 1;
      if (span < 0) continue;
      const int64_t out = span / s + 1;
      int64_t k0 = 0, k1 = k - 1;
      while (k0 < k && !tap_reads_input(k0, length, out, s, d, pb)) ++k0;
      if (k0 == k) continue;  // every tap reads padding: the output is the bias; left alone
      while (!tap_reads_input(k1, length, out, s, d, pb)) --k1;
      const int64_t new_pb = pb - k0 * d, new_pe = pe - (k - 1 - k1) * d;
      if ((k0 == 0 && k1 == k - 1) || new_pb < 0 || new_pe < 0) continue;
      begin[a] = k0;
      size[a] = k1 - k0 + 1;
      pads[a] = new_pb;
      pads[a + spatial] = new_pe;
      if (size[a] == 1) dilations[a] = 1;
      trimmed = true;
    }
    if (!trimmed || !all_finite_f32(*w)) return false;
    ir::Node rewritten = conv;
    rewritten.inputs[1] = ir::unique_value_name(g, conv.inputs[1] + "_trimmed");
    g.initializers[rewritten.inputs[1]] = slice_taps(*w, begin, size);
    set_ints(rewritten, "pads", std::move(pads));
    set_ints(rewritten, "dilations", std::move(dilations));
    if (rewritten.attrs.has("kernel_shape")) set_ints(rewritten, "kernel_shape", std::move(size));
    g.nodes[ci] = std::move(rewritten);
    ir::remove_unused_initializers(g);
    return true;
  });
}

}  // namespace ignis::passes
