// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the signal ops: DFT, STFT, window functions, MelWeightMatrix
// and Det. Transforms run in complex<double> whatever the tensor dtype: a radix-2 FFT for
// power-of-two lengths, the plain O(n^2) sum for short other lengths, and Bluestein's chirp-z
// algorithm (a power-of-two convolution) for long ones. Complex tensors are real tensors with
// a trailing (real, imaginary) dimension of 2; a trailing 1 marks a real signal.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

namespace {

using Complex = std::complex<double>;

int64_t scalar_of(const Tensor& t) { return load_as_int64(t.dtype(), t.data(), 0); }

// e^{-2 pi i k / n}, computed directly for each k (no recurrence) so the error does not grow.
Complex twiddle(int64_t k, int64_t n) {
  return std::polar(1.0, -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n));
}

bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// ---- Transforms ---------------------------------------------------------------------------

// In-place iterative radix-2 FFT (decimation in time) of a power-of-two length.
class Radix2Fft {
 public:
  explicit Radix2Fft(int64_t n) : n_(n), tw_(static_cast<size_t>(n / 2)) {
    for (int64_t k = 0; k < n / 2; ++k) tw_[k] = twiddle(k, n);
  }

  // x[k] <- sum_j x[j] e^{-2 pi i jk/n}.
  void forward(Complex* x) const {
    for (int64_t i = 1, j = 0; i < n_; ++i) {  // bit-reversal permutation
      int64_t bit = n_ >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j |= bit;
      if (i < j) std::swap(x[i], x[j]);
    }
    for (int64_t len = 2; len <= n_; len <<= 1) {
      const int64_t half = len / 2, stride = n_ / len;
      for (int64_t start = 0; start < n_; start += len) {
        for (int64_t j = 0; j < half; ++j) {
          const Complex u = x[start + j];
          const Complex v = x[start + j + half] * tw_[j * stride];
          x[start + j] = u + v;
          x[start + j + half] = u - v;
        }
      }
    }
  }

 private:
  int64_t n_;
  std::vector<Complex> tw_;
};

// An n-point DFT plan for any n >= 1. Inverse transforms use conj(F(conj(x))), unnormalized.
class Dft {
 public:
  // Below this length a non-power-of-two transform uses the direct sum; above, Bluestein.
  static constexpr int64_t kBluesteinMin = 32;

  explicit Dft(int64_t n) : n_(n) {
    if (is_pow2(n)) {
      fft_.emplace_back(n);
    } else if (n < kBluesteinMin) {
      tw_.resize(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) tw_[k] = twiddle(k, n);
    } else {
      init_bluestein();
    }
  }

  int64_t size() const { return n_; }
  // Scratch a run() needs, in complex values.
  int64_t work_size() const { return std::max(n_, m_); }

  // Transforms x (n values) in place; `work` holds work_size() values.
  void run(Complex* x, bool inverse, Complex* work) const {
    if (inverse)
      for (int64_t i = 0; i < n_; ++i) x[i] = std::conj(x[i]);
    if (is_pow2(n_)) {
      fft_[0].forward(x);
    } else if (n_ < kBluesteinMin) {
      direct(x, work);
    } else {
      bluestein(x, work);
    }
    if (inverse)
      for (int64_t i = 0; i < n_; ++i) x[i] = std::conj(x[i]);
  }

 private:
  void direct(Complex* x, Complex* work) const {
    for (int64_t k = 0; k < n_; ++k) {
      Complex acc = 0;
      int64_t idx = 0;  // (j * k) mod n, kept exact
      for (int64_t j = 0; j < n_; ++j) {
        acc += x[j] * tw_[idx];
        idx += k;
        if (idx >= n_) idx -= n_;
      }
      work[k] = acc;
    }
    std::copy(work, work + n_, x);
  }

  // jk = (j^2 + k^2 - (k-j)^2) / 2 turns the DFT into a convolution with the chirp
  // c[t] = e^{-pi i t^2/n}: X[k] = c[k] * sum_j (x[j] c[j]) conj(c[k-j]), evaluated as a
  // circular convolution of length m >= 2n-1 (a power of two) with the radix-2 FFT.
  void init_bluestein() {
    m_ = 1;
    while (m_ < 2 * n_ - 1) m_ <<= 1;
    fft_.emplace_back(m_);
    chirp_.resize(static_cast<size_t>(n_));
    // t^2 mod 2n, kept exact and overflow-free by stepping (t+1)^2 = t^2 + 2t + 1.
    for (int64_t t = 0, sq = 0; t < n_; ++t) {
      chirp_[t] = std::polar(1.0, -std::numbers::pi * static_cast<double>(sq) / static_cast<double>(n_));
      sq = (sq + 2 * t + 1) % (2 * n_);
    }
    kernel_fft_.assign(static_cast<size_t>(m_), Complex(0));
    kernel_fft_[0] = std::conj(chirp_[0]);
    for (int64_t t = 1; t < n_; ++t) kernel_fft_[t] = kernel_fft_[m_ - t] = std::conj(chirp_[t]);
    fft_[0].forward(kernel_fft_.data());
  }

