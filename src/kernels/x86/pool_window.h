// SPDX-License-Identifier: Apache-2.0
// The 1-D / 2-D window geometry the x86 windowed pools (pool_avx2.cc for float32,
// pool_int8_avx2.cc for uint8/int8) share: per spatial axis, which kernel taps of each output
// land inside the input, and how a call splits its planes over threads (also used by the global
// pools and QLinearGlobalAveragePool). No ISA code: the kernels include it with their own flags.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/conv_geometry.h"
#include "core/thread_pool.h"

namespace ignis::kernels::x86::pool_window {

// Window taps or elements below which a call stays on the calling thread; one more thread
// per multiple of this.
inline constexpr int64_t kWorkPerThread = int64_t{1} << 17;

inline int parts_for(ThreadPool* pool, int64_t work, int64_t units) {
  const int64_t threads = pool ? pool->threads() : 1;
  return static_cast<int>(
      std::clamp<int64_t>(work / kWorkPerThread, 1, std::max<int64_t>(1, std::min(threads, units))));
}

// Calls run_planes(begin, end) over planes [0, planes), split into parts_for(pool, work, planes)
// ranges run on the pool when there is more than one.
template <class Fn>
void split_planes(ThreadPool* pool, int64_t planes, int64_t work, const Fn& run_planes) {
  const int parts = parts_for(pool, work, planes);
  if (parts == 1) {
    run_planes(int64_t{0}, planes);
    return;
  }
  parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) run_planes(planes * part / parts, planes * (part + 1) / parts);
  });
}

inline int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }
inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// One spatial axis of the window: output o reads input o * s - pb + k * d, k < kernel.
struct Axis {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
};

// Taps of output o: [lo, hi) land inside the input, `padded` inside the padded extent.
struct Taps {
  int64_t lo, hi, padded;
};

inline Taps axis_taps(const Axis& a, int64_t o) {
  const int64_t start = o * a.stride - a.pad_begin;
  auto range = [&](int64_t lo_coord, int64_t hi_coord, int64_t& lo, int64_t& hi) {
    lo = std::clamp<int64_t>(ceil_div(lo_coord - start, a.dilation), 0, a.kernel);
    hi = std::clamp<int64_t>(floor_div(hi_coord - 1 - start, a.dilation) + 1, lo, a.kernel);
  };
  int64_t lo, hi, plo, phi;
  range(0, a.in, lo, hi);
  range(-a.pad_begin, a.in + a.pad_end, plo, phi);
  return {lo, hi, phi - plo};
}

inline bool every_window_has_input(const Axis& a) {
  for (int64_t o = 0; o < a.out; ++o) {
    const Taps t = axis_taps(a, o);
    if (t.hi <= t.lo) return false;
  }
  return true;
}

struct Window2d {
  Axis h, w;
  int64_t row_len = 0;  // row buffer columns: input columns [-pad_begin, row_len - pad_begin)
  bool include_pad = false;
  bool supported = false;  // every window has an input tap
};

// A 1-D window is a 2-D one with a single row.
inline Window2d as_2d(const WindowGeometry& g) {
  Window2d p;
  auto axis = [&](int i) {
    return Axis{g.in[i], g.out[i], g.kernel[i], g.stride[i], g.dilation[i], g.pad_begin[i], g.pad_end[i]};
  };
  if (g.rank == 1) p.w = axis(0);
  else {
    p.h = axis(0);
    p.w = axis(1);
  }
  p.row_len = (p.w.out - 1) * p.w.stride + (p.w.kernel - 1) * p.w.dilation + 1;
  return p;
}

}  // namespace ignis::kernels::x86::pool_window
