// SPDX-License-Identifier: Apache-2.0
// The x86 reductions (src/kernels/x86/reduce_avx2.cc) against the reference kernels on what
// the registry-wide consistency test's [-1, 1] inputs lack: NaN (which wins in ReduceMax and
// ReduceMin wherever it sits in a row, a vector tail or a column strip) and infinities.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/nn_test_util.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::nn_test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

void expect_same_as_reference(const std::string& op, const std::string& id, const Shape& shape,
                              const std::vector<float>& v, int64_t axis) {
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id(id);
  ASSERT_NE(def, nullptr) << id;
  if (!kernels::isa_available(def->isa)) GTEST_SKIP() << id << ": this CPU lacks the kernel's ISA";
  OpCall call;
  call.op_type = op;
  call.opset = 17;
  call.attrs.set("axes", [&] {
    Attribute a;
    a.kind = Attribute::Kind::Ints;
    a.ints = {axis};
    return a;
  }());
  call.inputs = {make_tensor_f32(shape, v)};
  auto want = run_op_threads(call, 1);
  auto got = run_op_with(call, [&](const std::vector<DType>&) { return def; }, id, 2);
  ASSERT_TRUE(want && got);
  const std::vector<float> g = values_of<float>((*got)[0]), w = values_of<float>((*want)[0]);
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) EXPECT_TRUE(std::isnan(g[i])) << id << " axis " << axis << " element " << i;
    else EXPECT_EQ(g[i], w[i]) << id << " axis " << axis << " element " << i;
  }
}

TEST(ReduceX86, NaNAndInfinitiesInRowsTailsAndStrips) {
  // 5 rows of 37 (four vectors and a tail of 5): specials at the start, middle and tail.
  const Shape shape{5, 37};
  std::vector<float> v(185);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i)) * 3.0f;
  v[0] = kNaN;        // row 0, first element
  v[37 + 20] = kInf;  // row 1
  v[74 + 35] = kNaN;  // row 2, in the tail
  v[111 + 36] = -kInf;
  v[148 + 3] = kInf;
  v[148 + 4] = -kInf;
  for (const auto& [op, id] : std::vector<std::pair<std::string, std::string>>{
           {"ReduceMax", "x86/reducemax_f32_avx2"}, {"ReduceMin", "x86/reducemin_f32_avx2"},
           {"ReduceMean", "x86/reducemean_f32_avx2"}, {"ReduceL2", "x86/reducel2_f32_avx2"}}) {
    expect_same_as_reference(op, id, shape, v, 1);  // rows
    expect_same_as_reference(op, id, shape, v, 0);  // columns
  }
}

}  // namespace
}  // namespace ignis::nn_test
#endif  // IGNIS_HAVE_X86_KERNELS
