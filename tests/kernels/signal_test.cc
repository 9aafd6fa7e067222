// SPDX-License-Identifier: Apache-2.0
// Tests for the signal ops (DFT, STFT, windows, CumProd, Det). Expected values come from plain
// implementations written here: the O(n^2) DFT sum, frame-by-frame STFT, window formulas,
// running products, and the Leibniz (permutation) formula for determinants.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

using Complex = std::complex<double>;

// X[k] = sum_j x[j] e^{-+2 pi i jk/n} over the first min(n, x.size()) samples (zero-padded).
std::vector<Complex> naive_dft(const std::vector<Complex>& x, int64_t n, bool inverse) {
  std::vector<Complex> out(static_cast<size_t>(n));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    Complex acc = 0;
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(x.size()); ++j) {
      const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
      acc += x[j] * Complex(std::cos(angle), std::sin(angle));
    }
    out[k] = inverse ? acc / static_cast<double>(n) : acc;
  }
  return out;
}

Tensor scalar_i64(int64_t v) { return make_tensor_i64({}, {v}); }

std::vector<double> random_doubles(int64_t n, uint32_t seed) {
  const std::vector<float> f = random_floats(n, seed);
  return {f.begin(), f.end()};
}

struct DftCase {
  int64_t len;
  bool complex_input;
  bool inverse;
  bool onesided;
};

// Runs DFT-20 along axis 1 of a [batch, len, inner, c] float64 tensor and checks every signal
// against naive_dft.
void check_dft(const DftCase& c, int64_t batch, int64_t inner, int64_t dft_length, int64_t opset = 20) {
  const int64_t comps = c.complex_input ? 2 : 1;
  const Shape xs{batch, c.len, inner, comps};
  const std::vector<double> xv = random_doubles(xs.numel(), static_cast<uint32_t>(100 + c.len));
  OpCall call;
  call.op_type = "DFT";
  call.opset = opset;
  call.attrs.set("inverse", attr_int(c.inverse));
  call.attrs.set("onesided", attr_int(c.onesided));
  call.inputs = {make_tensor<double>(xs, xv), dft_length > 0 ? scalar_i64(dft_length) : Tensor()};
  if (opset >= 20)
    call.inputs.push_back(scalar_i64(-3));  // axis 1 of a rank-4 tensor
  else
    call.attrs.set("axis", attr_int(1));

  const int64_t n = dft_length > 0 ? dft_length : (c.inverse && c.onesided ? 2 * (c.len - 1) : c.len);
  const int64_t out_len = !c.inverse && c.onesided ? n / 2 + 1 : n;
  const int64_t out_c = c.inverse && c.onesided ? 1 : 2;
  std::vector<double> want(static_cast<size_t>(batch * out_len * inner * out_c));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<Complex> sig(static_cast<size_t>(c.len));
      for (int64_t k = 0; k < c.len; ++k) {
        const int64_t at = ((b * c.len + k) * inner + i) * comps;
        sig[k] = Complex(xv[at], c.complex_input ? xv[at + 1] : 0.0);
      }
      if (c.inverse && c.onesided) {  // expand the one-sided spectrum to its Hermitian whole
        std::vector<Complex> full(static_cast<size_t>(n));
        for (int64_t k = 0; k < n; ++k) {
          const int64_t src = k <= n / 2 ? k : n - k;
          const Complex v = src < c.len ? sig[src] : Complex(0);
          full[k] = k <= n / 2 ? v : std::conj(v);
        }
        sig = full;
      }
      const std::vector<Complex> y = naive_dft(sig, n, c.inverse);
      for (int64_t k = 0; k < out_len; ++k) {
        const int64_t at = ((b * out_len + k) * inner + i) * out_c;
        want[at] = y[k].real();
        if (out_c == 2) want[at + 1] = y[k].imag();
      }
    }
  }
  const std::string what = "DFT len " + std::to_string(c.len) + " n " + std::to_string(n) +
                           (c.inverse ? " inverse" : "") + (c.onesided ? " onesided" : "") +
                           (c.complex_input ? " complex" : " real") + " opset " + std::to_string(opset);
  Tensor got = run1(call);
  ASSERT_EQ(got.shape(), (Shape{batch, out_len, inner, out_c})) << what;
  expect_close(got, want, 1e-9, 1e-9 * static_cast<double>(n), what);
  auto threaded = run_op_threads(call, 3);  // signals split over a pool
  ASSERT_TRUE(threaded.has_value()) << what;
  expect_close((*threaded)[0], want, 1e-9, 1e-9 * static_cast<double>(n), what + " (3 threads)");
}

