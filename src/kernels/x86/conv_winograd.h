// SPDX-License-Identifier: Apache-2.0
// Winograd F(4x4, 3x3) convolution for float32 NCHW, 3x3 kernels at stride 1 and dilation 1
// (conv_winograd_f4x4_avx512.cc, conv_winograd_f4x4_avx2.cc), used by the x86 Conv kernel
// (nn_conv.cc) on its AVX-512 and AVX2 backends.
// The weight transform (conv_winograd.cc) runs once, when the kernel is created; each run
// transforms blocks of input tiles, multiplies them by the transformed weights with the
// sgemm, and transforms the products back into the output, applying bias, residual and
// activation on the way.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {

// Where Winograd beats the im2col GEMM. Single convolutions (AVX-512, one thread, 3x3 pad 1,
// cin == cout; table in conv_winograd_f4x4_avx512.cc) win 1.3-2.5x from 16 output tiles (14x14)
// up, break even at 9 (10x10, 12x12) and lose 1.5-2.5x at 4 (7x7, 8x8), where the
// transformed weights (4x the plain ones) are streamed for too few tiles. Inside resnet50,
// where every convolution's weights come from L3 or memory, the 14x14 stage (256 channels,
// 16 tiles) gained nothing measurable at one thread, so the limit is 36 tiles (about 21x21
// outputs): the 56x56 and 28x28 stages. Channel counts from 16 (2x at 16 channels on 56x56)
// to 256 (512-channel weights would take 38 MB transformed).
inline constexpr int64_t kConvWinogradMinChannels = 16;
inline constexpr int64_t kConvWinogradMaxChannels = 256;
inline constexpr int64_t kConvWinogradMinTiles = 36;
// With AVX2 transforms and the 4x24 GEMM (no F(2x2) there) the 14x14 stage gains too:
// `ignis tune models/resnet50.onnx -t 1 -v` on an AMD EPYC family 25 model 1 (Zen 3), im2col
// GEMM -> F(4x4): 64ch 56x56 3.10 -> 1.71 ms, 128ch 28x28 2.92 -> 1.48 ms, 256ch 14x14 2.85 ->
// 1.93 ms; resnet50 end to end at one thread 102-106 -> 98-101 ms with the 14x14 stage on it.
inline constexpr int64_t kConvWinogradMinTilesAvx2 = 16;

// The predicates below have internal linkage (see gemm_blocked.h): nn_conv.cc (no ISA flags)
// and the AVX-512 files both call them. ConvWinograd and ConvWinograd2 cross files, so they
// keep external linkage; their copies, moves and destruction (inline, instantiating
// std::vector<PackedMatrix>) happen only in files without ISA flags: create() is in
// conv_winograd.cc, and the AVX-512 files define only the const members run() and
// scratch_floats().
namespace {

// Whether the weights of a convolution can be prepared for Winograd: 3x3 kernel, one group,
// channel counts in range. Stride and dilation must be 1 (checked from the attributes by the
// caller, and again per run by conv_winograd_supported).
inline bool conv_winograd_weights_supported(int64_t kh, int64_t kw, int64_t cin, int64_t cout, int64_t group) {
  return kh == 3 && kw == 3 && group == 1 && cin >= kConvWinogradMinChannels && cout >= kConvWinogradMinChannels &&
         cin <= kConvWinogradMaxChannels && cout <= kConvWinogradMaxChannels;
}

// Whether either Winograd form can compute a run of this geometry at all: unit strides and
// dilations, any padding, a non-empty output.
inline bool conv_winograd_geometry_feasible(const ConvGeometry2d& g) {
  return g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 && g.oh >= 1 && g.ow >= 1;
}

// Whether F(4x4, 3x3) can run this geometry (a tactic chosen by measurement may take it
// where the rule below would not).
inline bool conv_winograd_feasible(const ConvGeometry2d& g, int64_t cin, int64_t cout, int64_t group) {
  return conv_winograd_weights_supported(g.kh, g.kw, cin, cout, group) && conv_winograd_geometry_feasible(g);
}

// Whether a run of this geometry should take the Winograd path: 2-D 3x3, unit strides and
// dilations, any padding, enough output tiles per image (min_tiles: kConvWinogradMinTiles on
// AVX-512, kConvWinogradMinTilesAvx2 on AVX2).
inline bool conv_winograd_supported(const ConvGeometry2d& g, int64_t cin, int64_t cout, int64_t group,
                                    int64_t min_tiles = kConvWinogradMinTiles) {
  return conv_winograd_feasible(g, cin, cout, group) && ((g.oh + 3) / 4) * ((g.ow + 3) / 4) >= min_tiles;
}

}  // namespace

// Transformed weights of one convolution and the per-run driver, on the AVX-512 8x32 GEMM
// with AVX-512 transforms or on the AVX2 4x24 GEMM with AVX2 transforms
// (conv_winograd_f4x4_avx2.cc), as `create` was told; the CPU must have that instruction set.
// Immutable after creation, so run may be called concurrently.
class ConvWinograd {
 public:
  // w: [cout, cin, 3, 3], row-major; backend: gemm_backend_avx512() or gemm_backend_avx2().
  static ConvWinograd create(const float* w, int64_t cout, int64_t cin, const GemmBackend& backend);

  bool empty() const { return u_.empty(); }
  int64_t cin() const { return cin_; }
  int64_t cout() const { return cout_; }

  // Floats of scratch one run needs on `threads` threads.
  size_t scratch_floats(const ConvGeometry2d& g, int64_t batch, int threads) const;

