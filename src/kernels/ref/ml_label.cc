// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the ai.onnx.ml ops that map labels: LabelEncoder and ZipMap (schemas in
// src/ir/ops/ml_label.cc).
//
// LabelEncoder's table is read once, when the kernel is made (core/label_encoder), into a hash
// of its keys. Where onnxruntime and the ONNX reference differ, onnxruntime is followed: the
// first of duplicate keys wins, and only version 4 matches NaN keys. Numeric keys compare by
// value, so -0.0 and 0.0 are one key.
//
// ZipMap makes one map per row, its keys the class labels (one tensor, shared by every map:
// containers never change once made) and its values a copy of the row.
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/label_encoder.h"
#include "core/onnx_op_versions.h"
#include "kernels/ref/ml_internal.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

namespace {

class LabelEncoderKernel final : public Kernel {
 public:
  explicit LabelEncoderKernel(LabelEncoderTable table) : t_(std::move(table)) {
    const Tensor& k = t_.keys;
    for (int64_t i = 0; i < k.numel(); ++i) {
      if (k.dtype() == DType::String) strings_.emplace(k.data_as<const std::string>()[i], i);
      else if (dtype_is_integer(k.dtype())) ints_.emplace(load_as_int64(k.dtype(), k.data(), i), i);
      else if (const double v = load_as_double(k.dtype(), k.data(), i); !std::isnan(v)) reals_.emplace(v, i);
      else if (t_.nan_matches_nan && nan_ < 0) nan_ = i;
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const bool strings_out = y.dtype() == DType::String;
    const size_t esize = dtype_size(y.dtype());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t k = find(x, i);
      const Tensor& from = k >= 0 ? t_.values : t_.default_value;
      const int64_t at = k >= 0 ? k : 0;
      if (strings_out)
        y.data_as<std::string>()[i] = from.data_as<const std::string>()[at];
      else
        std::memcpy(static_cast<std::byte*>(y.data()) + i * static_cast<int64_t>(esize),
                    static_cast<const std::byte*>(from.data()) + at * static_cast<int64_t>(esize), esize);
    }
    return Status::ok();
  }

 private:
  // Index in the table of element i of x (whose dtype is the keys'), or -1.
  int64_t find(const Tensor& x, int64_t i) const {
    if (x.dtype() == DType::String) {
      auto it = strings_.find(x.data_as<const std::string>()[i]);
      return it == strings_.end() ? -1 : it->second;
    }
    if (dtype_is_integer(x.dtype())) {
      auto it = ints_.find(load_as_int64(x.dtype(), x.data(), i));
      return it == ints_.end() ? -1 : it->second;
    }
    const double v = load_as_double(x.dtype(), x.data(), i);
    if (std::isnan(v)) return nan_;
    auto it = reals_.find(v);
    return it == reals_.end() ? -1 : it->second;
  }

  LabelEncoderTable t_;
  std::unordered_map<std::string, int64_t> strings_;
  std::unordered_map<int64_t, int64_t> ints_;
  std::map<double, int64_t> reals_;  // ordered: -0.0 and 0.0 are one key
  int64_t nan_ = -1;
};

Result<std::unique_ptr<Kernel>> make_label_encoder(const KernelInit& init) {
  const int64_t version = onnx_op_version(kMl, "LabelEncoder", init.opset);
  IGNIS_ASSIGN_OR_RETURN(LabelEncoderTable table, read_label_encoder(init.attrs, version, init.input_dtypes[0]));
  return std::unique_ptr<Kernel>(std::make_unique<LabelEncoderKernel>(std::move(table)));
}

class ZipMapKernel final : public Kernel {
 public:
  explicit ZipMapKernel(Tensor labels) : labels_(std::move(labels)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t c = labels_.numel();
    const int64_t rows = x.rank() == 1 ? 1 : x.dim(0);
    std::vector<Tensor> maps;
    maps.reserve(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      Tensor values = Tensor::empty(DType::F32, Shape{c});
      std::memcpy(values.data(), x.data_as<const float>() + r * c, static_cast<size_t>(c) * sizeof(float));
      maps.push_back(Tensor::map(labels_, std::move(values)));
    }
    ctx.output(0) = Tensor::sequence(DType::Map, std::move(maps));
    return Status::ok();
  }

 private:
  Tensor labels_;  // [C], int64 or string
};

Result<std::unique_ptr<Kernel>> make_zipmap(const KernelInit& init) {
  Tensor labels;
  if (init.attrs.has("classlabels_strings")) {
    const std::vector<std::string> names = init.attrs.get_strings("classlabels_strings");
    labels = Tensor::empty(DType::String, Shape{static_cast<int64_t>(names.size())});
    for (size_t i = 0; i < names.size(); ++i) labels.data_as<std::string>()[i] = names[i];
  } else {
    const std::vector<int64_t> ids = init.attrs.get_ints("classlabels_int64s");
    labels = Tensor::empty(DType::I64, Shape{static_cast<int64_t>(ids.size())});
    if (!ids.empty()) std::memcpy(labels.data(), ids.data(), ids.size() * sizeof(int64_t));
  }
  return std::unique_ptr<Kernel>(std::make_unique<ZipMapKernel>(std::move(labels)));
}

}  // namespace

void register_ml_label(KernelRegistry& r) {
  r.add({.domain = kMl,
         .op_type = "LabelEncoder",
         .types = {DType::String, DType::I64, DType::F32, DType::I32, DType::I16, DType::F64},
         .id = "ref/label_encoder",
         .factory = make_label_encoder});
  r.add({.domain = kMl, .op_type = "ZipMap", .types = {DType::F32}, .id = "ref/zipmap", .factory = make_zipmap});
}

}  // namespace ignis::kernels::ref
