// SPDX-License-Identifier: Apache-2.0
// Symmetric int8 weight quantization, per tensor or per slice along one axis.
#include "compress/int8_weights.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/channel_split.h"

namespace ignis::compress {

Int8Weight quantize_int8_symmetric(const Tensor& w, int axis) {
  const float* x = w.data_as<float>();
  const ChannelSplit split = axis >= 0 ? ChannelSplit(w.shape(), axis) : ChannelSplit::whole(w.shape());
  std::vector<float> channel_max(static_cast<size_t>(split.channels), 0.0f);
  split.for_each([&](int64_t c, int64_t i) {
    float& m = channel_max[static_cast<size_t>(c)];
    m = std::max(m, std::fabs(x[i]));
  });

  Int8Weight out;
  out.scale = axis >= 0 ? Tensor::empty(DType::F32, Shape{split.channels}) : Tensor::empty(DType::F32, Shape{});
  out.zero = Tensor::zeros(DType::I8, out.scale.shape());
  float* s = out.scale.data_as<float>();
  for (int64_t c = 0; c < split.channels; ++c) {
    const float m = channel_max[static_cast<size_t>(c)];
    s[c] = m > 0.0f ? m / 127.0f : 1.0f;
    out.max_abs = std::max(out.max_abs, m);
  }

  out.q = Tensor::empty(DType::I8, w.shape());
  int8_t* q = out.q.data_as<int8_t>();
  split.for_each([&](int64_t c, int64_t i) {
    const float sc = s[c];
    const float r = std::clamp(std::nearbyint(x[i] / sc), -127.0f, 127.0f);
    q[i] = static_cast<int8_t>(r);
    out.zeros += q[i] == 0;
    out.max_abs_error = std::max(out.max_abs_error, std::fabs(x[i] - r * sc));
  });
  return out;
}

WeightChange int8_weight_change(const std::string& value, const std::string& op_type, std::string scheme,
                                const Tensor& w, const Int8Weight& q) {
  WeightChange change;
  change.value = value;
  change.op_type = op_type;
  change.scheme = std::move(scheme);
  change.elements = w.numel();
  change.zeros_before = std::count(w.data_as<float>(), w.data_as<float>() + w.numel(), 0.0f);
  change.zeros_after = q.zeros;
  change.max_abs = q.max_abs;
  change.max_abs_error = q.max_abs_error;
  return change;
}

}  // namespace ignis::compress
