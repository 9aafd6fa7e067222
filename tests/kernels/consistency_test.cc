// SPDX-License-Identifier: Apache-2.0
// Registry-wide consistency: every registered kernel with an ISA (isa != None) runs the
// cases of its op (tests/kernels/cases/) and is compared with the reference kernel of the
// same op. Each case runs four ways: weights as run-time inputs or as plan-time constants
// (prepacking), without a pool or on two threads. Outputs are poisoned with NaN and followed
// by a guard region that must survive; the tolerance is declared next to the generators
// (cases.h). Kernels whose ISA this CPU lacks are skipped. Each failure prints the kernel id,
// the case, its seed and the first bad element; IGNIS_CONSISTENCY_SEED=<seed> reruns only
// the case with that seed. Cases may declare integer inputs (quantized ops); integer outputs
// must match exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "core/thread_pool.h"
#include "ir/op_schema.h"
#include "kernels/cases/cases.h"
#include "kernels/registry.h"

namespace ignis {
namespace {

using kernel_cases::KernelCase;
using kernels::Isa;
using kernels::KernelDef;

constexpr size_t kGuardBytes = 256;
constexpr uint32_t kGuardBits = 0x7fc0dead;  // a NaN no kernel produces

// Every kernel that is not a reference: optimized (ISA) and composed ones.
std::vector<const KernelDef*> optimized_kernels() {
  std::vector<const KernelDef*> defs;
  for (const KernelDef& d : kernels::KernelRegistry::global().all())
    if (d.role == kernels::KernelRole::Optimized || d.role == kernels::KernelRole::Composed) defs.push_back(&d);
  return defs;
}

const KernelDef* reference_kernel(const KernelDef& def, int64_t opset, DType type) {
  return kernels::KernelRegistry::global().reference(def.domain, def.op_type, opset, type);
}

uint32_t case_seed(std::string_view op, size_t index) {
  uint32_t h = 2166136261u;  // FNV-1a of the op name, then the case index
  for (char ch : op) h = (h ^ static_cast<uint8_t>(ch)) * 16777619u;
  return (h ^ static_cast<uint32_t>(index)) * 16777619u % 1000000007u;
}

std::optional<uint32_t> seed_filter() {
  const char* v = std::getenv("IGNIS_CONSISTENCY_SEED");
  if (!v || !*v) return std::nullopt;
  return static_cast<uint32_t>(std::strtoul(v, nullptr, 10));
}

// float32: uniform in [-1, 1]; uint8 / int8: uniform over the whole type; or uniform in
// `range` when it is set (lo <= hi).
Tensor random_input(DType dtype, const Shape& shape, uint32_t seed, std::pair<double, double> range) {
  Tensor t = Tensor::empty(dtype, shape);
  std::mt19937 rng(seed);
  const bool ranged = range.first <= range.second;
  if (dtype == DType::U8 || dtype == DType::I8 || dtype == DType::I32) {
    const auto lo = static_cast<int64_t>(ranged ? range.first : dtype == DType::I8 ? -128 : 0);
    const auto hi = static_cast<int64_t>(ranged ? range.second : dtype == DType::I8 ? 127 : 255);
    std::uniform_int_distribution<int64_t> dist(lo, hi);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t v = dist(rng);
      if (dtype == DType::U8) t.data_as<uint8_t>()[i] = static_cast<uint8_t>(v);
      else if (dtype == DType::I8) t.data_as<int8_t>()[i] = static_cast<int8_t>(v);
      else t.data_as<int32_t>()[i] = static_cast<int32_t>(v);
    }
    return t;
  }
  std::uniform_real_distribution<float> dist(ranged ? static_cast<float>(range.first) : -1.0f,
                                             ranged ? static_cast<float>(range.second) : 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

DType input_dtype(const KernelCase& c, size_t i) { return i < c.input_dtypes.size() ? c.input_dtypes[i] : DType::F32; }

// An output tensor over a buffer filled with NaN (float32) or 0xA5 bytes (other types) and
// followed by a guard region.
class GuardedOutput {
 public:
  GuardedOutput(DType dtype, const Shape& shape)
      : bytes_(static_cast<size_t>(shape.numel()) * dtype_size(dtype)),
        buf_(static_cast<uint8_t*>(aligned_malloc(bytes_ + kGuardBytes)), aligned_free) {
    if (dtype == DType::F32) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      for (size_t i = 0; i < bytes_; i += sizeof(float)) std::memcpy(buf_.get() + i, &nan, sizeof(float));
    } else {
      std::memset(buf_.get(), 0xA5, bytes_);
    }
    for (size_t i = 0; i < kGuardBytes; i += sizeof(kGuardBits)) std::memcpy(buf_.get() + bytes_ + i, &kGuardBits, sizeof(kGuardBits));
    tensor_ = Tensor::view(dtype, shape, static_cast<void*>(buf_.get()));
  }
  Tensor& tensor() { return tensor_; }
  bool guard_intact() const {
    for (size_t i = 0; i < kGuardBytes; i += sizeof(kGuardBits)) {
      uint32_t bits;
      std::memcpy(&bits, buf_.get() + bytes_ + i, sizeof(bits));
      if (bits != kGuardBits) return false;
    }
    return true;
  }

 private:
  size_t bytes_;
  std::unique_ptr<uint8_t, void (*)(void*)> buf_;
  Tensor tensor_;
};

struct Prepared {
  std::vector<Tensor> inputs;
  std::vector<const Tensor*> input_ptrs;
  std::vector<DType> dtypes;
  std::vector<ir::ValueType> output_types;
};

// An input with the case's exact values (float32 or int64).
Tensor exact_input(DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor t = Tensor::empty(dtype, shape);
  for (int64_t i = 0; i < t.numel() && i < static_cast<int64_t>(values.size()); ++i) {
    if (dtype == DType::I64) t.data_as<int64_t>()[i] = static_cast<int64_t>(values[i]);
    else t.data_as<float>()[i] = static_cast<float>(values[i]);
  }
  return t;
}

Result<Prepared> prepare(const KernelCase& c, uint32_t seed) {
  Prepared p;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    p.inputs.push_back(input_dtype(c, i) == DType::Undefined ? Tensor()
                       : i < c.input_values.size() && !c.input_values[i].empty()
                           ? exact_input(input_dtype(c, i), c.inputs[i], c.input_values[i])
                           : random_input(input_dtype(c, i), c.inputs[i], seed + static_cast<uint32_t>(i),
                                          i < c.input_ranges.size() ? c.input_ranges[i]
                                                                    : std::pair<double, double>{1.0, 0.0}));
  std::vector<ir::ValueType> types;
  for (const Tensor& t : p.inputs) types.push_back({t.dtype(), t.shape()});
  std::vector<const ir::ValueType*> type_ptrs;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const bool omitted = input_dtype(c, i) == DType::Undefined;
    type_ptrs.push_back(omitted ? nullptr : &types[i]);
    p.input_ptrs.push_back(omitted ? nullptr : &p.inputs[i]);
    p.dtypes.push_back(omitted ? DType::Undefined : p.inputs[i].dtype());
  }
  const auto* schema = ir::OpSchemaRegistry::global().find(c.domain, c.op_type, c.opset);
  if (!schema) return unsupported(str_cat("no schema for ", c.op_type));
  ir::InferContext ictx("consistency", c.op_type, c.opset, c.attrs, type_ptrs, p.input_ptrs, c.outputs);
  IGNIS_RETURN_IF_ERROR(schema->infer(ictx));
  p.output_types = ictx.outputs();
  return p;
}

// What a kernel is made from: inputs listed in `constants` are visible at creation, and with
// `shapes` so are the input shapes (as a plan gives them).
struct CreationInputs {
  std::vector<const Tensor*> known;
  std::vector<Shape> shapes;