TEST(DFTOp, ForwardAndInverseMatchNaiveSum) {
  for (int64_t len : {1, 2, 5, 8, 12, 16, 31, 32, 97, 100, 128}) {
    for (bool complex_input : {false, true}) {
      check_dft({len, complex_input, /*inverse=*/false, /*onesided=*/false}, 1, 1, 0);
      check_dft({len, complex_input, /*inverse=*/true, /*onesided=*/false}, 1, 1, 0);
    }
  }
}

TEST(DFTOp, OnesidedForwardAndIrfft) {
  for (int64_t len : {1, 5, 8, 12, 16, 100}) check_dft({len, false, /*inverse=*/false, /*onesided=*/true}, 1, 1, 0);
  // IRFFT: len one-sided bins make 2*(len-1) samples by default; odd lengths via dft_length.
  for (int64_t len : {2, 5, 9, 51}) check_dft({len, true, /*inverse=*/true, /*onesided=*/true}, 1, 1, 0);
  for (int64_t n : {1, 5, 8, 12, 99}) check_dft({n / 2 + 1, true, /*inverse=*/true, /*onesided=*/true}, 1, 1, n);
}

TEST(DFTOp, BatchedAlongMiddleAxis) {
  check_dft({12, true, false, false}, 3, 4, 0);
  check_dft({5, false, true, false}, 2, 3, 0);
  check_dft({16, false, false, true}, 2, 3, 0);
  check_dft({8, true, true, true}, 2, 3, 0);
}

TEST(DFTOp, DftLengthPadsAndTruncates) {
  check_dft({5, false, false, false}, 2, 2, 8);    // zero-padded to 8
  check_dft({12, true, false, false}, 2, 2, 5);    // first 5 samples only
  check_dft({16, true, true, false}, 1, 3, 40);    // Bluestein-sized padding
}

TEST(DFTOp, Opset17AxisAttribute) {
  check_dft({12, true, false, false}, 2, 3, 0, /*opset=*/17);
  check_dft({8, false, false, true}, 2, 3, 0, /*opset=*/17);
  check_dft({5, true, true, false}, 2, 3, 0, /*opset=*/17);
}

TEST(DFTOp, Float32RoundTrip) {
  const Shape xs{2, 12, 2};
  Tensor x = random_tensor(xs, 7);
  OpCall fwd;
  fwd.op_type = "DFT";
  fwd.opset = 20;
  fwd.inputs = {x, Tensor(), scalar_i64(1)};
  OpCall inv = fwd;
  inv.attrs.set("inverse", attr_int(1));
  inv.inputs[0] = run1(fwd);
  const std::vector<float> xv = values_of<float>(x);
  expect_close(run1(inv), std::vector<double>(xv.begin(), xv.end()), 1e-5, 1e-5, "inverse(forward(x))");
}

