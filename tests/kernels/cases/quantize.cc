// SPDX-License-Identifier: Apache-2.0
// Quantized op cases: MatMulInteger and ai.ignis MatMulIntegerToFloat over every uint8/int8
// pairing of A and B, shapes around the int8 GEMM's tiles (6 and 3 rows, 32 and 16 columns,
// depths not a multiple of 4), with no, one-value and per-row / per-column zero points,
// batched A, and (MatMulIntegerToFloat) per-row scales; DynamicQuantizeLinear and
// DynamicQuantizeRows on sizes around the 8-lane width and split over threads;
// QLinearConv and QLinearMatMul over the same type pairings (1x1, 3x3 with strides 1, 2 and
// 3, pads, dilations, 7x7, 1-D, depthwise (planes, channel blocks, and output positions in
// lanes with weights less zero points in int8) and grouped convolutions, odd channel counts, chunks of
// output positions, per-tensor and per-channel weight scales, with and without bias, and
// symmetric int8 weights);
// QuantizeLinear and DequantizeLinear per tensor and per axis around the vector width.
// Integer outputs must match the reference exactly: the requantization gives the bytes of the
// reference's float64 expression, so no tie can round differently.
#include <algorithm>
#include <cmath>
#include <iterator>

#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

struct Dims {
  Shape a;
  int64_t k, n;
};

enum class ZeroPoints { None, Scalar, Vector };

const std::vector<Dims>& matmul_dims() {
  static const std::vector<Dims> dims = {
      {{1, 1}, 1, 1},     {{5, 3}, 3, 7},       {{7, 13}, 13, 33},     {{6, 64}, 64, 64},
      {{9, 65}, 65, 100}, {{13, 17}, 17, 16},   {{2, 3, 9}, 9, 40},    {{130, 384}, 384, 72},
      {{4, 1536}, 1536, 3}, {{37, 96}, 96, 160}};
  return dims;
}

const char* type_label(DType t) { return t == DType::U8 ? "u8" : "s8"; }

// Cases of an op reading (A, B) at inputs 0, 1 and their zero points at `a_zp`, `a_zp + 1`;
// `extra` adds the op's other inputs (after B) for one case.
template <class Extra>
std::vector<KernelCase> integer_matmul_cases(const char* domain, const char* op, int64_t opset, Extra extra) {
  std::vector<KernelCase> cases;
  for (DType ta : {DType::U8, DType::I8}) {
    for (DType tb : {DType::I8, DType::U8}) {
      for (const Dims& d : matmul_dims()) {
        for (ZeroPoints zp : {ZeroPoints::None, ZeroPoints::Scalar, ZeroPoints::Vector}) {
          // The per-row A zero point needs a 2-D A (its rows are axis -2).
          if (zp == ZeroPoints::Vector && d.a.rank() != 2) continue;
          KernelCase c;
          c.domain = domain;
          c.op_type = op;
          c.opset = opset;
          c.inputs = {d.a, Shape{d.k, d.n}};
          c.input_dtypes = {ta, tb};
          extra(c, d);
          if (zp != ZeroPoints::None) {
            const int64_t m = d.a[d.a.rank() - 2];
            c.inputs.push_back(zp == ZeroPoints::Vector ? Shape{m} : Shape{});
            c.inputs.push_back(zp == ZeroPoints::Vector ? Shape{d.n} : Shape{});
            c.input_dtypes.push_back(ta);
            c.input_dtypes.push_back(tb);
            c.weight_inputs = {1, static_cast<int>(c.inputs.size()) - 1};
          } else {
            c.weight_inputs = {1};
          }
          c.label = str_cat("A ", type_label(ta), d.a.str(), " B ", type_label(tb), Shape{d.k, d.n}.str(),
                            zp == ZeroPoints::None ? "" : zp == ZeroPoints::Scalar ? " scalar zero points"
                                                                                    : " per-row/column zero points");
          if (zp != ZeroPoints::None && d.a.rank() == 2) {
            // Activations near their zero point, as dynamically quantized ones mostly are: in
            // the middle of the type (the pairs of A less the zero point mostly within +-128,
            // a few not), and at its low end (as after a GELU; as int8 less 128, every pair of
            // A would be out of vpmaddubsw's range).
            const double lo = ta == DType::U8 ? 0.0 : -128.0;
            const size_t a_zp = c.inputs.size() - 2;
            for (int bunched = 0; bunched < 2; ++bunched) {
              KernelCase b = c;
              b.input_ranges.assign(c.inputs.size(), {1.0, 0.0});
              b.input_ranges[0] = bunched == 0 ? std::pair{lo + 60.0, lo + 195.0} : std::pair{lo, lo + 40.0};
              b.input_ranges[a_zp] = bunched == 0 ? std::pair{lo + 120.0, lo + 135.0} : std::pair{lo, lo + 8.0};
              b.label += bunched == 0 ? " A near its zero point" : " A at the low end near its zero point";
              cases.push_back(std::move(b));
            }
          }
          cases.push_back(std::move(c));
        }
      }
    }
  }
  return cases;
}