  CreationInputs(const Prepared& p, const std::vector<int>& constants, bool with_shapes)
      : known(p.inputs.size(), nullptr) {
    for (int i : constants)
      if (i < static_cast<int>(known.size())) known[i] = &p.inputs[i];
    if (with_shapes)
      for (const Tensor& t : p.inputs) shapes.push_back(t.shape());
  }
  kernels::KernelInit init(const KernelCase& c, const Prepared& p) const {
    return {c.attrs, c.opset, p.dtypes, known, shapes};
  }
};

// Runs `def` on the prepared case, made from CreationInputs(p, constants, shapes) and, with
// `tactic`, that tactic named (KernelInit::tactic).
Result<std::vector<Tensor>> run_kernel(const KernelDef& def, const KernelCase& c, const Prepared& p,
                                       const std::vector<int>& constants, bool shapes, ThreadPool* pool,
                                       std::string* guard_error, std::string_view tactic = {}) {
  const CreationInputs made_from(p, constants, shapes);
  kernels::KernelInit init = made_from.init(c, p);
  init.tactic = tactic;
  IGNIS_ASSIGN_OR_RETURN(auto kernel, kernels::make_kernel(def, init));
  std::vector<std::unique_ptr<GuardedOutput>> outs;
  std::vector<Tensor*> out_ptrs;
  for (const auto& vt : p.output_types) {
    outs.push_back(std::make_unique<GuardedOutput>(vt.dtype, vt.shape));
    out_ptrs.push_back(&outs.back()->tensor());
  }
  kernels::Scratch scratch;
  kernels::KernelContext ctx(c.attrs, c.opset, p.input_ptrs, out_ptrs, pool, &scratch);
  IGNIS_RETURN_IF_ERROR(kernel->run(ctx));
  std::vector<Tensor> results;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i]->guard_intact()) *guard_error = str_cat("output ", i, " was written past its end");
    results.push_back(outs[i]->tensor().clone());
  }
  return results;
}