  // y[batch, cout, oh, ow] = act(conv(x) + bias + residual) with x [batch, cin, ih, iw];
  // bias ([cout]) and residual (shaped like y) may be null; `act` supplies the activation
  // (its bias and residual fields are ignored).
  void run(const ConvGeometry2d& g, int64_t batch, const float* x, const float* bias, const float* residual,
           const GemmEpilogue& act, float* y, ThreadPool* pool, float* scratch) const;

 private:
  int64_t cin_ = 0, cout_ = 0;
  bool avx512_ = true;
  std::vector<PackedMatrix> u_;  // 36 transformed weight matrices [cout x cin], A panels of the backend
};

// F(4x4, 3x3)'s transformed weights for GEMMs that put tiles in rows and output channels in
// columns (the blocked layout's Winograd, conv_blocked.h): per point k, U_k^T [cin_pad x
// cout_pad] packed as a B operand of `backend`, zero past cin and cout. w: [cout, cin, 3, 3].
std::vector<PackedMatrix> winograd4_weights_transposed(const float* w, int64_t cout, int64_t cin, int64_t cin_pad,
                                                      int64_t cout_pad, const GemmBackend& backend);

// The runs behind ConvWinograd per instruction set (conv_winograd_f4x4_avx512.cc,
// conv_winograd_f4x4_avx2.cc): u is the 36 transformed weight matrices.
size_t winograd4_scratch_floats_avx512(const ConvGeometry2d& g, int64_t batch, int threads, int64_t cin, int64_t cout);
void winograd4_run_avx512(const PackedMatrix* u, int64_t cin, int64_t cout, const ConvGeometry2d& g, int64_t batch,
                          const float* x, const float* bias, const float* residual, const GemmEpilogue& act, float* y,
                          ThreadPool* pool, float* scratch);
size_t winograd4_scratch_floats_avx2(const ConvGeometry2d& g, int64_t batch, int threads, int64_t cin, int64_t cout);
void winograd4_run_avx2(const PackedMatrix* u, int64_t cin, int64_t cout, const ConvGeometry2d& g, int64_t batch,
                        const float* x, const float* bias, const float* residual, const GemmEpilogue& act, float* y,
                        ThreadPool* pool, float* scratch);

// Winograd F(2x2, 3x3) (conv_winograd_f2x2_avx512.cc) for the outputs F(4x4) leaves to the GEMM:
// 14x14 images, 49 tiles of 2x2 with no tile waste, 2.25x fewer multiply-adds than the
// direct GEMM and transformed weights only 16/9 of the plain ones (F(4x4): 4x, on 16 tiles
// of which a quarter is padding). Measured in conv_winograd_f2x2_avx512.cc: 1.3-1.8x the GEMM
// from 25 tiles (10x10 outputs) up to the F(4x4) limit, 64 to 512 channels. Below 25 tiles
// (7x7: 16 tiles covering 8x8) the tile waste and the GEMM's 16 columns leave little gain.
// A run numbers the tiles of all its images together (one GEMM per point over every image's
// tiles), so the bound counts the batch's tiles: resnet50's 7x7 stage (512 channels, 16 tiles
// an image) at batch 8, 128 tiles, took 3.3 ms per convolution in F(2x2) against 5.1-5.6 ms
// in the GEMMs (`ignis tune --batch 8`, 2 threads, AMD Zen 5). F(4x4) keeps its per-image
// bound: on the 14x14 stage at batch 8 it was no faster than F(2x2) (2.81 vs 2.69 ms).
inline constexpr int64_t kConvWinograd2MinTiles = 25;
inline constexpr int64_t kConvWinograd2MaxChannels = 512;

namespace {

inline bool conv_winograd2_weights_supported(int64_t kh, int64_t kw, int64_t cin, int64_t cout, int64_t group) {
  return kh == 3 && kw == 3 && group == 1 && cin >= kConvWinogradMinChannels && cout >= kConvWinogradMinChannels &&
         cin <= kConvWinograd2MaxChannels && cout <= kConvWinograd2MaxChannels;
}

inline bool conv_winograd2_feasible(const ConvGeometry2d& g, int64_t cin, int64_t cout, int64_t group) {
  return conv_winograd2_weights_supported(g.kh, g.kw, cin, cout, group) && conv_winograd_geometry_feasible(g);
}

// Whether a run of `batch` images of this geometry should take F(2x2, 3x3): 2-D 3x3, unit
// strides and dilations, enough 2x2 tiles over the batch, and not one F(4x4) takes (when it
// has the weights).
inline bool conv_winograd2_supported(const ConvGeometry2d& g, int64_t cin, int64_t cout, int64_t group,
                                     int64_t batch) {
  return conv_winograd2_feasible(g, cin, cout, group) &&
         std::max<int64_t>(batch, 1) * ((g.oh + 1) / 2) * ((g.ow + 1) / 2) >= kConvWinograd2MinTiles &&
         ((g.oh + 3) / 4) * ((g.ow + 3) / 4) < kConvWinogradMinTiles;
}

}  // namespace

// Transformed weights of one convolution for F(2x2, 3x3) and the per-run driver; the same
// contract as ConvWinograd (AVX-512F, immutable, concurrent runs).
class ConvWinograd2 {
 public:
  static ConvWinograd2 create(const float* w, int64_t cout, int64_t cin);

  bool empty() const { return u_.empty(); }

  size_t scratch_floats(const ConvGeometry2d& g, int64_t batch, int threads) const;

  void run(const ConvGeometry2d& g, int64_t batch, const float* x, const float* bias, const float* residual,
           const GemmEpilogue& act, float* y, ThreadPool* pool, float* scratch) const;

 private:
  int64_t cin_ = 0, cout_ = 0;
  std::vector<PackedMatrix> u_;  // 16 transformed weight matrices [cout x cin], AVX-512 A panels
};

}  // namespace ignis::kernels::x86