// What `ignis quantize --mode dynamic --per-row` makes of a MatMul: symmetric int8 A without a
// zero point, int8 B with zero (or no) zero points, the weight's scale per column, a bias on
// every other shape, and A's scale per row (its shape with the last extent 1).
std::vector<KernelCase> matmul_integer_to_float_row_scale_cases() {
  std::vector<KernelCase> cases;
  int index = 0;
  for (const Dims& d : matmul_dims()) {
    for (bool b_zp : {false, true}) {
      KernelCase c;
      c.domain = "ai.ignis";
      c.op_type = "MatMulIntegerToFloat";
      c.opset = 1;
      const bool bias = index++ % 2 == 0;
      Shape rows = d.a;
      rows[rows.rank() - 1] = 1;
      c.inputs = {d.a, Shape{d.k, d.n}, Shape{d.n}, Shape{}, Shape{d.n}, Shape{d.n}, rows};
      c.input_dtypes = {DType::I8, DType::I8, DType::F32, DType::Undefined, b_zp ? DType::I8 : DType::Undefined,
                        bias ? DType::F32 : DType::Undefined, DType::F32};
      c.input_ranges.assign(c.inputs.size(), {1.0, 0.0});
      c.input_ranges[0] = {-127.0, 127.0};
      c.input_ranges[4] = {0.0, 0.0};
      c.input_ranges[6] = {1e-3, 2.0};
      c.weight_inputs = b_zp ? std::vector<int>{1, 4} : std::vector<int>{1};
      c.label = str_cat("A s8", d.a.str(), " B s8", Shape{d.k, d.n}.str(), b_zp ? " zero B zero point" : "",
                        bias ? " bias" : "", " row scale");
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace

std::vector<KernelCase> matmul_integer_cases() {
  return integer_matmul_cases("", "MatMulInteger", 10, [](KernelCase&, const Dims&) {});
}

// Inputs: A, B, scale (one value or one per column, alternating), zero points, and a bias on
// every other shape. The zero points come at 3 and 4, so a bias needs them present: the cases
// without zero points have no bias.
std::vector<KernelCase> matmul_integer_to_float_cases() {
  int index = 0;
  std::vector<KernelCase> cases = integer_matmul_cases("ai.ignis", "MatMulIntegerToFloat", 1, [&](KernelCase& c, const Dims& d) {
    c.inputs.push_back(index++ % 2 == 0 ? Shape{d.n} : Shape{});
    c.input_dtypes.push_back(DType::F32);
  });
  for (KernelCase& c : cases) {
    if (c.inputs.size() == 5 && (index++ % 2) == 0) {
      c.inputs.push_back(Shape{c.inputs[1][1]});
      c.input_dtypes.push_back(DType::F32);
      c.label += " bias";
    }
  }
  std::vector<KernelCase> per_row = matmul_integer_to_float_row_scale_cases();
  cases.insert(cases.end(), std::make_move_iterator(per_row.begin()), std::make_move_iterator(per_row.end()));
  return cases;
}

// ai.ignis DynamicQuantizeRows over rows around the 8-lane width, rows split over threads, an
// all-zero row (its scale is the floor's), a row far larger than the others, and limits
// below 127.
std::vector<KernelCase> dynamic_quantize_rows_cases() {
  std::vector<KernelCase> cases;
  for (const Shape& s : {Shape{1}, Shape{7}, Shape{3, 8}, Shape{4, 9}, Shape{5, 37}, Shape{0, 4}, Shape{3, 0},
                         Shape{128, 384}, Shape{2, 130, 257}}) {
    for (int64_t limit : {127, 7}) {
      KernelCase c;
      c.domain = "ai.ignis";
      c.op_type = "DynamicQuantizeRows";
      c.opset = 1;
      c.outputs = limit == 7 ? 1 : 2;  // the scale output is optional
      c.error_scale = 0.0;  // the scales too must be the reference's bit for bit
      c.inputs = {s};
      Attribute floor;
      floor.kind = Attribute::Kind::Float;
      floor.f = 1e-30f;
      c.attrs.set("floor", floor);
      Attribute lim;
      lim.kind = Attribute::Kind::Int;
      lim.i = limit;
      c.attrs.set("limit", lim);
      c.label = str_cat("X", s.str(), " limit ", limit);
      if (s.numel() >= 8 && s[s.rank() - 1] > 0) {
        // Row 0 all zeros, row 1 (where there is one) a thousand times the others.
        std::vector<double> values(static_cast<size_t>(s.numel()));
        const int64_t k = s[s.rank() - 1];
        for (int64_t i = 0; i < s.numel(); ++i)
          values[static_cast<size_t>(i)] =
              i < k ? 0.0 : std::sin(0.37 * static_cast<double>(i)) * (i < 2 * k ? 1e3 : 1.0);
        KernelCase v = c;
        v.input_values = {values};
        v.label += " zero row, large row";
        cases.push_back(std::move(v));
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

std::vector<KernelCase> dynamic_quantize_linear_cases() {
  std::vector<KernelCase> cases;
  for (const Shape& s : {Shape{1}, Shape{7}, Shape{8}, Shape{9}, Shape{3, 37}, Shape{0, 4}, Shape{128, 384},
                         Shape{2, 130, 257}}) {
    KernelCase c;
    c.op_type = "DynamicQuantizeLinear";
    c.opset = 11;
    c.inputs = {s};
    c.label = str_cat("X", s.str());
    cases.push_back(std::move(c));
  }
  return cases;
}

namespace {

struct ConvSpec {
  Shape x, w;
  int64_t group;
  std::vector<int64_t> strides, pads, dilations;
};

ConvSpec conv_spec(Shape x, Shape w, int64_t group = 1, std::vector<int64_t> strides = {},
                   std::vector<int64_t> pads = {}, std::vector<int64_t> dilations = {}) {
  return {std::move(x), std::move(w), group, std::move(strides), std::move(pads), std::move(dilations)};
}

// Ranges that keep most requantized outputs inside the output type (so that the clamp does
// not hide the sums): x and w scales near 0.02 and 0.005, zero points near the middle of their
// type (the centered sums then have a small mean), and a y scale near the spread of a sum of
// `depth` centered products (about sqrt(depth) * 128^2 / 3).
std::pair<double, double> middle(DType t, double half_width) {
  const double mid = t == DType::U8 ? 128.0 : 0.0;
  return {mid - half_width, mid + half_width - 1.0};
}

void add_qlinear_ranges(KernelCase& c, int64_t depth) {
  const double y = 1e-4 * std::sqrt(static_cast<double>(depth)) * 5461.0 / 60.0;
  const std::pair<double, double> any{1.0, 0.0};
  c.input_ranges = {any,   {0.01, 0.03}, middle(c.input_dtypes[2], 10), any, {0.002, 0.008},
                    middle(c.input_dtypes[5], 10), {y, 2.0 * y}, middle(c.input_dtypes[7], 64)};
}


// QLinearConv's (and ConvInteger's) geometries.
std::vector<ConvSpec> quantized_conv_specs() {
  return {
      conv_spec({1, 16, 7, 9}, {24, 16, 1, 1}),
      conv_spec({2, 3, 5, 5}, {7, 3, 1, 1}),
      conv_spec({1, 8, 10, 11}, {13, 8, 3, 3}, 1, {}, {1, 1, 1, 1}),
      conv_spec({1, 5, 13, 12}, {16, 5, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}),
      conv_spec({1, 4, 9, 9}, {6, 4, 3, 3}, 1, {}, {2, 2, 2, 2}, {2, 2}),
      conv_spec({1, 3, 32, 32}, {8, 3, 7, 7}, 1, {2, 2}, {3, 3, 3, 3}),
      conv_spec({1, 6, 8, 7}, {5, 6, 2, 3}, 1, {}, {0, 1, 2, 0}),
      conv_spec({1, 6, 20}, {9, 6, 3}, 1, {}, {1, 1}),
      conv_spec({1, 64, 14, 14}, {70, 64, 3, 3}, 1, {}, {1, 1, 1, 1}),
      conv_spec({1, 256, 24, 24}, {13, 256, 3, 3}, 1, {}, {1, 1, 1, 1}),
      conv_spec({1, 40, 33, 35}, {8, 40, 1, 1}, 1, {2, 2}),
      conv_spec({1, 16, 10, 10}, {16, 1, 3, 3}, 16, {}, {1, 1, 1, 1}),
      conv_spec({2, 8, 7, 19}, {8, 1, 3, 3}, 8, {2, 2}, {1, 1, 1, 1}),
      conv_spec({1, 8, 12, 12}, {8, 1, 3, 3}, 8, {2, 2}),
      conv_spec({1, 5, 11, 13}, {5, 1, 5, 5}, 5, {}, {4, 4, 4, 4}, {2, 2}),
      conv_spec({1, 8, 6, 6}, {12, 4, 3, 3}, 2, {}, {1, 1, 1, 1}),
      conv_spec({1, 3, 40, 70}, {10, 3, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}),
      conv_spec({1, 24, 30, 50}, {24, 1, 3, 3}, 24, {2, 2}, {1, 1, 1, 1}),
      conv_spec({1, 4, 15, 13}, {6, 4, 3, 3}, 1, {2, 2}, {2, 2, 2, 2}, {2, 2}),
      conv_spec({1, 3, 17, 16}, {5, 3, 4, 4}, 1, {3, 3}, {1, 2, 0, 1}),
      conv_spec({2, 70, 15, 15}, {40, 70, 1, 1}, 1, {2, 2}),
      // One chunk of two panels, enough work for two threads: they share it by rows.
      conv_spec({1, 160, 7, 7}, {480, 160, 1, 1}),
      // Depthwise with 16 channels in the vector lanes: partial channel blocks, plane sizes
      // that are not a multiple of 16, asymmetric pads, strides, dilations, 1-D.
      conv_spec({1, 35, 7, 7}, {35, 1, 3, 3}, 35, {}, {1, 1, 1, 1}),
      conv_spec({2, 20, 14, 13}, {20, 1, 3, 3}, 20, {2, 2}, {1, 0, 0, 1}),
      conv_spec({1, 9, 5, 6}, {9, 1, 5, 5}, 9, {}, {2, 2, 2, 2}, {1, 2}),
      conv_spec({1, 12, 9, 8}, {12, 1, 2, 3}, 12, {1, 2}, {0, 1, 1, 0}),
      conv_spec({1, 16, 21}, {16, 1, 3}, 16, {2}, {1, 1}),
      conv_spec({1, 32, 30, 31}, {32, 1, 3, 3}, 32, {}, {1, 1, 1, 1}),
      // Depthwise on a plane larger than 56x56: one plane at a time again (on AVX2 only where
      // the output is larger too).
      conv_spec({1, 9, 60, 61}, {9, 1, 3, 3}, 9, {2, 2}, {1, 1, 1, 1}),
      conv_spec({1, 10, 58, 57}, {10, 1, 3, 3}, 10, {}, {1, 1, 1, 1}),
  };
}

}  // namespace

std::vector<KernelCase> qlinear_conv_cases() {
  const std::vector<ConvSpec> specs = quantized_conv_specs();
  // Depthwise with weights whose values less their zero points fit int8, which the kernel
  // with output positions in the lanes (AVX-512 VBMI) takes: 3x3 and 5x5, strides 1 and 2,
  // dilation 2, asymmetric pads, odd plane sizes, 14x14 and larger outputs, batch 2.
  const std::vector<ConvSpec> int8_weight_specs = {
      conv_spec({2, 6, 13, 17}, {6, 1, 3, 3}, 6, {}, {0, 1, 2, 1}),
      conv_spec({1, 5, 7, 7}, {5, 1, 3, 3}, 5, {}, {1, 1, 1, 1}),
      conv_spec({2, 4, 29, 31}, {4, 1, 3, 3}, 4, {2, 2}, {1, 0, 2, 1}),
      conv_spec({1, 3, 112, 20}, {3, 1, 3, 3}, 3, {2, 2}, {1, 1, 1, 1}),
      conv_spec({1, 24, 16, 14}, {24, 1, 3, 3}, 24, {}, {1, 1, 1, 1}),
      conv_spec({1, 3, 19, 23}, {3, 1, 3, 3}, 3, {}, {2, 2, 2, 2}, {2, 2}),
      conv_spec({2, 20, 15, 15}, {20, 1, 5, 5}, 20, {}, {2, 2, 2, 2}),
      conv_spec({1, 5, 33, 29}, {5, 1, 5, 5}, 5, {2, 2}, {2, 1, 1, 2}),
      conv_spec({1, 4, 21, 40}, {4, 1, 5, 5}, 4, {2, 2}, {4, 4, 4, 4}, {2, 2}),
  };
  // Symmetric int8 weights (zero point 0, no -128, as onnxruntime quantizes them), which the
  // AVX2 GEMM takes as int8 (Int8GemmArgs::a_signed): every ungrouped spec above.
  std::vector<ConvSpec> symmetric_specs;
  std::copy_if(specs.begin(), specs.end(), std::back_inserter(symmetric_specs), [](const ConvSpec& s) { return s.group == 1; });
  enum class Weights { kAny, kNarrow, kSymmetric, kSymmetricSmall };
  std::vector<KernelCase> cases;
  int index = 0;
  const auto add = [&](const std::vector<ConvSpec>& list, Weights weights) {
    for (DType tx : {DType::U8, DType::I8}) {
      for (DType tw : {DType::I8, DType::U8}) {
        if ((weights == Weights::kSymmetric || weights == Weights::kSymmetricSmall) && tw != DType::I8) continue;
        for (const ConvSpec& s : list) {
          const int64_t m = s.w[0];
          const bool per_channel = index % 2 == 0, bias = index % 3 != 1;
          const DType ty = index % 4 < 2 ? DType::U8 : DType::I8;
          ++index;
          KernelCase c;
          c.op_type = "QLinearConv";
          c.opset = 10;
          c.inputs = {s.x, Shape{}, Shape{}, s.w, per_channel ? Shape{m} : Shape{}, per_channel ? Shape{m} : Shape{},
                      Shape{}, Shape{}};
          c.input_dtypes = {tx, DType::F32, tx, tw, DType::F32, tw, DType::F32, ty};
          if (s.group > 1) c.attrs.set("group", int_attr(s.group));
          if (!s.strides.empty()) c.attrs.set("strides", ints_attr(s.strides));
          if (!s.pads.empty()) c.attrs.set("pads", ints_attr(s.pads));
          if (!s.dilations.empty()) c.attrs.set("dilations", ints_attr(s.dilations));
          const int64_t depth = s.w.numel() / m;
          add_qlinear_ranges(c, depth);
          if (bias) {
            c.inputs.push_back(Shape{m});
            c.input_dtypes.push_back(DType::I32);
            c.input_ranges.push_back({-50000.0, 50000.0});
          }
          c.weight_inputs = {3, 5};
          c.label = str_cat("x ", type_label(tx), s.x.str(), " w ", type_label(tw), s.w.str(), " y ", type_label(ty),
                            " group ", s.group, per_channel ? " per-channel" : " per-tensor", bias ? " bias" : "");
          if (weights == Weights::kNarrow) {
            c.input_ranges[3] = middle(tw, 100);
            c.label += " w - w_zp in int8";
          } else if (weights == Weights::kSymmetric) {
            c.input_ranges[3] = {-127.0, 127.0};
            c.input_ranges[5] = {0.0, 0.0};
            c.label += " symmetric w";
          } else if (weights == Weights::kSymmetricSmall) {
            // Few pairs summing past +-128: the AVX2 tile splits them (uniform in +-127, a
            // quarter of the pairs would, and it takes the weights as they are).
            c.input_ranges[3] = {-75.0, 75.0};
            c.input_ranges[5] = {0.0, 0.0};
            c.label += " symmetric w within 75";
          }
          cases.push_back(std::move(c));
        }
      }
    }
  };
  add(specs, Weights::kAny);
  add(int8_weight_specs, Weights::kNarrow);
  add(symmetric_specs, Weights::kSymmetric);
  add(symmetric_specs, Weights::kSymmetricSmall);
  return cases;
}

std::vector<KernelCase> qlinear_conv_nhwc_cases() {
  // QLinearConv's ungrouped 2-D cases with X channels-last, each also with a 1x1 unit-stride
  // unpadded spec (X read in place as the GEMM's A) among them.
  std::vector<KernelCase> cases;
  for (KernelCase c : qlinear_conv_cases()) {
    const Shape& x = c.inputs[0];
    if (x.rank() != 4 || c.attrs.get_int("group", 1) != 1) continue;
    c.domain = "ai.ignis";
    c.op_type = "QLinearConvNhwc";
    c.opset = 1;
    c.inputs[0] = Shape{x[0], x[2], x[3], x[1]};
    c.label = "NHWC " + c.label;
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<KernelCase> conv_integer_cases() {
  std::vector<KernelCase> cases;
  int index = 0;
  for (DType tx : {DType::U8, DType::I8}) {
    for (DType tw : {DType::I8, DType::U8}) {
      for (const ConvSpec& s : quantized_conv_specs()) {
        const int64_t m = s.w[0];
        // Zero points: none, x's only, both (w's per channel on every other case), and for int8
        // weights symmetric ones (zero point 0, no -128: the AVX2 GEMM's int8 weights).
        const int zps = index % 4;
        const bool symmetric = tw == DType::I8 && index % 3 == 0;
        ++index;
        KernelCase c;
        c.op_type = "ConvInteger";
        c.opset = 10;
        c.inputs = {s.x, s.w};
        c.input_dtypes = {tx, tw};
        c.input_ranges = {{1.0, 0.0}, symmetric ? std::pair<double, double>{-127.0, 127.0} : std::pair<double, double>{1.0, 0.0}};
        if (zps >= 1 || symmetric) {
          c.inputs.push_back(Shape{});
          c.input_dtypes.push_back(tx);
          c.input_ranges.push_back(middle(tx, 20));
        }
        if (zps >= 2 || symmetric) {
          c.inputs.push_back(zps == 3 ? Shape{m} : Shape{});
          c.input_dtypes.push_back(tw);
          c.input_ranges.push_back(symmetric ? std::pair<double, double>{0.0, 0.0} : middle(tw, 20));
        }
        if (s.group > 1) c.attrs.set("group", int_attr(s.group));
        if (!s.strides.empty()) c.attrs.set("strides", ints_attr(s.strides));
        if (!s.pads.empty()) c.attrs.set("pads", ints_attr(s.pads));
        if (!s.dilations.empty()) c.attrs.set("dilations", ints_attr(s.dilations));
        c.weight_inputs = {1, 3};
        c.label = str_cat("x ", type_label(tx), s.x.str(), " w ", type_label(tw), s.w.str(), " group ", s.group,
                          " zero points ", c.inputs.size() - 2, symmetric ? " symmetric w" : "");
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

std::vector<KernelCase> cast_cases() {
  // int32, uint8 and int8 to float32 around the 8-lane width and over the thread split, int32
  // up to 1e9 (where float32 rounds); and to other types, which the x86 kernel hands to the
  // reference.
  constexpr int64_t kFloat = 1, kInt32 = 6, kInt64 = 7;
  std::vector<KernelCase> cases;
  const auto add = [&](DType from, int64_t to, int64_t n) {
    KernelCase c;
    c.op_type = "Cast";
    c.opset = 13;
    c.inputs = {Shape{n}};
    c.input_dtypes = {from};
    if (from == DType::I32) c.input_ranges = {{-1e9, 1e9}};
    c.attrs.set("to", int_attr(to));
    c.label = str_cat(type_label(from), " [", n, "] to ", to);
    cases.push_back(std::move(c));
  };
  for (DType from : {DType::I32, DType::U8, DType::I8})
    for (int64_t n : {1, 7, 8, 9, 33, 1000, 70001}) add(from, kFloat, n);
  add(DType::I32, kInt64, 19);
  add(DType::U8, kInt32, 19);
  return cases;
}

std::vector<KernelCase> qlinear_matmul_cases() {
  std::vector<KernelCase> cases;
  int index = 0;
  for (DType ta : {DType::U8, DType::I8}) {
    for (DType tb : {DType::I8, DType::U8}) {
      for (const Dims& d : matmul_dims()) {
        const bool per_column = index % 2 == 0;
        const DType ty = index % 4 < 2 ? DType::U8 : DType::I8;
        ++index;
        KernelCase c;
        c.op_type = "QLinearMatMul";
        c.opset = 10;
        c.inputs = {d.a, Shape{}, Shape{}, Shape{d.k, d.n}, per_column ? Shape{d.n} : Shape{},
                    per_column ? Shape{d.n} : Shape{}, Shape{}, Shape{}};
        c.input_dtypes = {ta, DType::F32, ta, tb, DType::F32, tb, DType::F32, ty};
        add_qlinear_ranges(c, d.k);
        c.weight_inputs = {3, 5};
        c.label = str_cat("A ", type_label(ta), d.a.str(), " B ", type_label(tb), Shape{d.k, d.n}.str(), " y ",
                          type_label(ty), per_column ? " per-column" : " per-tensor");
        cases.push_back(std::move(c));
      }
    }
  }
  // B computed at run time with A's batch dims (a statically quantized transformer's
  // attention products, both operands activations): per-tensor parameters, an attention
  // shape, odd sizes, a single batch entry, and a broadcast B (handed to the reference).
  struct Batched {
    Shape a, b;
  };
  const Batched batched[] = {{{1, 12, 128, 32}, {1, 12, 32, 128}},
                             {{2, 3, 7, 19}, {2, 3, 19, 11}},
                             {{1, 5, 1, 64}, {1, 5, 64, 33}},
                             {{4, 9, 70}, {4, 70, 1}},
                             {{2, 6, 17}, {1, 17, 5}}};
  for (const Batched& bt : batched) {
    for (DType tb : {DType::U8, DType::I8}) {
      const DType ta = index % 2 == 0 ? DType::U8 : DType::I8, ty = index % 3 == 0 ? DType::I8 : DType::U8;
      ++index;
      KernelCase c;
      c.op_type = "QLinearMatMul";
      c.opset = 10;
      c.inputs = {bt.a, Shape{}, Shape{}, bt.b, Shape{}, Shape{}, Shape{}, Shape{}};
      c.input_dtypes = {ta, DType::F32, ta, tb, DType::F32, tb, DType::F32, ty};
      add_qlinear_ranges(c, bt.a[bt.a.rank() - 1]);
      c.label = str_cat("A ", type_label(ta), bt.a.str(), " B ", type_label(tb), bt.b.str(), " (run time) y ",
                        type_label(ty));
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

namespace {

struct LinearSpec {
  Shape x;
  int64_t axis;       // per-axis when >= 0 (scale of x[axis] entries), else per tensor
  bool zero_point;
  bool from_back = false;  // the axis attribute counted from the back (axis - rank)
};

const std::vector<LinearSpec>& linear_specs() {
  static const std::vector<LinearSpec> specs = {
      {{1}, -1, true},         {{7}, -1, false},          {{33}, -1, true},          {{3, 37}, -1, true},
      {{2, 16, 5, 7}, 1, true}, {{1, 8, 17, 9}, 1, false}, {{64, 19}, 0, true},       {{5, 3, 40}, 2, true},
      {{0, 4}, -1, true},      {{2, 130, 257}, -1, true}, {{1, 64, 56, 56}, 1, true},
      // Per channel of the last axis (a smoothed projection's input): whole vectors, tails,
      // rows split over threads.
      {{3, 13}, 1, true},      {{4, 9, 37}, 2, true, true}, {{1, 128, 384}, 2, true, true}, {{6, 5}, 1, false},
  };
  return specs;
}

}  // namespace

std::vector<KernelCase> quantize_linear_cases() {
  std::vector<KernelCase> cases;
  for (int64_t opset : {13, 21}) {
    for (DType ty : {DType::U8, DType::I8}) {
      for (const LinearSpec& s : linear_specs()) {
        // Without a zero point the output is uint8 (before opset 21's output_dtype).
        if (!s.zero_point && ty == DType::I8) continue;
        KernelCase c;
        c.op_type = "QuantizeLinear";
        c.opset = opset;
        const Shape scale = s.axis >= 0 ? Shape{s.x[s.axis]} : Shape{};
        c.inputs = {s.x, scale};
        c.input_dtypes = {DType::F32, DType::F32};
        c.input_ranges = {{-4.0, 4.0}, {0.01, 0.05}};
        if (s.zero_point) {
          c.inputs.push_back(scale);
          c.input_dtypes.push_back(ty);
        }
        if (s.axis >= 0) c.attrs.set("axis", int_attr(s.from_back ? s.axis - s.x.rank() : s.axis));
        c.label = str_cat("X", s.x.str(), " axis ", s.axis, s.zero_point ? str_cat(" zero point ", type_label(ty)) : "");
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

std::vector<KernelCase> dequantize_linear_cases() {
  std::vector<KernelCase> cases;
  for (int64_t opset : {13, 21}) {
    for (DType tx : {DType::U8, DType::I8}) {
      for (const LinearSpec& s : linear_specs()) {
        KernelCase c;
        c.op_type = "DequantizeLinear";
        c.opset = opset;
        const Shape scale = s.axis >= 0 ? Shape{s.x[s.axis]} : Shape{};
        c.inputs = {s.x, scale};
        c.input_dtypes = {tx, DType::F32};
        c.input_ranges = {{1.0, 0.0}, {0.01, 0.05}};
        if (s.zero_point) {
          c.inputs.push_back(scale);
          c.input_dtypes.push_back(tx);
        }
        if (s.axis >= 0) c.attrs.set("axis", int_attr(s.from_back ? s.axis - s.x.rank() : s.axis));
        c.label = str_cat(type_label(tx), s.x.str(), " axis ", s.axis, s.zero_point ? " zero point" : "");
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

}  // namespace ignis::kernel_cases
