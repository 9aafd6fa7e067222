// SPDX-License-Identifier: Apache-2.0
// The weight transforms of the Winograd convolutions (conv_winograd.h): ConvWinograd::create,
// ConvWinograd2::create and winograd4_weights_transposed, and ConvWinograd's dispatch to its instruction set's run. Built
// without ISA flags on purpose: creating a ConvWinograd
// builds, moves and destroys std::vector<PackedMatrix> and std::vector<float>, whose inline
// members would otherwise be emitted with AVX-512 code as weak definitions that nn_conv.cc's
// copies (the kernel owns and destroys the result) can be merged with. The transform is
// scalar double arithmetic run once per kernel; the packing it ends with calls the AVX-512
// GEMM backend through its function pointer, as every caller of PackedMatrix::pack does.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/x86/conv_winograd.h"

namespace ignis::kernels::x86 {

namespace {

// The transformed weights of a Winograd F(m x m, 3x3) convolution, T = m + 2 points per
// axis: u[k][o][i] = (G g G^T)[k] for the T * T points k, output channel o and input channel
// i; w is [cout, cin, 3, 3] and g G's rows. Computed in double.
template <int T>
std::vector<float> winograd_points(const float* w, int64_t cout, int64_t cin, const double (&g)[T][3]) {
  const size_t plane = static_cast<size_t>(cout * cin);
  std::vector<float> u(static_cast<size_t>(T * T) * plane);
  for (int64_t o = 0; o < cout; ++o) {
    for (int64_t i = 0; i < cin; ++i) {
      const float* k3 = w + (o * cin + i) * 9;
      double gg[T][3];  // G g
      for (int r = 0; r < T; ++r)
        for (int col = 0; col < 3; ++col) gg[r][col] = g[r][0] * k3[col] + g[r][1] * k3[3 + col] + g[r][2] * k3[6 + col];
      for (int r = 0; r < T; ++r)
        for (int s = 0; s < T; ++s)
          u[static_cast<size_t>(r * T + s) * plane + static_cast<size_t>(o * cin + i)] =
              static_cast<float>(gg[r][0] * g[s][0] + gg[r][1] * g[s][1] + gg[r][2] * g[s][2]);
    }
  }
  return u;
}

// The same, each point's U_k [cout x cin] packed as an A operand of `backend`.
template <int T>
std::vector<PackedMatrix> winograd_weights(const float* w, int64_t cout, int64_t cin, const double (&g)[T][3],
                                           const GemmBackend& backend) {
  const std::vector<float> u = winograd_points<T>(w, cout, cin, g);
  const size_t plane = static_cast<size_t>(cout * cin);
  std::vector<PackedMatrix> packed;
  for (int k = 0; k < T * T; ++k)
    packed.push_back(PackedMatrix::pack(PackedMatrix::Side::A, cout, cin, u.data() + k * plane, cin, false, backend));
  return packed;
}

// G of F(4x4, 3x3).
constexpr double kG4[6][3] = {{1.0 / 4, 0, 0},
                              {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                              {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                              {1.0 / 24, 1.0 / 12, 1.0 / 6},
                              {1.0 / 24, -1.0 / 12, 1.0 / 6},
                              {0, 0, 1}};

}  // namespace

ConvWinograd ConvWinograd::create(const float* w, int64_t cout, int64_t cin, const GemmBackend& backend) {
  ConvWinograd c;
  c.cin_ = cin;
  c.cout_ = cout;
  c.avx512_ = backend.isa == Isa::Avx512;
  c.u_ = winograd_weights<6>(w, cout, cin, kG4, c.avx512_ ? gemm_backend_avx512() : gemm_backend_avx2());
  return c;
}

size_t ConvWinograd::scratch_floats(const ConvGeometry2d& g, int64_t batch, int threads) const {
  return (avx512_ ? winograd4_scratch_floats_avx512 : winograd4_scratch_floats_avx2)(g, batch, threads, cin_, cout_);
}

void ConvWinograd::run(const ConvGeometry2d& g, int64_t batch, const float* x, const float* bias,
                       const float* residual, const GemmEpilogue& act, float* y, ThreadPool* pool,
                       float* scratch) const {
  (avx512_ ? winograd4_run_avx512 : winograd4_run_avx2)(u_.data(), cin_, cout_, g, batch, x, bias, residual, act, y,
                                                        pool, scratch);
}

ConvWinograd2 ConvWinograd2::create(const float* w, int64_t cout, int64_t cin) {
  // G of F(2x2, 3x3).
  static constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  ConvWinograd2 c;
  c.cin_ = cin;
  c.cout_ = cout;
  c.u_ = winograd_weights<4>(w, cout, cin, kG, gemm_backend_avx512());
  return c;
}

std::vector<PackedMatrix> winograd4_weights_transposed(const float* w, int64_t cout, int64_t cin, int64_t cin_pad,
                                                      int64_t cout_pad, const GemmBackend& backend) {
  const std::vector<float> u = winograd_points<6>(w, cout, cin, kG4);
  const size_t plane = static_cast<size_t>(cout * cin);
  std::vector<float> ut(static_cast<size_t>(cin_pad * cout_pad), 0.0f);  // U_k^T, zero-padded
  std::vector<PackedMatrix> packed;
  for (int k = 0; k < 36; ++k) {
    const float* uk = u.data() + k * plane;
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t i = 0; i < cin; ++i) ut[static_cast<size_t>(i * cout_pad + o)] = uk[o * cin + i];
    packed.push_back(PackedMatrix::pack(PackedMatrix::Side::B, cin_pad, cout_pad, ut.data(), cout_pad, false, backend));
  }
  return packed;
}

}  // namespace ignis::kernels::x86