  void bluestein(Complex* x, Complex* work) const {
    for (int64_t j = 0; j < n_; ++j) work[j] = x[j] * chirp_[j];
    std::fill(work + n_, work + m_, Complex(0));
    fft_[0].forward(work);
    // Inverse FFT of the product as conj(F(conj(.))) / m.
    for (int64_t i = 0; i < m_; ++i) work[i] = std::conj(work[i] * kernel_fft_[i]);
    fft_[0].forward(work);
    const double scale = 1.0 / static_cast<double>(m_);
    for (int64_t k = 0; k < n_; ++k) x[k] = chirp_[k] * std::conj(work[k]) * scale;
  }

  int64_t n_;
  int64_t m_ = 0;
  std::vector<Radix2Fft> fft_;  // the n-point (power of two) or m-point (Bluestein) FFT
  std::vector<Complex> tw_;        // direct sum: e^{-2 pi i k/n}
  std::vector<Complex> chirp_;     // Bluestein: e^{-pi i t^2/n}
  std::vector<Complex> kernel_fft_;  // Bluestein: FFT of the conjugate chirp, wrapped to m
};

// ---- DFT ----------------------------------------------------------------------------------
// Input [outer, len, inner, 1|2] around the transformed axis; each of the outer*inner signals
// is gathered (truncated or zero-padded to n), transformed, and scattered to the output.
// The one-sided inverse (IRFFT) rebuilds the full Hermitian spectrum from bins 0..n/2 first
// and keeps the real part, which also discards the imaginary parts of the DC and Nyquist bins.
Status dft_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const bool inverse = ctx.attrs().get_int("inverse", 0) != 0;
  const bool onesided = ctx.attrs().get_int("onesided", 0) != 0;
  const int rank = x.rank();
  int64_t axis = ctx.attrs().get_int("axis", 1);
  if (ctx.opset() >= 20) axis = ctx.has_input(2) ? scalar_of(ctx.input(2)) : -2;
  const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
  const int64_t len = x.dim(a);
  const int64_t n = ctx.has_input(1) ? scalar_of(ctx.input(1)) : (inverse && onesided ? 2 * (len - 1) : len);
  const int64_t outer = x.shape().numel(0, a), inner = x.shape().numel(a + 1, rank - 1);
  const int64_t in_c = x.dim(rank - 1), out_c = y.dim(rank - 1), out_len = y.dim(a);
  const Dft plan(n);
  const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  return visit_float(x.dtype(), "DFT", [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    T* ys = y.data_as<T>();
    parallel_for(ctx.pool(), outer * inner, 1, [&](int64_t begin, int64_t end) {
      std::vector<Complex> buf(static_cast<size_t>(n)), work(static_cast<size_t>(plan.work_size()));
      for (int64_t s = begin; s < end; ++s) {
        const int64_t o = s / inner, i = s % inner;
        const T* xp = xs + (o * len * inner + i) * in_c;
        auto load = [&](int64_t k) {
          if (k >= len) return Complex(0);
          const T* e = xp + k * inner * in_c;
          return Complex(to_compute(e[0]), in_c == 2 ? static_cast<double>(to_compute(e[1])) : 0.0);
        };
        if (inverse && onesided) {
          for (int64_t k = 0; k <= n / 2; ++k) buf[k] = load(k);
          for (int64_t k = n / 2 + 1; k < n; ++k) buf[k] = std::conj(buf[n - k]);
        } else {
          for (int64_t k = 0; k < n; ++k) buf[k] = load(k);
        }
        plan.run(buf.data(), inverse, work.data());
        T* yp = ys + (o * out_len * inner + i) * out_c;
        for (int64_t k = 0; k < out_len; ++k) {
          T* e = yp + k * inner * out_c;
          e[0] = from_compute<T>(buf[k].real() * scale);
          if (out_c == 2) e[1] = from_compute<T>(buf[k].imag() * scale);
        }
      }
    });
  });
}