// The tactics `def` offers for the case with its weights constant and the plan's shapes given
// (as a plan measuring them would make it).
std::vector<std::string> tactics_of(const KernelDef& def, const KernelCase& c, const Prepared& p) {
  if (def.tactics == nullptr) return {};
  const CreationInputs made_from(p, c.weight_inputs, true);
  std::vector<std::string> out;
  for (std::string_view t : def.tactics(made_from.init(c, p))) out.emplace_back(t);
  return out;
}

// The error scale a named tactic's method adds to a case's own: the Winograd ones sum
// transformed products that the transforms scale up (tests/kernels/cases/conv_winograd.cc).
double tactic_error_scale(std::string_view tactic) { return tactic.starts_with("winograd") ? 8.0 : 1.0; }

// Empty when equal within tolerance, else a description of the first bad element.
std::string compare(const Tensor& got, const Tensor& want, int64_t depth, double error_scale) {
  if (!(got.shape() == want.shape())) return str_cat("shape ", got.shape().str(), " vs ", want.shape().str());
  if (got.dtype() != want.dtype()) return str_cat("dtype ", dtype_name(got.dtype()), " vs ", dtype_name(want.dtype()));
  if (got.dtype() != DType::F32) {  // integers: exact
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double g = load_as_double(got.dtype(), got.data(), i), w = load_as_double(want.dtype(), want.data(), i);
      if (g != w) return str_cat("element ", i, ": got ", g, ", reference ", w);
    }
    return {};
  }
  const float* g = got.data_as<float>();
  const float* w = want.data_as<float>();
  double max_ref = 0;
  for (int64_t i = 0; i < want.numel(); ++i) max_ref = std::max(max_ref, std::fabs(static_cast<double>(w[i])));
  const double tol = error_scale * kernel_cases::tolerance(depth, max_ref);
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double diff = std::fabs(static_cast<double>(g[i]) - static_cast<double>(w[i]));
    if (std::isnan(g[i]) != std::isnan(w[i]) || diff > tol)
      return str_cat("element ", i, ": got ", g[i], ", reference ", w[i], " (|diff| ", diff, " > tolerance ", tol, ")");
  }
  return {};
}