TEST(DFTOp, RejectsBadAxisAndLength) {
  OpCall call;
  call.op_type = "DFT";
  call.opset = 20;
  call.inputs = {random_tensor({2, 8, 1}, 3), Tensor(), scalar_i64(2)};  // the complex axis
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.inputs = {random_tensor({2, 8, 1}, 3), scalar_i64(0), scalar_i64(1)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.inputs = {random_tensor({2, 8, 3}, 3)};  // last dim must be 1 or 2
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
}

// STFT of a [2, 50, c] signal with a 12-point window and step 7: frames computed one by one.
void check_stft(bool complex_input, bool onesided) {
  const int64_t batch = 2, length = 50, step = 7, fl = 12, comps = complex_input ? 2 : 1;
  const Shape xs{batch, length, comps};
  const std::vector<double> xv = random_doubles(xs.numel(), 21);
  const std::vector<double> win = random_doubles(fl, 22);
  OpCall call;
  call.op_type = "STFT";
  call.opset = 17;
  call.attrs.set("onesided", attr_int(onesided));
  call.inputs = {make_tensor<double>(xs, xv), scalar_i64(step), make_tensor<double>({fl}, win), scalar_i64(fl)};
  const int64_t frames = (length - fl) / step + 1, bins = onesided ? fl / 2 + 1 : fl;
  std::vector<double> want;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      std::vector<Complex> frame(static_cast<size_t>(fl));
      for (int64_t k = 0; k < fl; ++k) {
        const int64_t at = (b * length + f * step + k) * comps;
        frame[k] = Complex(xv[at], complex_input ? xv[at + 1] : 0.0) * win[k];
      }
      const std::vector<Complex> y = naive_dft(frame, fl, false);
      for (int64_t k = 0; k < bins; ++k) {
        want.push_back(y[k].real());
        want.push_back(y[k].imag());
      }
    }
  }
  Tensor got = run1(call);
  ASSERT_EQ(got.shape(), (Shape{batch, frames, bins, 2}));
  expect_close(got, want, 1e-9, 1e-9, std::string("STFT") + (complex_input ? " complex" : " real") +
                                          (onesided ? " onesided" : ""));
}

TEST(STFTOp, WindowedFramesMatchNaiveDft) {
  check_stft(false, true);
  check_stft(false, false);
  check_stft(true, false);
}

TEST(STFTOp, FrameLengthWithoutWindowIsRectangular) {
  const std::vector<float> xv = random_floats(20, 5);
  OpCall call;
  call.op_type = "STFT";
  call.opset = 17;
  call.attrs.set("onesided", attr_int(0));
  call.inputs = {make_tensor_f32({1, 20, 1}, xv), scalar_i64(5), Tensor(), scalar_i64(5)};
  std::vector<double> want;
  for (int64_t f = 0; f < 4; ++f) {
    std::vector<Complex> frame;
    for (int64_t k = 0; k < 5; ++k) frame.emplace_back(xv[f * 5 + k], 0.0);
    for (const Complex& v : naive_dft(frame, 5, false)) {
      want.push_back(v.real());
      want.push_back(v.imag());
    }
  }
  expect_close(run1(call), want, 1e-5, 1e-5, "rectangular STFT");
  call.inputs[3] = scalar_i64(21);  // longer than the signal
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
}

TEST(WindowOps, FormulasPeriodicAndSymmetric) {
  for (int64_t size : {1, 2, 7, 10}) {
    for (int periodic : {0, 1}) {
      const double period = static_cast<double>(periodic ? size : size - 1);
      std::vector<double> hann, hamming, blackman;
      for (int64_t k = 0; k < size; ++k) {
        const double t = period == 0 ? 0.0 : 2.0 * std::numbers::pi * static_cast<double>(k) / period;
        hann.push_back(std::pow(std::sin(t / 2), 2));
        hamming.push_back(25.0 / 46.0 - 21.0 / 46.0 * std::cos(t));
        blackman.push_back(0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t));
      }
      if (period == 0) hann = hamming = blackman = {1.0};
      for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
        OpCall call;
        call.op_type = op;
        call.opset = 17;
        call.attrs.set("periodic", attr_int(periodic));
        call.attrs.set("output_datatype", attr_int(11));  // double
        call.inputs = {scalar_i64(size)};
        const std::string_view name = op;
        const auto& want = name == "HannWindow" ? hann : name == "HammingWindow" ? hamming : blackman;
        Tensor got = run1(call);
        EXPECT_EQ(got.dtype(), DType::F64);
        expect_close(got, want, 1e-12, 1e-12, std::string(op) + " size " + std::to_string(size));
      }
    }
  }
}

