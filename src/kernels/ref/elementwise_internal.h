// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the elementwise reference kernels: the broadcast row walker, exact integer
// arithmetic helpers, defined float->integer conversion and the per-file registration hooks.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/broadcast.h"
#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

// Registration of each elementwise source file; register_elementwise calls all of them.
void register_elementwise_unary(KernelRegistry& r);
void register_elementwise_binary(KernelRegistry& r);
void register_elementwise_misc(KernelRegistry& r);

namespace ew {

// Elements per parallel chunk: elementwise work is cheap, so chunks must be large enough to
// amortize the dispatch.
inline constexpr int64_t kGrain = 32768;

// Walks the output of a broadcast over N operands in rows. After dropping extent-1 dims and
// merging dims that are contiguous for every operand, the innermost dim is a row in which each
// operand advances by 0 (broadcast) or 1 (contiguous). For each piece of a row it calls
//   fn(out_offset, in_offsets, len, in_inner_strides)
// with in_offsets / in_inner_strides as std::array<int64_t, N>. Rows are split across the pool
// by element count, so one huge row parallelizes too.
template <size_t N, class Fn>
void for_each_broadcast_row(ThreadPool* pool, const Shape& out, const std::array<Shape, N>& ins, Fn&& fn) {
  const int64_t total = out.numel();
  if (total == 0) return;
  std::array<std::vector<int64_t>, N> full;
  for (size_t k = 0; k < N; ++k) full[k] = broadcast_strides(ins[k], out);

  // Coalesce from the innermost dim outwards.
  int64_t dims[Shape::kMaxRank];
  std::array<std::array<int64_t, Shape::kMaxRank>, N> strides{};
  int rank = 0;
  for (int d = out.rank() - 1; d >= 0; --d) {
    if (out[d] == 1) continue;
    if (rank > 0) {
      bool mergeable = true;
      for (size_t k = 0; k < N; ++k)
        if (full[k][d] != strides[k][rank - 1] * dims[rank - 1]) mergeable = false;
      if (mergeable) {
        dims[rank - 1] *= out[d];
        continue;
      }
    }
    dims[rank] = out[d];
    for (size_t k = 0; k < N; ++k) strides[k][rank] = full[k][d];
    ++rank;
  }
  if (rank == 0) {
    dims[0] = 1;
    for (size_t k = 0; k < N; ++k) strides[k][0] = 0;
    rank = 1;
  }
  // dims/strides were filled innermost first; index 0 is the row.
  const int64_t inner = dims[0];
  std::array<int64_t, N> inner_strides;
  for (size_t k = 0; k < N; ++k) inner_strides[k] = strides[k][0];

  auto run = [&](int64_t begin, int64_t end) {
    int64_t idx[Shape::kMaxRank];
    int64_t rest = begin;
    std::array<int64_t, N> offs{};
    for (int d = 0; d < rank; ++d) {
      idx[d] = rest % dims[d];
      rest /= dims[d];
      for (size_t k = 0; k < N; ++k) offs[k] += idx[d] * strides[k][d];
    }
    int64_t cur = begin;
    while (cur < end) {
      const int64_t len = std::min(inner - idx[0], end - cur);
      fn(cur, offs, len, inner_strides);
      cur += len;
      if (cur >= end) break;
      // The row is finished (otherwise cur == end): rewind to its start, then carry.
      for (size_t k = 0; k < N; ++k) offs[k] -= idx[0] * strides[k][0];
      idx[0] = 0;
      for (int d = 1; d < rank; ++d) {
        if (++idx[d] < dims[d]) {
          for (size_t k = 0; k < N; ++k) offs[k] += strides[k][d];
          break;
        }
        for (size_t k = 0; k < N; ++k) offs[k] -= strides[k][d] * (dims[d] - 1);
        idx[d] = 0;
      }
    }
  };
  parallel_for(pool, total, kGrain, run);
}

// Two's-complement wrapping arithmetic for integers (signed overflow is undefined in C++, and
// small unsigned types promote to int). Computed in uint64_t and narrowed, which is modular.
template <class T>
inline T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <class T>
inline T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <class T>
inline T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
template <class T>
inline T wrap_neg(T a) {
  return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(a));
}

// Float -> integer conversion without undefined behaviour. Values in range truncate toward
// zero; NaN and values outside int64 map to INT64_MIN (what x86 cvttsd2si yields) before
// narrowing, and narrowing is modular, so the result matches numpy's astype on x86-64.
template <class To>
inline To float_to_int(double v) {
  static_assert(std::is_integral_v<To> && !std::is_same_v<To, bool>);
  if constexpr (std::is_same_v<To, uint64_t>) {
    if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return static_cast<uint64_t>(v);
  }
  int64_t i = std::numeric_limits<int64_t>::min();
  if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) i = static_cast<int64_t>(v);
  return static_cast<To>(i);
}

// Converts a double to T (any storage type). Floats round to nearest even once: fp16/bf16 go
// through a round-to-odd float, which keeps the final rounding correct (no double rounding).
template <class T>
inline T double_to(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return static_cast<T>(v);
  } else if constexpr (is_half_like_v<T>) {
    float f = static_cast<float>(v);
    if (std::isfinite(v) && static_cast<double>(f) != v) {
      // Truncate toward zero, then set the sticky low bit.
      if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
      f = bits_to_float(float_to_bits(f) | 1u);
    }
    return from_compute<T>(f);
  } else {
    return float_to_int<T>(v);
  }
}

// Stores a computed value into T: integer results are converted with defined behaviour,
// everything else with from_compute.
template <class T, class C>
inline T store_as(C v) {
  if constexpr (std::is_floating_point_v<C> && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return float_to_int<T>(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != C{};
  } else if constexpr (is_half_like_v<T> && std::is_same_v<C, double>) {
    return double_to<T>(v);
  } else {
    return from_compute<T>(v);
  }
}

// Round half to even, independent of the floating-point environment.
template <class F>
inline F round_half_even(F x) {
  if (!std::isfinite(x)) return x;
  const F r = std::floor(x);
  const F diff = x - r;
  if (diff > F(0.5)) return r + F(1);
  if (diff < F(0.5)) return r;
  return std::fmod(r, F(2)) == F(0) ? r : r + F(1);
}

inline Status dtype_unsupported(std::string_view op, DType t) {
  return unsupported(str_cat(op, ": dtype ", dtype_name(t), " is not supported"));
}

}  // namespace ew
}  // namespace ignis::kernels::ref
