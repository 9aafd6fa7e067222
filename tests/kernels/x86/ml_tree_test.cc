// SPDX-License-Identifier: Apache-2.0
// The flat tree-ensemble kernels (src/kernels/x86/ml_tree.cc) against the reference kernels on
// what the registry-wide consistency test does not feed them: string class labels, double,
// int64 and int32 inputs (double inputs make both compare and sum in double), float16 inputs,
// and one kernel instance run on row counts from 1 to 19 (every tail of the eight-row walk).
// The forests are the consistency test's (tests/kernels/cases/ml_tree.cc); results must be
// equal, not close.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/cases/cases.h"
#include "kernels/nn_test_util.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::nn_test {
namespace {

// Runs `call` with the flat kernel `id` on 1 and 2 threads and with the reference kernel, and
// expects every output equal (NaN where the reference has NaN).
void expect_equal_to_reference(const OpCall& call, std::string_view id, const std::string& what) {
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id(id);
  ASSERT_NE(def, nullptr) << id;
  auto want = run_op_threads(call, 1);
  ASSERT_TRUE(want.has_value()) << what << ": " << want.error().to_string();
  for (int threads : {1, 2}) {
    auto got = run_op_with(call, [&](const std::vector<DType>&) { return def; }, std::string(id), threads);
    ASSERT_TRUE(got.has_value()) << what << ": " << got.error().to_string();
    ASSERT_EQ(got->size(), want->size()) << what;
    for (size_t o = 0; o < got->size(); ++o) {
      const Tensor& g = (*got)[o];
      const Tensor& w = (*want)[o];
      ASSERT_EQ(g.dtype(), w.dtype()) << what;
      ASSERT_EQ(g.numel(), w.numel()) << what;
      for (int64_t i = 0; i < w.numel(); ++i) {
        if (w.dtype() == DType::String) {
          EXPECT_EQ(g.data_as<const std::string>()[i], w.data_as<const std::string>()[i]) << what << " output " << o;
          continue;
        }
        const double gv = load_as_double(g.dtype(), g.data(), i), wv = load_as_double(w.dtype(), w.data(), i);
        EXPECT_TRUE(std::isnan(wv) ? std::isnan(gv) : gv == wv)
            << what << ", " << threads << " threads, output " << o << " element " << i << ": got " << gv
            << ", reference " << wv;
      }
    }
  }
}

// The case's X as `dtype` (integers rounded toward zero; NaN only where the dtype has it).
Tensor input_as(const kernel_cases::KernelCase& c, DType dtype) {
  const std::vector<double>& v = c.input_values[0];
  Tensor t = Tensor::empty(dtype, c.inputs[0]);
  for (size_t i = 0; i < v.size(); ++i) {
    const double x = std::isnan(v[i]) && (dtype == DType::I64 || dtype == DType::I32) ? 0.0 : v[i];
    switch (dtype) {
      case DType::F64: t.data_as<double>()[i] = x; break;
      case DType::F16: t.data_as<Half>()[i] = from_compute<Half>(x); break;
      case DType::I64: t.data_as<int64_t>()[i] = static_cast<int64_t>(x); break;
      case DType::I32: t.data_as<int32_t>()[i] = static_cast<int32_t>(x); break;
      default: t.data_as<float>()[i] = static_cast<float>(x); break;
    }
  }
  return t;
}

// TreeEnsemble (5) holds splits, weights and member values in X's type: the case's attributes
// converted to `dtype`.
AttrMap unified_attrs_as(const AttrMap& attrs, DType dtype) {
  AttrMap out;
  for (const auto& [name, a] : attrs.items()) {
    if (a.kind != Attribute::Kind::Tensor || a.t.dtype() != DType::F32) {
      out.set(name, a);
      continue;
    }
    Tensor t = Tensor::empty(dtype, a.t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) {
      const float v = a.t.data_as<const float>()[i];
      if (dtype == DType::F64) t.data_as<double>()[i] = v;
      else t.data_as<Half>()[i] = from_compute<Half>(v);
    }
    out.set(name, attr_tensor(std::move(t)));
  }
  return out;
}

OpCall call_of(const kernel_cases::KernelCase& c, Tensor x) {
  OpCall call;
  call.domain = c.domain;
  call.op_type = c.op_type;
  call.opset = c.opset;
  call.attrs = c.op_type == "TreeEnsemble" && x.dtype() != DType::F32 ? unified_attrs_as(c.attrs, x.dtype()) : c.attrs;
  call.inputs = {std::move(x)};
  call.num_outputs = c.op_type == "TreeEnsembleClassifier" ? 2 : 1;
  return call;
}

std::string_view flat_id(const std::string& op) {
  if (op == "TreeEnsembleClassifier") return "cpu/tree_ensemble_classifier_flat";
  if (op == "TreeEnsembleRegressor") return "cpu/tree_ensemble_regressor_flat";
  return "cpu/tree_ensemble_flat";
}

std::vector<kernel_cases::KernelCase> all_cases() {
  return kernel_cases::concat(
      kernel_cases::concat(kernel_cases::tree_ensemble_regressor_cases(), kernel_cases::tree_ensemble_classifier_cases()),
      kernel_cases::tree_ensemble_cases());
}

TEST(FlatTreeEnsemble, InputTypes) {
  for (const auto& c : all_cases()) {
    const bool unified = c.op_type == "TreeEnsemble";
    const std::vector<DType> types = unified ? std::vector<DType>{DType::F64, DType::F16}
                                             : std::vector<DType>{DType::F64, DType::I64, DType::I32};
    for (DType t : types)
      expect_equal_to_reference(call_of(c, input_as(c, t)), flat_id(c.op_type),
                                c.op_type + " " + c.label + " as " + std::string(dtype_name(t)));
  }
}

TEST(FlatTreeEnsemble, StringLabels) {
  for (auto c : kernel_cases::tree_ensemble_classifier_cases()) {
    std::vector<std::string> labels;
    for (int64_t l : c.attrs.find("classlabels_int64s")->ints) labels.push_back("class " + std::to_string(l));
    AttrMap attrs;
    for (const auto& [name, a] : c.attrs.items())
      if (name != "classlabels_int64s") attrs.set(name, a);
    attrs.set("classlabels_strings", attr_strings(labels));
    c.attrs = attrs;
    expect_equal_to_reference(call_of(c, input_as(c, DType::F32)), flat_id(c.op_type), c.label + " string labels");
  }
}

TEST(FlatTreeEnsemble, RowCounts) {
  // The largest forest of each op, every row count from 1 to 19 (prefixes of its rows).
  for (const auto& c : all_cases()) {
    if (c.inputs[0][0] < 37) continue;
    const int64_t features = c.inputs[0][1];
    for (int64_t rows = 1; rows <= 19; ++rows) {
      kernel_cases::KernelCase part = c;
      part.inputs = {Shape{rows, features}};
      part.input_values[0].resize(static_cast<size_t>(rows * features));
      expect_equal_to_reference(call_of(part, input_as(part, DType::F32)), flat_id(c.op_type),
                                c.op_type + " " + c.label + " first " + std::to_string(rows) + " rows");
    }
  }
}

}  // namespace
}  // namespace ignis::nn_test
#endif  // IGNIS_HAVE_X86_KERNELS