TEST(WindowOps, IntegerOutputTruncates) {
  OpCall call;
  call.op_type = "HannWindow";
  call.opset = 17;
  call.attrs.set("periodic", attr_int(0));
  call.attrs.set("output_datatype", attr_int(7));  // int64
  call.inputs = {make_tensor<int32_t>({}, {3})};
  EXPECT_EQ(values_of<int64_t>(run1(call)), (std::vector<int64_t>{0, 1, 0}));
  call.attrs.set("output_datatype", attr_int(9));  // bool is not a permitted output type
  EXPECT_EQ(status_of(call), StatusCode::Unsupported);
}

// Triangular mel filters: num_mel_bins + 2 edges evenly spaced on the mel scale, each mapped
// to spectrogram bin floor((dft_length + 1) * hz / sample_rate); filter i rises from edge i
// to edge i+1 and falls to edge i+2.
TEST(MelWeightMatrixOp, TriangularFilters) {
  const int64_t mel_bins = 5, dft_length = 64, rate = 16000;
  const double lower = 100, upper = 7000;
  auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  std::vector<int64_t> edge;
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double m = mel(lower) + static_cast<double>(i) * (mel(upper) - mel(lower)) / (mel_bins + 2);
    const double hz = 700.0 * (std::pow(10.0, m / 2595.0) - 1.0);
    edge.push_back(static_cast<int64_t>(std::floor((dft_length + 1) * hz / rate)));
  }
  const int64_t bins = dft_length / 2 + 1;
  std::vector<double> want(static_cast<size_t>(bins * mel_bins), 0.0);
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t lo = edge[i], c = edge[i + 1], hi = edge[i + 2];
    ASSERT_LT(lo, c);  // no degenerate filters with these parameters
    ASSERT_LT(c, hi);
    for (int64_t j = lo; j <= c; ++j) want[j * mel_bins + i] = static_cast<double>(j - lo) / static_cast<double>(c - lo);
    for (int64_t j = c; j < hi; ++j) want[j * mel_bins + i] = static_cast<double>(hi - j) / static_cast<double>(hi - c);
  }
  OpCall call;
  call.op_type = "MelWeightMatrix";
  call.opset = 17;
  call.attrs.set("output_datatype", attr_int(11));
  call.inputs = {scalar_i64(mel_bins), scalar_i64(dft_length), scalar_i64(rate), make_tensor_f32({}, {100.0f}),
                 make_tensor_f32({}, {7000.0f})};
  Tensor got = run1(call);
  ASSERT_EQ(got.shape(), (Shape{bins, mel_bins}));
  expect_close(got, want, 1e-12, 1e-12, "mel weights");
}

TEST(CumProdOp, InclusiveExclusiveReverse) {
  const std::vector<double> x = {2, 3, -1, 0.5, 4, 1.5};  // [2, 3]
  for (int exclusive : {0, 1}) {
    for (int reverse : {0, 1}) {
      for (int64_t axis : {0, 1, -1}) {
        const int a = axis < 0 ? 1 : static_cast<int>(axis);
        std::vector<double> want(6);
        const int dim = a == 0 ? 2 : 3;
        for (int other = 0; other < 6 / dim; ++other) {
          double acc = 1;
          for (int s = 0; s < dim; ++s) {
            const int d = reverse ? dim - 1 - s : s;
            const int at = a == 0 ? d * 3 + other : other * 3 + d;
            if (exclusive) {
              want[at] = acc;
              acc *= x[at];
            } else {
              acc *= x[at];
              want[at] = acc;
            }
          }
        }
        OpCall call;
        call.op_type = "CumProd";
        call.opset = 26;
        call.attrs.set("exclusive", attr_int(exclusive));
        call.attrs.set("reverse", attr_int(reverse));
        call.inputs = {make_tensor<double>({2, 3}, x), scalar_i64(axis)};
        expect_close(run1(call), want, 0, 0,
                     "exclusive " + std::to_string(exclusive) + " reverse " + std::to_string(reverse) + " axis " +
                         std::to_string(axis));
      }
    }
  }
}

