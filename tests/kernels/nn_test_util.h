// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the NN kernel tests (tests/kernels/nn_*_test.cc): seeded random tensors,
// running an op through its reference kernel (optionally with a thread pool), tolerant
// comparisons.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/thread_pool.h"
#include "ir/op_schema.h"
#include "kernels/registry.h"
#include "testing/op_runner.h"

namespace ignis::nn_test {

using testing::attr_float;
using testing::attr_floats;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::attr_strings;
using testing::attr_tensor;
using testing::make_tensor_f32;
using testing::make_tensor_i64;
using testing::make_tensor_str;
using testing::OpCall;

inline std::vector<float> random_floats(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

inline Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  return make_tensor_f32(shape, random_floats(shape.numel(), seed, lo, hi));
}

template <class T>
Tensor make_tensor(const Shape& shape, const std::vector<T>& values) {
  Tensor t = Tensor::empty(dtype_of<T>(), shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), shape.numel());
  for (size_t i = 0; i < values.size(); ++i) t.data_as<T>()[i] = values[i];
  return t;
}

// A tensor of float dtype `dtype` holding `values`, which are rounded to that dtype in place so
// that an oracle computing on them sees what the kernel sees.
inline Tensor make_rounded_tensor(DType dtype, const Shape& shape, std::vector<float>& values) {
  Tensor t = Tensor::empty(dtype, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), shape.numel());
  (void)visit_float(dtype, "make_rounded_tensor", [&](auto tag) {
    using T = decltype(tag);
    for (size_t n = 0; n < values.size(); ++n) {
      t.data_as<T>()[n] = from_compute<T>(values[n]);
      values[n] = static_cast<float>(to_compute(t.data_as<T>()[n]));
    }
  });
  return t;
}

template <class T>
std::vector<T> values_of(const Tensor& t) {
  std::vector<T> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.data_as<const T>()[i];
  return v;
}

inline std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = load_as_double(t.dtype(), t.data(), i);
  return v;
}

// |got - want| <= atol + rtol * |want| elementwise; reports the first few mismatches.
// Runs `call`, which must fail with a message containing `text`; returns the error's code
// (Ok, after a test failure, when it ran).
inline StatusCode expect_op_error(const OpCall& call, const std::string& text) {
  auto r = testing::run_op(call);
  EXPECT_FALSE(r) << "expected an error containing: " << text;
  if (r) return StatusCode::Ok;
  EXPECT_NE(r.error().message().find(text), std::string::npos) << r.error().message();
  return r.error().code();
}

inline void expect_close(const Tensor& got, const std::vector<double>& want, double rtol, double atol,
                         const std::string& what) {
  const std::vector<double> g = as_doubles(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    const bool ok =
        std::isnan(want[i]) ? std::isnan(g[i]) : std::fabs(g[i] - want[i]) <= atol + rtol * std::fabs(want[i]);
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " got " << g[i] << ", want " << want[i];
    }
  }
}

// The reference kernel ("ref/...") for the call, bypassing optimized kernels the registry
// would prefer, so these tests always exercise the reference implementation.
inline const kernels::KernelDef* find_ref_kernel(const OpCall& call, const std::vector<DType>& dtypes) {
  const kernels::KernelDef* best = nullptr;
  for (const auto& d : kernels::KernelRegistry::global().all()) {
    if (d.domain != call.domain || d.op_type != call.op_type || call.opset < d.since_opset ||
        call.opset > d.until_opset || !d.id.starts_with("ref/"))
      continue;
    if (d.type_input >= static_cast<int>(dtypes.size()) || !d.types.contains(dtypes[d.type_input])) continue;
    if (!best || d.priority > best->priority) best = &d;
  }
  return best;
}

// Shape inference and the reference kernel as run_op does, with a `threads`-wide pool (run_op
// runs single-threaded), so the parallel paths are exercised too.
inline Result<std::vector<Tensor>> run_op_threads(const OpCall& call, int threads) {
  return run_op_with(
      call, [&](const std::vector<DType>& dtypes) { return find_ref_kernel(call, dtypes); }, "no reference kernel",
      threads);
}

// Runs `call` through the reference kernel and returns output 0, failing the test on error.
inline Tensor run1(const OpCall& call) {
  auto r = run_op_threads(call, 1);
  EXPECT_TRUE(r.has_value()) << (r.has_value() ? "" : r.error().to_string());
  if (!r.has_value()) return Tensor();
  return (*r)[0];
}

inline StatusCode status_of(const OpCall& call) {
  auto r = run_op_threads(call, 1);
  return r.has_value() ? StatusCode::Ok : r.error().code();
}

}  // namespace ignis::nn_test
