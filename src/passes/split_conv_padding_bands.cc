// SPDX-License-Identifier: Apache-2.0
// Splits a convolution whose taps read padding from most output rows (or columns) into bands
// that each keep only the taps reading input. DeepLabV3's atrous convolution of dilation 12 on
// a 14x14 map: output rows 2..11 read input only through the centre row of taps, rows 0..1
// through the centre and bottom rows, rows 12..13 through the top and centre ones; as one
// convolution, 24 of its 42 row-taps multiply padding. Along spatial axis a (input length L,
// output length O, kernel K, stride s, dilation d, begin pad pb), output index o reads input
// o*s - pb + k*d through tap k, a contiguous range of taps [k0(o), k1(o)] lying inside the
// input. Consecutive outputs with the same range form a band [oa, ob); its values are
//   Conv(Slice(x, rows [oa*s - pb + k0*d, (ob-1)*s - pb + k1*d]), W[taps k0..k1], pads 0 on a)
// (every tap of the band reads inside its slice, and the band's output length is ob - oa),
// and Concat of the bands along a is the convolution. One axis is split (the code builds the
// regions of a grid, one band wide along the other axis).
// Exactness: each output drops only products with padding zeros, w*0 with w finite (checked),
// as trim_padded_conv_taps; the sums are otherwise those of the same kernels.
// Legality: float32 4-D Conv or ai.ignis FusedConv without the residual input Z, auto_pad
// NOTSET, constant finite W (and constant B), the input's length along the axis fixed, opset
// >= 10 (Slice with inputs); only where the bands do at most 60% of the row-taps and the
// convolution is at least kMinMacs multiply-adds (smaller ones are not worth extra nodes).
#include <optional>
#include <string>
#include <vector>

#include "ir/rewrite.h"
#include "passes/graph_facts.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

constexpr int64_t kMinMacs = int64_t{1} << 24;

struct Band {
  int64_t oa, ob, k0, k1;  // outputs [oa, ob), taps [k0, k1]
};

// Bands of one axis, or empty when splitting does not pay.
std::vector<Band> bands_of(int64_t length, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t out) {
  std::vector<Band> bands;
  int64_t taps = 0;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t i0 = o * s - pb;
    const int64_t k0 = i0 >= 0 ? 0 : (-i0 + d - 1) / d;
    const int64_t k1 = i0 > length - 1 ? -1 : std::min(k - 1, (length - 1 - i0) / d);
    if (k0 > k1) return {};  // an output reading no input: left alone
    taps += k1 - k0 + 1;
    if (!bands.empty() && bands.back().k0 == k0 && bands.back().k1 == k1) ++bands.back().ob;
    else bands.push_back({o, o + 1, k0, k1});
  }
  if (bands.size() < 2 || 10 * taps > 6 * out * k) return {};
  return bands;
}

// Taps of one axis the bands leave out, summed over its outputs.
int64_t saved_taps(const std::vector<Band>& bands, int64_t k, int64_t out) {
  int64_t kept = 0;
  for (const Band& b : bands) kept += (b.ob - b.oa) * (b.k1 - b.k0 + 1);
  return out * k - kept;
}

// W [M, C/group, kh, kw] restricted to rows of taps [y0, y1] and columns [x0, x1].
Tensor slice_taps(const Tensor& w, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
  const int64_t kh = w.dim(2), kw = w.dim(3);
  const int64_t nh = y1 - y0 + 1, nw = x1 - x0 + 1;
  Tensor out = Tensor::empty(DType::F32, Shape{w.dim(0), w.dim(1), nh, nw});
  const float* src = w.data_as<const float>();
  float* dst = out.data_as<float>();
  for (int64_t p = 0; p < w.dim(0) * w.dim(1); ++p)
    for (int64_t y = 0; y < nh; ++y)
      for (int64_t x = 0; x < nw; ++x) dst[(p * nh + y) * nw + x] = src[(p * kh + y0 + y) * kw + x0 + x];
  return out;
}

std::string int_constant(ir::Graph& g, const std::string& base, std::vector<int64_t> v) {
  const std::string name = ir::unique_value_name(g, base);
  Tensor t = Tensor::empty(DType::I64, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data_as<int64_t>()[i] = v[i];
  g.initializers[name] = std::move(t);
  return name;
}

}  // namespace