TEST(CumProdOp, IntegersWrapAndInt8IsUnsupported) {
  OpCall call;
  call.op_type = "CumProd";
  call.opset = 26;
  call.inputs = {make_tensor<int32_t>({3}, {65536, 65536, 3}), scalar_i64(0)};
  EXPECT_EQ(values_of<int32_t>(run1(call)), (std::vector<int32_t>{65536, 0, 0}));
  call.inputs = {make_tensor<int8_t>({3}, {1, 2, 3}), scalar_i64(0)};
  EXPECT_EQ(status_of(call), StatusCode::Unsupported);
}

// Determinant by the Leibniz formula: sum over permutations of sign * product.
double leibniz_det(const std::vector<double>& a, int m) {
  std::vector<int> perm(static_cast<size_t>(m));
  std::iota(perm.begin(), perm.end(), 0);
  double det = 0;
  do {
    int inversions = 0;
    for (int i = 0; i < m; ++i)
      for (int j = i + 1; j < m; ++j) inversions += perm[i] > perm[j];
    double p = inversions % 2 ? -1.0 : 1.0;
    for (int i = 0; i < m; ++i) p *= a[i * m + perm[i]];
    det += p;
  } while (std::next_permutation(perm.begin(), perm.end()));
  return det;
}

TEST(DetOp, MatchesLeibnizFormula) {
  for (int m : {1, 2, 3, 5}) {
    const int64_t batch = 3;
    const std::vector<double> x = random_doubles(batch * m * m, static_cast<uint32_t>(40 + m));
    std::vector<double> want;
    for (int64_t b = 0; b < batch; ++b)
      want.push_back(leibniz_det(std::vector<double>(x.begin() + b * m * m, x.begin() + (b + 1) * m * m), m));
    OpCall call;
    call.op_type = "Det";
    call.opset = 22;
    call.inputs = {make_tensor<double>({batch, m, m}, x)};
    Tensor got = run1(call);
    ASSERT_EQ(got.shape(), (Shape{batch}));
    expect_close(got, want, 1e-12, 1e-14, "Det " + std::to_string(m) + "x" + std::to_string(m));
  }
}

TEST(DetOp, SingularOneByOneAndPivoting) {
  OpCall call;
  call.op_type = "Det";
  call.opset = 11;
  // Singular: a zero column, and a row that is the sum of two others.
  call.inputs = {make_tensor_f32({2, 3, 3}, {1, 0, 2, 3, 0, 4, 5, 0, 6, 1, 2, 3, 4, 5, 6, 5, 7, 9})};
  expect_close(run1(call), {0.0, 0.0}, 0, 1e-5, "singular");
  call.inputs = {make_tensor_f32({1, 1}, {-2.5f})};
  Tensor one = run1(call);
  EXPECT_EQ(one.shape(), Shape{});
  expect_close(one, {-2.5}, 0, 0, "1x1");
  call.inputs = {make_tensor_f32({2, 2}, {0, 1, 1, 0})};  // needs a row swap
  expect_close(run1(call), {-1.0}, 0, 0, "permutation");
  call.inputs = {make_tensor_f32({2, 2}, {0, 1, std::nanf(""), 0})};
  expect_close(run1(call), {std::nan("")}, 0, 0, "NaN below a zero pivot");
  call.inputs = {make_tensor_f32({2, 3}, {1, 2, 3, 4, 5, 6})};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
}

}  // namespace
}  // namespace ignis::nn_test
