// SPDX-License-Identifier: Apache-2.0
#include "runtime/batch_slicing.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

namespace ignis::runtime {

namespace {

// How an op's inputs relate to the batch, for the ops batch slicing knows.
enum class Form {
  None,       // not known to be per-sample
  Data,       // the inputs listed in `data` are batch-indexed; every other input is a parameter
  Broadcast,  // elementwise with numpy broadcasting: batch-indexed where the input has the
              // output's rank and the batch as dimension 0, else broadcast along it
};

struct OpForm {
  Form form = Form::None;
  unsigned data = 0;  // Form::Data: bit i set when input i is batch-indexed
};

OpForm form_of(const ir::Node& n) {
  static constexpr std::string_view kUnary[] = {
      "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu",  "Selu", "Softplus",
      "Exp",  "Log",       "Sqrt", "Abs",     "Neg",  "Reciprocal",  "Erf",       "Floor", "Ceil", "Identity"};
  static constexpr std::string_view kBinary[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "PRelu", "Sum", "Mean"};
  // Each output sample from its input sample; the other inputs are weights or scalars.
  static constexpr std::string_view kSampleOps[] = {"Conv",          "ConvTranspose",     "AveragePool",
                                                    "GlobalAveragePool", "GlobalMaxPool", "LpPool",
                                                    "GlobalLpPool",  "InstanceNormalization", "LRN",
                                                    "DepthToSpace",  "SpaceToDepth"};
  const auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), n.op_type) != std::end(list); };
  if (n.domain == "ai.ignis") {
    if (n.op_type == "FusedConv") return {Form::Data, 0b1001};
    if (n.op_type == "BlockedConv") return {Form::Data, 0b11001};  // S is [N, C, 1, 1]
    if (n.op_type == "BlockChannels" || n.op_type == "UnblockChannels" || n.op_type == "BlockedGlobalAveragePool" ||
        n.op_type == "BlockedMaxPool" ||
        n.op_type == "Gelu")
      return {Form::Data, 0b1};
    return {};
  }
  if (!n.domain.empty()) return {};
  if (in(kUnary)) return {Form::Data, 0b1};
  if (in(kBinary)) return {Form::Broadcast};
  if (in(kSampleOps)) return {Form::Data, 0b1};
  // MaxPool's Indices count across the whole tensor (the batch offset included), and
  // BatchNormalization's extra outputs are training statistics over the batch.
  if ((n.op_type == "MaxPool" || n.op_type == "BatchNormalization") && n.outputs.size() <= 1) return {Form::Data, 0b1};
  return {};
}

// Concat joins samples along another axis; the axis is normalized against the output rank.
bool concat_per_sample(const ir::Node& n, int rank) {
  const Attribute* a = n.attrs.find("axis");
  if (a == nullptr || a->kind != Attribute::Kind::Int) return false;
  const int64_t axis = a->i < 0 ? a->i + rank : a->i;
  return axis > 0 && axis < rank;
}

// Plain buffers of whole bytes per element: a sample is then a contiguous byte range.
bool sliceable_dtype(DType t) { return dtype_is_plain(t) && dtype_bits(t) % 8 == 0; }

size_t bytes_of(const ir::ValueType& t) {
  const int64_t n = t.shape.numel();
  return n <= 0 ? 0 : static_cast<size_t>(n) * dtype_size(t.dtype);
}

// The L3 that CPU 0 shares, as Linux describes it ("32768K"); 0 when unknown. Not
// sysconf(_SC_LEVEL3_CACHE_SIZE): on an EPYC guest glibc reports the whole package's 384 MiB,
// while the L3 one core shares is 32 MiB; thresholds from 384 MiB (a run from 64 MiB) would
// leave mobilenet_v2 at batch 8 layer by layer (2.19 ms per image against 1.67 sliced).
size_t cpu0_l3_bytes() {
  std::ifstream level("/sys/devices/system/cpu/cpu0/cache/index3/level");
  std::ifstream size("/sys/devices/system/cpu/cpu0/cache/index3/size");
  int lv = 0;
  std::string text;
  if (!(level >> lv) || lv != 3 || !(size >> text) || text.empty()) return 0;
  size_t unit = 1;
  if (text.back() == 'K') unit = size_t{1} << 10;
  else if (text.back() == 'M') unit = size_t{1} << 20;
  const size_t n = std::strtoull(text.c_str(), nullptr, 10);
  return n * unit;
}

}  // namespace

SlicingOptions slicing_options_for_cache(size_t l3_bytes) {
  SlicingOptions o;
  if (l3_bytes == 0) return o;
  constexpr size_t kMiB = size_t{1} << 20;
  o.min_batch_bytes = std::clamp(l3_bytes / 2, 4 * kMiB, 64 * kMiB);
  o.slice_bytes = std::clamp(l3_bytes / 4, 2 * kMiB, 32 * kMiB);
  return o;
}