class KernelConsistency : public ::testing::TestWithParam<const KernelDef*> {};

TEST_P(KernelConsistency, MatchesReference) {
  const KernelDef& def = *GetParam();
  if (!kernels::isa_available(def.isa)) GTEST_SKIP() << def.id << ": this CPU lacks the kernel's ISA";
  kernel_cases::CaseGenerator generator = nullptr;
  for (const auto& entry : kernel_cases::case_generators())
    if (entry.domain == def.domain && entry.op_type == def.op_type) generator = entry.generate;
  ASSERT_NE(generator, nullptr) << def.id << ": no case generator for " << def.op_type
                                << " (add one under tests/kernels/cases/)";
  const std::optional<uint32_t> only = seed_filter();
  ThreadPool pool(2);
  const std::vector<KernelCase> cases = generator();
  int checked = 0;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const KernelCase& c = cases[ci];
    const uint32_t seed = case_seed(c.op_type, ci);
    if (only && *only != seed) continue;
    if (c.domain != def.domain || c.opset < def.since_opset || c.opset > def.until_opset) continue;
    const DType type = input_dtype(c, static_cast<size_t>(def.type_input));
    if (!def.types.contains(type)) continue;
    const std::string where = str_cat(def.id, " on ", c.op_type, " ", c.label, " (seed ", seed, ")");
    const KernelDef* ref = reference_kernel(def, c.opset, type);
    ASSERT_NE(ref, nullptr) << where << ": no reference kernel";
    auto prepared = prepare(c, seed);
    ASSERT_TRUE(prepared.has_value()) << where << ": " << prepared.error().to_string();
    std::string guard_error;
    auto want = run_kernel(*ref, c, *prepared, {}, false, nullptr, &guard_error);
    ASSERT_TRUE(want.has_value()) << where << ": reference failed: " << want.error().to_string();
    // Weights at run time, weights as constants, and weights as constants with the plan's
    // input shapes (kernels may choose a weight layout by them), by the kernel's rules; then
    // the last with each tactic the kernel offers there named (as a tuning cache names it).
    std::vector<std::pair<int, std::string>> modes = {{0, ""}, {1, ""}, {2, ""}};
    if (!c.weight_inputs.empty())
      for (std::string& t : tactics_of(def, c, *prepared)) modes.emplace_back(2, std::move(t));
    for (const auto& [known, tactic] : modes) {
      if (known > 0 && c.weight_inputs.empty()) continue;
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        const std::string mode =
            str_cat(known == 0 ? "run-time weights" : "constant weights", known == 2 ? " and shapes" : "",
                    tactic.empty() ? "" : str_cat(", tactic ", tactic), p ? ", 2 threads" : ", no pool");
        guard_error.clear();
        auto got = run_kernel(def, c, *prepared, known > 0 ? c.weight_inputs : std::vector<int>{}, known == 2, p,
                              &guard_error, tactic);
        ASSERT_TRUE(got.has_value()) << where << " [" << mode << "]: " << got.error().to_string();
        EXPECT_TRUE(guard_error.empty()) << where << " [" << mode << "]: " << guard_error;
        ASSERT_EQ(got->size(), want->size()) << where;
        for (size_t o = 0; o < got->size(); ++o) {
          const std::string diff =
              compare((*got)[o], (*want)[o], c.depth, std::max(c.error_scale, tactic_error_scale(tactic)));
          EXPECT_TRUE(diff.empty()) << where << " [" << mode << "] output " << o << ": " << diff;
        }
        ++checked;
      }
    }
  }
  if (!only) {
    EXPECT_GT(checked, 0) << def.id << ": no case matched its opset range and types";
  }
}

std::string test_name(const ::testing::TestParamInfo<const KernelDef*>& info) {
  std::string name(info.param->id);
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, KernelConsistency, ::testing::ValuesIn(optimized_kernels()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KernelConsistency);

}  // namespace
}  // namespace ignis