Result<int> split_conv_padding_bands(ir::Graph& g, const PassContext&) {
  if (g.opset("") < 10) return 0;
  std::optional<GraphFacts> facts;  // of the graph as it stands; dropped after each rewrite
  return rewrite_all(g, [&](const GraphIndex&, int ci) -> Result<bool> {
    const ir::Node& conv = g.nodes[ci];
    const bool fused = is_ignis(conv, "FusedConv");
    if (!(fused || is_onnx(conv, "Conv")) || conv.inputs.size() < 2 || conv.outputs.size() != 1) return false;
    if (conv.inputs.size() > 3 || conv.attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return false;
    const Tensor* w = ir::constant_value(g, conv.inputs[1]);
    if (w == nullptr || w->dtype() != DType::F32 || w->rank() != 4) return false;
    if (conv.inputs.size() > 2 && !conv.inputs[2].empty() && ir::constant_value(g, conv.inputs[2]) == nullptr)
      return false;
    if (!facts) facts.emplace(g);
    const ValueFact x = (*facts)[conv.inputs[0]];
    if (x.rank != 4 || x.dtype != DType::F32) return false;
    std::vector<int64_t> pads = conv.attrs.get_ints("pads");
    std::vector<int64_t> strides = conv.attrs.get_ints("strides");
    std::vector<int64_t> dilations = conv.attrs.get_ints("dilations");
    if (pads.empty()) pads.assign(4, 0);
    if (strides.empty()) strides.assign(2, 1);
    if (dilations.empty()) dilations.assign(2, 1);
    if (pads.size() != 4 || strides.size() != 2 || dilations.size() != 2) return false;
    // Bands per axis; an axis that is not split keeps one band of every tap and its pads.
    std::vector<Band> bands[2];
    int64_t out[2] = {0, 0};
    bool split[2] = {false, false};
    for (int a = 0; a < 2; ++a) {
      const DimFact& len = x.dims[a + 2];
      const int64_t k = w->dim(a + 2), s = strides[a], d = dilations[a], pb = pads[a], pe = pads[a + 2];
      if (!len.is_fixed() || s < 1 || d < 1) return false;
      const int64_t span = len.value + pb + pe - d * (k - 1) - 1;
      if (span < 0) return false;
      out[a] = span / s + 1;
      bands[a] = bands_of(len.value, k, s, d, pb, out[a]);
      split[a] = !bands[a].empty();
      if (!split[a]) bands[a] = {Band{0, out[a], 0, k - 1}};
    }
    if (!split[0] && !split[1]) return false;
    if (split[0] && split[1]) {
      // One axis, the one whose bands drop more taps: on DeepLabV3 the 3x3 grid of regions ran
      // slower on two threads than three row bands (its corner regions stream all of W for
      // four outputs each).
      const int keep = saved_taps(bands[0], w->dim(2), out[0]) * out[1] >=
                               saved_taps(bands[1], w->dim(3), out[1]) * out[0]
                           ? 0
                           : 1;
      split[1 - keep] = false;
      bands[1 - keep] = {Band{0, out[1 - keep], 0, w->dim(3 - keep) - 1}};
    }
    if (w->dim(0) * w->dim(1) * w->dim(2) * w->dim(3) * out[0] * out[1] < kMinMacs || !all_finite_f32(*w)) return false;
    // Slices, region convolutions and Concats replace the convolution at its place.
    std::vector<ir::Node> nodes;
    std::vector<std::string> rows;
    const std::string axes = int_constant(g, conv.name + "_band_axes", split[0] && split[1] ? std::vector<int64_t>{2, 3}
                                                                        : std::vector<int64_t>{split[0] ? 2 : 3});
    auto concat = [&](std::vector<std::string> inputs, int64_t axis, std::string output) {
      ir::Node c;
      c.name = output + "_concat";
      c.op_type = "Concat";
      c.inputs = std::move(inputs);
      c.outputs = {std::move(output)};
      Attribute at;
      at.kind = Attribute::Kind::Int;
      at.i = axis;
      c.attrs.set("axis", at);
      return c;
    };
    for (size_t r = 0; r < bands[0].size(); ++r) {
      std::vector<std::string> cols;
      for (size_t c = 0; c < bands[1].size(); ++c) {
        const Band* b[2] = {&bands[0][r], &bands[1][c]};
        const std::string tag = "_band" + std::to_string(r) + "_" + std::to_string(c);
        std::vector<int64_t> starts, ends, p = pads, dil = dilations;
        for (int a = 0; a < 2; ++a) {
          if (!split[a]) continue;
          starts.push_back(b[a]->oa * strides[a] - pads[a] + b[a]->k0 * dilations[a]);
          ends.push_back((b[a]->ob - 1) * strides[a] - pads[a] + b[a]->k1 * dilations[a] + 1);
          p[a] = p[a + 2] = 0;
          if (b[a]->k0 == b[a]->k1) dil[a] = 1;
        }
        ir::Node slice;
        slice.name = conv.name + tag + "_slice";
        slice.op_type = "Slice";
        slice.inputs = {conv.inputs[0], int_constant(g, conv.name + tag + "_start", starts),
                        int_constant(g, conv.name + tag + "_end", ends), axes};
        slice.outputs = {ir::unique_value_name(g, conv.inputs[0] + tag)};
        ir::Node part = conv;
        part.name = conv.name + tag;
        part.inputs[0] = slice.outputs[0];
        part.inputs[1] = ir::unique_value_name(g, conv.inputs[1] + tag);
        g.initializers[part.inputs[1]] = slice_taps(*w, b[0]->k0, b[0]->k1, b[1]->k0, b[1]->k1);
        set_ints(part, "pads", p);
        set_ints(part, "dilations", dil);
        if (part.attrs.has("kernel_shape"))
          set_ints(part, "kernel_shape", {b[0]->k1 - b[0]->k0 + 1, b[1]->k1 - b[1]->k0 + 1});
        part.outputs = {ir::unique_value_name(g, conv.outputs[0] + tag)};
        cols.push_back(part.outputs[0]);
        nodes.push_back(std::move(slice));
        nodes.push_back(std::move(part));
      }
      if (cols.size() == 1) {
        rows.push_back(cols[0]);
        continue;
      }
      const std::string row = bands[0].size() == 1
                                  ? conv.outputs[0]
                                  : ir::unique_value_name(g, conv.outputs[0] + "_band" + std::to_string(r));
      nodes.push_back(concat(cols, 3, row));
      rows.push_back(row);
    }
    ir::Node last = bands[0].size() == 1 ? std::move(nodes.back()) : concat(rows, 2, conv.outputs[0]);
    if (bands[0].size() == 1) nodes.pop_back();
    last.name = conv.name;
    g.nodes[ci] = std::move(last);
    g.nodes.insert(g.nodes.begin() + ci, nodes.begin(), nodes.end());
    ir::remove_unused_initializers(g);
    facts.reset();
    return true;
  });
}

}  // namespace ignis::passes