// ---- STFT ---------------------------------------------------------------------------------
// signal [batch, length, 1|2] -> [batch, frames, bins, 2]: frame f of a batch row is samples
// [f*step, f*step + frame_length) times the window (all ones when absent), transformed.
Status stft_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t length = x.dim(1), in_c = x.dim(2);
  const int64_t step = scalar_of(ctx.input(1));
  const bool has_window = ctx.has_input(2);
  const int64_t frame_length =
      has_window ? ctx.input(2).dim(0) : (ctx.has_input(3) ? scalar_of(ctx.input(3)) : length);
  const int64_t batch = y.dim(0), frames = y.dim(1), bins = y.dim(2);
  const Dft plan(frame_length);
  return visit_float(x.dtype(), "STFT", [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    const T* win = has_window ? ctx.input(2).data_as<T>() : nullptr;
    T* ys = y.data_as<T>();
    parallel_for(ctx.pool(), batch * frames, 1, [&](int64_t begin, int64_t end) {
      std::vector<Complex> buf(static_cast<size_t>(frame_length)), work(static_cast<size_t>(plan.work_size()));
      for (int64_t s = begin; s < end; ++s) {
        const int64_t b = s / frames, f = s % frames;
        const T* xp = xs + (b * length + f * step) * in_c;
        for (int64_t k = 0; k < frame_length; ++k) {
          const double w = win ? static_cast<double>(to_compute(win[k])) : 1.0;
          const double im = in_c == 2 ? static_cast<double>(to_compute(xp[k * 2 + 1])) : 0.0;
          buf[k] = Complex(to_compute(xp[k * in_c]), im) * w;
        }
        plan.run(buf.data(), /*inverse=*/false, work.data());
        T* yp = ys + s * bins * 2;
        for (int64_t k = 0; k < bins; ++k) {
          yp[2 * k] = from_compute<T>(buf[k].real());
          yp[2 * k + 1] = from_compute<T>(buf[k].imag());
        }
      }
    });
  });
}

// ---- Generated tensors: windows and MelWeightMatrix -----------------------------------------

// Converts a computed value to the requested output type: floats round, integers truncate
// toward zero (as a float-to-int cast does). Values here are finite and within [-1, 2].
template <class T>
T convert_generated(double v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<int64_t>(v));
  } else {
    return from_compute<T>(v);
  }
}

void store_generated(Tensor& out, const std::vector<double>& v) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out.data_as<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = convert_generated<T>(v[i]);
  });
}

// w[k] = f(2 pi k / N), N = size (periodic) or size - 1 (symmetric). A one-point symmetric
// window (N = 0) is [1], as in torch, rather than the 0/0 of the formula.
template <double (*F)(double)>
Status window_kernel(KernelContext& ctx) {
  const int64_t size = scalar_of(ctx.input(0));
  const bool periodic = ctx.attrs().get_int("periodic", 1) != 0;
  const int64_t period = periodic ? size : size - 1;
  std::vector<double> w(static_cast<size_t>(std::max<int64_t>(size, 0)), 1.0);
  if (period > 0) {
    for (int64_t k = 0; k < size; ++k)
      w[k] = F(2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(period));
  }
  store_generated(ctx.output(0), w);
  return Status::ok();
}

double hann(double t) { return 0.5 - 0.5 * std::cos(t); }
// The spec's (and torch's) Hamming coefficients are 25/46 and 21/46, not the rounded 0.54/0.46.
double hamming(double t) { return 25.0 / 46.0 - 21.0 / 46.0 * std::cos(t); }
double blackman(double t) { return 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2.0 * t); }

// Python's float floor division a // b (b > 0), computed through fmod like CPython and numpy
// so that a bin edge lands on the same integer as in the ONNX reference.
double floor_div(double a, double b) {
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && mod < 0) div -= 1.0;
  double q = std::floor(div);
  if (div - q > 0.5) q += 1.0;
  return q;
}