SlicingOptions slicing_options_from_env() {
  static const size_t detected = cpu0_l3_bytes();
  // IGNIS_BATCH_SLICING_L3 (bytes) stands in for the detected L3: the same plan on every
  // machine, for tests and comparisons across CPUs.
  const char* l3_env = std::getenv("IGNIS_BATCH_SLICING_L3");
  const size_t l3 = l3_env != nullptr ? static_cast<size_t>(std::strtoull(l3_env, nullptr, 10)) : detected;
  SlicingOptions o = slicing_options_for_cache(l3);
  const char* v = std::getenv("IGNIS_BATCH_SLICING");
  o.enabled = !(v != nullptr && std::strcmp(v, "0") == 0);
  return o;
}

std::optional<PerSampleStep> per_sample_step(const ir::Node& node, std::span<const ir::ValueType* const> inputs,
                                             std::span<const Tensor* const> constants,
                                             std::span<const ir::ValueType> outputs) {
  if (outputs.empty() || outputs[0].shape.rank() < 1) return std::nullopt;
  const int rank = outputs[0].shape.rank();
  const int64_t batch = outputs[0].shape[0];
  if (batch <= 1) return std::nullopt;
  OpForm f = form_of(node);
  if (f.form == Form::None && node.domain.empty() && node.op_type == "Concat" && concat_per_sample(node, rank))
    f.form = Form::Broadcast;  // every input has the output's rank; each is sliced below
  if (f.form == Form::None) return std::nullopt;

  PerSampleStep step;
  step.batch = batch;
  step.sliced.assign(inputs.size(), false);
  for (const ir::ValueType& o : outputs) {
    if (o.dtype == DType::Undefined) continue;  // an omitted optional output
    if (o.shape.rank() < 1 || o.shape[0] != batch || !sliceable_dtype(o.dtype)) return std::nullopt;
    step.image_bytes += bytes_of(o) / static_cast<size_t>(batch);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::ValueType* t = inputs[i];
    if (t == nullptr) continue;
    const bool batched = t->shape.rank() >= 1 && t->shape[0] == batch && sliceable_dtype(t->dtype);
    bool slice = false;
    if (f.form == Form::Data) {
      slice = i < 32 && ((f.data >> i) & 1u) != 0;
      if (slice && !batched) return std::nullopt;
    } else {
      slice = batched && t->shape.rank() == rank;
      // Not sliced: must broadcast along the batch (fewer dimensions, or 1 in dimension 0).
      if (!slice && !(t->shape.rank() < rank || t->shape[0] == 1)) return std::nullopt;
    }
    if (!slice && constants[i] == nullptr) return std::nullopt;  // a run-time operand shared by every sample
    step.sliced[i] = slice;
    if (slice) step.image_bytes += bytes_of(*t) / static_cast<size_t>(batch);
  }
  return step;
}

std::vector<SliceRun> find_slice_runs(std::span<const std::optional<PerSampleStep>> steps,
                                      const SlicingOptions& options) {
  std::vector<SliceRun> runs;
  if (!options.enabled) return runs;
  const auto batch_bytes = [&](size_t s) { return steps[s]->image_bytes * static_cast<size_t>(steps[s]->batch); };
  // With hysteresis: a run starts and ends at steps over min_batch_bytes, and carries on
  // through steps over half of it (a projection between two wide layers), so that one
  // narrower layer does not send the batch out to memory and back.
  const auto carries = [&](size_t s, int64_t batch) {
    return steps[s] && steps[s]->batch == batch && batch_bytes(s) >= options.min_batch_bytes / 2;
  };
  const auto wide = [&](size_t s) { return batch_bytes(s) >= options.min_batch_bytes; };
  for (size_t s = 0; s < steps.size();) {
    if (!(steps[s] && steps[s]->batch > 1 && wide(s))) {
      ++s;
      continue;
    }
    const int64_t batch = steps[s]->batch;
    size_t e = s;
    while (e < steps.size() && carries(e, batch)) ++e;
    size_t end = e;  // trim the narrower steps at the end
    while (end > s && !wide(end - 1)) --end;
    if (end - s >= 2) {
      size_t widest = 0;
      for (size_t i = s; i < end; ++i) widest = std::max(widest, steps[i]->image_bytes);
      const int64_t fit = static_cast<int64_t>(options.slice_bytes / std::max<size_t>(widest, 1));
      runs.push_back({static_cast<int>(s), static_cast<int>(end), batch, std::clamp<int64_t>(fit, 1, batch)});
    }
    s = e;
  }
  return runs;
}

}  // namespace ignis::runtime