// Triangular filters on the mel scale mel(f) = 2595 log10(1 + f/700). The num_mel_bins + 2
// edges are spaced by (mel(upper) - mel(lower)) / (num_mel_bins + 2) and mapped to spectrogram
// bins floor((dft_length + 1) * f / sample_rate), as the ONNX reference does. Filter i rises
// from edge i to edge i+1 and falls to edge i+2, peaking at 1; entries that would fall outside
// the [0, dft_length/2] bins (edges beyond the Nyquist frequency) are dropped.
Status mel_weight_matrix_kernel(KernelContext& ctx) {
  const int64_t mel_bins = scalar_of(ctx.input(0));
  const int64_t dft_length = scalar_of(ctx.input(1));
  const int64_t rate = scalar_of(ctx.input(2));
  if (rate < 1) return invalid_argument(str_cat("MelWeightMatrix: sample_rate must be >= 1, got ", rate));
  const double lower = load_as_double(ctx.input(3).dtype(), ctx.input(3).data(), 0);
  const double upper = load_as_double(ctx.input(4).dtype(), ctx.input(4).data(), 0);
  const int64_t bins = dft_length / 2 + 1;

  auto to_mel = [](double hz) { return 2595.0 * std::log1p(hz / 700.0) / std::log(10.0); };
  auto to_hz = [](double mel) { return 700.0 * std::expm1(mel / 2595.0 * std::log(10.0)); };
  const double low_mel = to_mel(lower);
  const double mel_step = (to_mel(upper) - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = to_hz(static_cast<double>(i) * mel_step + low_mel);
    const double e = floor_div(static_cast<double>(dft_length + 1) * hz, static_cast<double>(rate));
    if (!std::isfinite(e)) return invalid_argument(str_cat("MelWeightMatrix: edge frequency ", hz, " Hz is not finite"));
    edge[i] = static_cast<int64_t>(std::clamp(e, -double(int64_t{1} << 52), double(int64_t{1} << 52)));
  }

  std::vector<double> w(static_cast<size_t>(bins * mel_bins), 0.0);
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < bins) w[row * mel_bins + col] = v;
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t lo = edge[i], center = edge[i + 1], hi = edge[i + 2];
    if (center == lo) {
      set(center, i, 1.0);
    } else {
      for (int64_t j = std::max<int64_t>(lo, 0); j <= std::min(center, bins - 1); ++j)
        set(j, i, static_cast<double>(j - lo) / static_cast<double>(center - lo));
    }
    if (hi > center) {
      for (int64_t j = std::max<int64_t>(center, 0); j < std::min(hi, bins); ++j)
        set(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - center));
    }
  }
  store_generated(ctx.output(0), w);
  return Status::ok();
}

// ---- Det ----------------------------------------------------------------------------------

// Determinant of the m x m row-major matrix `a` (destroyed) by LU decomposition with partial
// pivoting: the product of the pivots, negated once per row swap. An empty matrix gives 1;
// a NaN anywhere gives NaN (pivot comparisons would otherwise skip it).
double lu_determinant(std::vector<double>& a, int64_t m) {
  if (std::any_of(a.begin(), a.end(), [](double v) { return std::isnan(v); }))
    return std::numeric_limits<double>::quiet_NaN();
  double det = 1.0;
  for (int64_t k = 0; k < m; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < m; ++i)
      if (std::fabs(a[i * m + k]) > std::fabs(a[p * m + k])) p = i;
    if (a[p * m + k] == 0.0) return 0.0;  // singular: the whole column below k is zero
    if (p != k) {
      std::swap_ranges(a.begin() + k * m, a.begin() + (k + 1) * m, a.begin() + p * m);
      det = -det;
    }
    const double pivot = a[k * m + k];
    det *= pivot;
    for (int64_t i = k + 1; i < m; ++i) {
      const double f = a[i * m + k] / pivot;
      for (int64_t j = k + 1; j < m; ++j) a[i * m + j] -= f * a[k * m + j];
    }
  }
  return det;
}

Status det_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t m = x.dim(x.rank() - 1);
  const int64_t count = y.numel();
  return visit_float(x.dtype(), "Det", [&](auto tag) {
    using T = decltype(tag);
    const T* xs = x.data_as<T>();
    T* ys = y.data_as<T>();
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t b = 0; b < count; ++b) {
      for (int64_t i = 0; i < m * m; ++i) a[i] = to_compute(xs[b * m * m + i]);
      ys[b] = from_compute<T>(lu_determinant(a, m));
    }
  });
}

constexpr DTypeSet kFloats = DTypeSet::floats();
constexpr DTypeSet kIndex = {DType::I32, DType::I64};

void add(KernelRegistry& r, std::string_view op, int since, int until, DTypeSet types, std::string_view id,
         KernelFn fn) {
  r.add({.domain = "", .op_type = op, .since_opset = since, .until_opset = until, .types = types, .id = id, .fn = fn});
}

}  // namespace

void register_signal(KernelRegistry& r) {
  add(r, "DFT", 17, 20, kFloats, "ref/dft", dft_kernel);
  add(r, "STFT", 17, 17, kFloats, "ref/stft", stft_kernel);
  add(r, "HannWindow", 17, 17, kIndex, "ref/hannwindow", window_kernel<hann>);
  add(r, "HammingWindow", 17, 17, kIndex, "ref/hammingwindow", window_kernel<hamming>);
  add(r, "BlackmanWindow", 17, 17, kIndex, "ref/blackmanwindow", window_kernel<blackman>);
  add(r, "MelWeightMatrix", 17, 17, kIndex, "ref/melweightmatrix", mel_weight_matrix_kernel);
  add(r, "Det", 11, 22, kFloats, "ref/det", det_kernel);
}

}  // namespace ignis::kernels::ref
