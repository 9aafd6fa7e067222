// SPDX-License-Identifier: Apache-2.0
// Keeps runs of convolutions in the blocked channel layout (docs/ops_ai_ignis.md, "Blocked
// channel layout"): every float32 2-D Conv / FusedConv the blocked kernels run directly
// (pointwise: 1x1, unpadded, one group, any stride; depthwise: one channel per group, any
// dilation; stems: ungrouped, undilated, at most 64 input taps (160 over at most 4 channels), read
// plain; where the context says so, dense and grouped windows (AVX2's direct kernel; on
// AVX-512 strided ones only) and 3x3s at unit stride (AVX-512's Winograd); constant W and B)
// becomes an ai.ignis BlockedConv; a BlockChannels node blocks
// each value such a convolution reads from outside the run, and an UnblockChannels node gives
// every value read outside the run (or a graph output) back its NCHW form under its own name.
// So consumers outside the run are untouched, and a tensor crosses between the layouts once
// per run edge, not once per convolution. A graph output named in PassContext::blocked_outputs
// and read nowhere outside the run stays blocked under its own name (not an edge).
// Squeeze-excitation stays inside the run: a GlobalAveragePool of a blocked value reads it blocked (BlockedGlobalAveragePool, plain
// [N, C, 1, 1] output), and Mul(v, gate [N, C, 1, 1]) feeding only a pointwise convolution
// becomes that BlockedConv's S input (the convolution reads v scaled), so the gated tensor is
// never materialized. A MaxPool (2-D, Y only) of a blocked value pools it blocked
// (BlockedMaxPool), and a Concat along the channels of values whose channel counts are whole
// blocks, one of them blocked, concatenates the blocks (the same Concat on the 5-D tensors,
// which the memory plan makes in place), so pools and concatenations (squeezenet's fire
// modules, inception blocks, densenet's blocks) do not cut a run.
// Only connected runs of two or more convolutions whose work outweighs their edge reorders
// are converted (below): a lone convolution would pay two reorders for one faster kernel;
// a stem with a wide window pays for its one reorder (below). Runs only when the context says the blocked kernels are
// fast here (PassContext::blocked_layout).
// Exactness: BlockedConv computes the same sums in the same order per output value as the
// NCHW kernels' reference (the kernels differ only in the order of the multiply-adds, as the
// NCHW kernels do among themselves), and the reorders only move values.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/rewrite.h"
#include "passes/graph_facts.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

constexpr int64_t kBlock = 16;

bool all_equal(const AttrMap& attrs, const char* name, int64_t value) {
  const std::vector<int64_t> v = attrs.get_ints(name);
  return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == value; });
}

// A float32 2-D Conv / FusedConv with constant W (and B): its W, else null.
const Tensor* conv_weights(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n) {
  const bool fused = is_ignis(n, "FusedConv");
  if (!(fused || is_onnx(n, "Conv")) || n.outputs.size() != 1 || n.inputs.size() < 2) return nullptr;
  if (facts.dtype(n.inputs[0]) != DType::F32 || facts.rank(n.inputs[0]) != 4) return nullptr;
  const Tensor* w = ir::constant_value(g, n.inputs[1]);
  if (w == nullptr || w->dtype() != DType::F32 || w->rank() != 4) return nullptr;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && ir::constant_value(g, n.inputs[2]) == nullptr) return nullptr;
  if (!fused && n.inputs.size() > 3) return nullptr;
  return w;
}

// A stem: an ungrouped, undilated convolution over a few input channels (an image's 3), which
// the blocked kernels read in the plain layout (plain_input = 1) and write blocked.
bool plain_stem(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n) {
  // Input channels x kernel window: up to 64 taps any, up to 160 (kBlockedPlainMaxTaps: a 7x7
  // window) over an image's few channels.
  constexpr int64_t kMaxTaps = 64, kMaxImageTaps = 160, kImageChannels = 4;
  const Tensor* w = conv_weights(g, facts, n);
  if (w == nullptr || n.attrs.get_int("group", 1) != 1 || !all_equal(n.attrs, "dilations", 1)) return false;
  const int64_t taps = w->dim(1) * w->dim(2) * w->dim(3);
  return w->dim(2) * w->dim(3) > 1 && (taps <= kMaxTaps || (w->dim(1) <= kImageChannels && taps <= kMaxImageTaps));
}

// A 3x3 convolution the NCHW kernels run with Winograd F(4x4) on AVX2 (nn_conv.cc,
// conv_winograd.h: unit strides and dilations, one group, 16 to 256 channels, at least 16
// output tiles of 4x4) and faster than the direct blocked kernel: from 64 input channels. Below
// that Winograd's transforms outweigh its GEMM; one thread, per node, dbnet_detector's 3x3s
// (Winograd in NCHW -> direct blocked): 16 channels at 80x80 547 -> 359 us, 32 at 40x40 439 ->
// 359, 64 at 20x20 356 -> 385 (and resnet50 with every 3x3 direct ran 1.3x slower).
bool nchw_winograd(const GraphFacts& facts, const ir::Node& n, const Tensor& w) {
  constexpr int64_t kMinChannels = 16, kMaxChannels = 256, kMinTiles = 16, kMinInputChannels = 64;
  if (w.dim(2) != 3 || w.dim(3) != 3 || n.attrs.get_int("group", 1) != 1) return false;
  if (!all_equal(n.attrs, "strides", 1) || !all_equal(n.attrs, "dilations", 1)) return false;
  const int64_t cin = w.dim(1), cout = w.dim(0);
  if (cin < kMinInputChannels || cout < kMinChannels || cin > kMaxChannels || cout > kMaxChannels) return false;
  const ValueFact& y = facts[n.outputs[0]];
  if (y.rank != 4 || !y.dims[2].is_fixed() || !y.dims[3].is_fixed()) return true;
  return (y.dims[2].value + 3) / 4 * ((y.dims[3].value + 3) / 4) >= kMinTiles;
}

// Whether node n is a pointwise or depthwise convolution, which the blocked kernels of every
// instruction set run directly on blocked input.
bool blockable(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n) {
  const Tensor* w = conv_weights(g, facts, n);
  if (w == nullptr) return false;
  const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  const int64_t group = n.attrs.get_int("group", 1);
  const int64_t m = w->dim(0), cg = w->dim(1), kh = w->dim(2), kw = w->dim(3);
  // Strided 1x1s too: the kernel copies the positions they read together and runs the
  // pointwise tiles over them (regnet's and resnet's stride-2 projections).
  const bool pointwise = group == 1 && kh == 1 && kw == 1 && all_equal(n.attrs, "pads", 0) &&
                         all_equal(n.attrs, "dilations", 1) && (auto_pad == "NOTSET" || auto_pad == "VALID");
  const bool depthwise = cg == 1 && group == m;
  // A few channels each side (a BatchNormalization of a spectrogram's one channel, made a 1x1
  // convolution) would be padded to a whole block of 16 in and out: left NCHW, so that the
  // stem after it reads its output plain.
  constexpr int64_t kMinChannels = 4;
  if (m < kMinChannels && cg * group < kMinChannels) return false;
  return pointwise || depthwise;
}

// Whether node n is a float32 2-D MaxPool with the Y output only (BlockedMaxPool: MaxPool-12's
// attributes, which older opsets' nodes share when they set no ceil_mode or dilations).
bool poolable(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n) {
  if (!is_onnx(n, "MaxPool") || n.inputs.size() != 1 || n.outputs.empty()) return false;
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty()) return false;
  if (g.opset("") < 10 && (n.attrs.find("ceil_mode") != nullptr || n.attrs.find("dilations") != nullptr)) return false;
  const ValueFact& x = facts[n.inputs[0]];
  return x.dtype == DType::F32 && x.rank == 4 && x.dims[1].is_fixed();
}

// Whether node n is a float32 Concat along the channels of 4-D values whose channel counts are
// whole 16-channel blocks, so that the blocked inputs concatenate block by block.
bool concatenable(const GraphFacts& facts, const ir::Node& n) {
  if (!is_onnx(n, "Concat") || n.inputs.empty() || n.outputs.size() != 1) return false;
  const int64_t axis = n.attrs.get_int("axis", 0);
  if (axis != 1 && axis != -3) return false;
  for (const std::string& v : n.inputs) {
    const ValueFact& x = facts[v];
    if (v.empty() || x.dtype != DType::F32 || x.rank != 4 || !x.dims[1].is_fixed() || x.dims[1].value % kBlock != 0)
      return false;
  }
  return true;
}

// Whether 4-D value v is float32 with its channels whole 16-channel blocks: its blocked form
// then has no padding lanes, so element-wise work on it is the same work on its blocks.
bool whole_blocks(const GraphFacts& facts, const std::string& v) {
  const ValueFact& x = facts[v];
  return !v.empty() && x.dtype == DType::F32 && x.rank == 4 && x.dims[1].is_fixed() && x.dims[1].value % kBlock == 0;
}

// Whether node n is element-wise work that runs unchanged on blocked values (the same op on
// the 5-D tensors): an op on each element alone (Relu, Sigmoid, Clip...) of a whole-block
// value, or Add, Sub, Mul, Div, Max or Min of two whole-block values of one shape (an FPN's
// sums, a residual sum left unfused).
bool elementwise_on_blocks(const GraphFacts& facts, const ir::Node& n) {
  if (n.outputs.size() != 1 || n.inputs.empty() || !whole_blocks(facts, n.inputs[0])) return false;
  if (elementwise_unary(n)) return true;
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  return n.domain.empty() && kBinary.count(n.op_type) && n.inputs.size() == 2 && whole_blocks(facts, n.inputs[1]) &&
         facts.same_shape(n.inputs[0], n.inputs[1]);
}

// The constant target of a Resize (opset >= 11): its scales, or its sizes where scales is
// absent or an empty tensor; null when neither is a constant or both are given.
struct ResizeTarget {
  const Tensor* values = nullptr;
  bool scales = false;
};
ResizeTarget resize_target(const ir::Graph& g, const ir::Node& n) {
  const Tensor* scales = n.inputs.size() > 2 && !n.inputs[2].empty() ? ir::constant_value(g, n.inputs[2]) : nullptr;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && scales == nullptr) return {};
  const bool by_scales = scales != nullptr && scales->numel() > 0;
  const std::string sizes = n.inputs.size() > 3 ? n.inputs[3] : std::string();
  if (by_scales == !sizes.empty()) return {};
  return {by_scales ? scales : ir::constant_value(g, sizes), by_scales};
}

// Whether node n is a Resize (opset >= 11) of a whole-block value over H and W only, nearest
// or linear, with constant scales or sizes: the same Resize of the blocked value with the
// block axis added (scales [1, 1, sh, sw, 1]) resizes each pixel's block of channels whole.
bool resize_on_blocks(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n) {
  if (!is_onnx(n, "Resize") || g.opset("") < 11 || n.inputs.size() < 3 || n.outputs.size() != 1) return false;
  if (!whole_blocks(facts, n.inputs[0])) return false;
  const std::string mode = n.attrs.get_string("mode", "nearest");
  if ((mode != "nearest" && mode != "linear") || n.attrs.get_int("antialias", 0) != 0 ||
      n.attrs.find("axes") != nullptr ||
      n.attrs.get_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
    return false;
  const ResizeTarget target = resize_target(g, n);
  const Tensor* t = target.values;
  if (t == nullptr || t->numel() != 4) return false;
  const ValueFact& x = facts[n.inputs[0]];
  if (target.scales)
    return t->dtype() == DType::F32 && t->data_as<float>()[0] == 1.0f && t->data_as<float>()[1] == 1.0f;
  return t->dtype() == DType::I64 && n.attrs.get_string("keep_aspect_ratio_policy", "stretch") == "stretch" &&
         x.dims[0].is_fixed() && t->data_as<int64_t>()[0] == x.dims[0].value &&
         t->data_as<int64_t>()[1] == x.dims[1].value;
}

// Rewrites Resize n (resize_on_blocks) to read its blocked input: roi dropped (only
// tf_crop_and_resize reads it), the block axis appended to the scales (1) or the sizes
// (channels counted in blocks, then the block), as a new initializer named after output y.
void block_resize(ir::Graph& g, ir::Node& n, const std::string& y) {
  const ResizeTarget target = resize_target(g, n);
  const Tensor& t = *target.values;
  n.inputs.resize(4);
  n.inputs[1].clear();
  if (target.scales) {
    Tensor scales = Tensor::empty(DType::F32, Shape{5});
    std::copy_n(t.data_as<float>(), 4, scales.data_as<float>());
    scales.data_as<float>()[4] = 1.0f;
    n.inputs[2] = ir::unique_value_name(g, y + "_block_scales");
    n.inputs[3].clear();
    g.initializers[n.inputs[2]] = std::move(scales);
    return;
  }
  Tensor sizes = Tensor::empty(DType::I64, Shape{5});
  const int64_t* s4 = t.data_as<int64_t>();
  int64_t* s5 = sizes.data_as<int64_t>();
  s5[0] = s4[0], s5[1] = s4[1] / kBlock, s5[2] = s4[2], s5[3] = s4[3], s5[4] = kBlock;
  n.inputs[2].clear();
  n.inputs[3] = ir::unique_value_name(g, y + "_block_sizes");
  g.initializers[n.inputs[3]] = std::move(sizes);
}

// Whether node n is a strided convolution whose output rows fill at least two of the AVX-512
// direct kernel's 12-position tiles: where that kernel beat the NCHW im2col GEMM (resnet50's
// 3x3 stride-2 convolution to 28x28 outputs, one thread: 2.34 -> 2.11 ms) or matched it and
// kept the run whole (its stride-2 1x1 beside it, which the direct kernel reads in place).
// Narrower outputs run in short tiles that stream the weights once per few positions (the
// 7x7 stage's 3x3: 2.7 -> 8.5 ms).
bool strided_wide_window(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n) {
  constexpr int64_t kMinColumns = 24;
  const Tensor* w = conv_weights(g, facts, n);
  if (w == nullptr || all_equal(n.attrs, "strides", 1)) return false;
  const ValueFact& y = facts[n.outputs[0]];
  return y.rank == 4 && y.dims[3].is_fixed() && y.dims[3].value >= kMinColumns;
}

// Whether node n is a dense or grouped convolution the direct blocked kernel runs (where the
// context says there is one; where it says so for those only, at strides above 1 or with
// groups): no dilation, at most 4608 taps per output (kBlockedDirectMaxTaps), groups of whole
// 16-channel blocks or of 8 channels (as many in as out; of 2 and 4 too where grouped windows
// are taken), and not a 3x3 that Winograd runs faster in NCHW.
bool direct_blockable(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n, const PassContext& ctx) {
  // In bfloat16 the NCHW GEMM runs strided windows with vdpbf16ps, the float32 direct kernel
  // not; where the direct kernel runs in bfloat16 too it takes every dense window, strided or
  // not (resnet50, 2 threads, Zen 4: its 7x7 3x3s 730-760 us against the NCHW GEMM's 860-960).
  const bool strided = ctx.blocked_direct_strided && ctx.precision != Precision::Bf16;
  const bool grouped = ctx.blocked_direct_grouped && n.attrs.get_int("group", 1) > 1;
  const bool taken = ctx.blocked_direct || ctx.blocked_direct_bf16 || grouped ||
                     (strided && strided_wide_window(g, facts, n));
  const Tensor* w = taken ? conv_weights(g, facts, n) : nullptr;
  if (w == nullptr) return false;
  const int64_t group = n.attrs.get_int("group", 1);
  const int64_t m = w->dim(0), cg = w->dim(1), kh = w->dim(2), kw = w->dim(3);
  if (!all_equal(n.attrs, "dilations", 1) || group < 1 || m % group != 0) return false;
  constexpr int64_t kMaxTaps = 4608, kHalfBlock = 8;
  // Groups of 8 channels (regnet_y's) run as groups of one block with zero weights across;
  // so do groups of 2 and 4 (resnext50's first stage: 4x the multiply-adds) where the kernel
  // is ahead on grouped windows.
  if (group > 1 && m == cg * group && kBlock * kh * kw <= kMaxTaps &&
      (cg == kHalfBlock || (ctx.blocked_direct_grouped && cg > 1 && kHalfBlock % cg == 0)))
    return true;
  const bool whole_blocks = group == 1 || (cg % kBlock == 0 && m / group % kBlock == 0);
  return whole_blocks && cg * kh * kw <= kMaxTaps && !nchw_winograd(facts, n, *w);
}

// Whether node n is a 3x3 convolution the AVX-512 blocked kernel runs with Winograd F(4x4)
// (where the context says there is one; nn_conv_blocked.cc, conv_blocked.h): one group, unit
// strides and dilations, 16 to 256 channels each side, and at least 16 output tiles of 4x4
// (14x14 outputs). There it is ahead of the NCHW kernels' F(2x2) and transposed GEMM even with
// a quarter of its tiles' positions past the edge (one thread, the middle of ten 3x3s at
// 14x14, Ice Lake: 32 channels 57 -> 29 us, 64 120 -> 82, 128 396 -> 362, 256 1322 -> 1171);
// at 7x7 (4 tiles) it is not (densenet's last block, 128 -> 32 channels: 69 -> 74 us).
bool winograd_blockable(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n, const PassContext& ctx) {
  constexpr int64_t kMinChannels = 16, kMaxChannels = 256, kMinTiles = 16;
  const Tensor* w = ctx.blocked_winograd ? conv_weights(g, facts, n) : nullptr;
  if (w == nullptr || w->dim(2) != 3 || w->dim(3) != 3 || n.attrs.get_int("group", 1) != 1) return false;
  if (!all_equal(n.attrs, "strides", 1) || !all_equal(n.attrs, "dilations", 1)) return false;
  const int64_t cin = w->dim(1), cout = w->dim(0);
  if (cin < kMinChannels || cout < kMinChannels || cin > kMaxChannels || cout > kMaxChannels) return false;
  const ValueFact& y = facts[n.outputs[0]];
  if (y.rank != 4 || !y.dims[2].is_fixed() || !y.dims[3].is_fixed()) return false;
  return (y.dims[2].value + 3) / 4 * ((y.dims[3].value + 3) / 4) >= kMinTiles;
}

// X of a pointwise candidate given as Mul(x, s), s [N, C, 1, 1] broadcast over x [N, C, H, W].
struct ScaledInput {
  int mul = -1;
  std::string x, s;
};

std::optional<ScaledInput> scaled_input(const ir::Graph& g, const GraphFacts& facts,
                                        const std::unordered_map<std::string, int>& producer,
                                        const std::unordered_map<std::string, std::vector<int>>& consumers,
                                        const ir::Node& conv) {
  const Tensor* w = ir::constant_value(g, conv.inputs[1]);
  if (w->dim(2) != 1 || w->dim(3) != 1 || conv.attrs.get_int("group", 1) != 1) return std::nullopt;
  const std::string& m = conv.inputs[0];
  auto p = producer.find(m);
  auto c = consumers.find(m);
  if (p == producer.end() || c == consumers.end() || c->second.size() != 1 || ir::is_graph_output(g, m))
    return std::nullopt;
  const ir::Node& mul = g.nodes[p->second];
  if (!is_onnx(mul, "Mul") || mul.inputs.size() != 2 || mul.inputs[0] == mul.inputs[1]) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const ValueFact& x = facts[mul.inputs[side]];
    const ValueFact& s = facts[mul.inputs[1 - side]];
    if (x.rank != 4 || s.rank != 4 || x.dtype != DType::F32 || s.dtype != DType::F32) continue;
    if (!x.dims[1].is_fixed() || x.dims[1].value != w->dim(1) || !same_dim(x.dims[0], s.dims[0])) continue;
    if (!(s.dims[1].is_fixed() && s.dims[1].value == w->dim(1) && s.dims[2].is_fixed() && s.dims[2].value == 1 &&
          s.dims[3].is_fixed() && s.dims[3].value == 1))
      continue;
    return ScaledInput{p->second, mul.inputs[side], mul.inputs[1 - side]};
  }
  return std::nullopt;
}

}  // namespace

Result<int> convert_to_blocked_layout(ir::Graph& g, const PassContext& ctx) {
  if (!ctx.blocked_layout) return 0;
  const GraphFacts facts(g);
  const int count = static_cast<int>(g.nodes.size());
  const auto producer = ir::producers(g);
  const auto consumers = ir::consumers(g);

  // Candidates, then connected runs of them (edges: a value a candidate reads blocked produced
  // by another candidate).
  std::vector<bool> candidate(static_cast<size_t>(count), false);
  for (int i = 0; i < count; ++i) candidate[i] = blockable(g, facts, g.nodes[i]);
  // Stems read their input plain; only where it is not a candidate's output.
  std::vector<bool> plain(static_cast<size_t>(count), false);
  for (int i = 0; i < count; ++i) {
    if (candidate[i] || !plain_stem(g, facts, g.nodes[i])) continue;
    auto p = producer.find(g.nodes[i].inputs[0]);
    if (p != producer.end() && candidate[p->second]) continue;
    candidate[i] = plain[i] = true;
  }
  // Then the dense and grouped windows the direct kernel reads blocked, and the 3x3s of the
  // Winograd one.
  for (int i = 0; i < count; ++i)
    if (!candidate[i])
      candidate[i] = direct_blockable(g, facts, g.nodes[i], ctx) || winograd_blockable(g, facts, g.nodes[i], ctx);
  // Then MaxPools and Concats a candidate makes an input of (graph order: producers first).
  // They join their producers' run; a Concat's other inputs are blocked at the run's edge (a
  // densenet block's Concats also read the NCHW pool before it). `conv` tells the
  // convolutions apart.
  std::vector<bool> conv(candidate);
  enum class Joiner { None, Pool, Concat, Elementwise, Resize };
  std::vector<Joiner> joiner(static_cast<size_t>(count), Joiner::None);
  auto made_by_candidate = [&](const std::string& v) {
    auto p = producer.find(v);
    return p != producer.end() && candidate[p->second];
  };
  for (int i = 0; i < count; ++i) {
    const ir::Node& n = g.nodes[i];
    Joiner j = Joiner::None;
    if (poolable(g, facts, n)) j = Joiner::Pool;
    else if (concatenable(facts, n)) j = Joiner::Concat;
    else if (elementwise_on_blocks(facts, n)) j = Joiner::Elementwise;
    else if (resize_on_blocks(g, facts, n)) j = Joiner::Resize;
    if (j == Joiner::None || !std::any_of(n.inputs.begin(), n.inputs.end(), made_by_candidate)) continue;
    joiner[i] = j;
    candidate[i] = true;
  }
  // Pointwise candidates whose X is Mul(v, s) with s [N, C, 1, 1] read nowhere else (a
  // squeeze-excitation gate): they take v as X and s as BlockedConv's S, and the Mul goes.
  std::unordered_map<int, ScaledInput> scaled;
  std::unordered_map<int, int> absorber;  // such a Mul -> its convolution
  for (int i = 0; i < count; ++i) {
    if (!conv[i]) continue;
    const auto sc = scaled_input(g, facts, producer, consumers, g.nodes[i]);
    if (!sc) continue;
    scaled[i] = *sc;
    absorber[sc->mul] = i;
  }
  // The inputs node i reads blocked once converted: a convolution's X (unless read plain) and
  // Z, a MaxPool's X, every input of a Concat.
  auto blocked_reads = [&](int i) {
    std::vector<size_t> ks;
    if (joiner[i] == Joiner::Concat)
      for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k) ks.push_back(k);
    else if (joiner[i] == Joiner::Pool || joiner[i] == Joiner::Resize) ks.push_back(0);
    else if (joiner[i] == Joiner::Elementwise) {
      ks.push_back(0);
      if (!elementwise_unary(g.nodes[i])) ks.push_back(1);  // a binary op reads both blocked
    }
    else if (conv[i]) {
      if (!plain[i]) ks.push_back(0);
      ks.push_back(3);
    }
    return ks;
  };
  // Input k of node i as the blocked node reads it (a scaled convolution reads v); "" when
  // absent.
  auto input_of = [&](int i, size_t k) -> std::string {
    const ir::Node& n = g.nodes[i];
    if (k == 0 && scaled.count(i)) return scaled.at(i).x;
    return k < n.inputs.size() ? n.inputs[k] : std::string();
  };
  // The values node i reads blocked, each with the node that makes it (-1: a graph input or
  // an initializer).
  struct Source {
    std::string value;
    int producer;
  };
  auto blocked_sources = [&](int i) {
    std::vector<Source> out;
    for (size_t k : blocked_reads(i)) {
      std::string v = input_of(i, k);
      if (v.empty()) continue;
      auto it = producer.find(v);
      out.push_back({std::move(v), it == producer.end() ? -1 : it->second});
    }
    return out;
  };
  std::vector<int> root(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) root[i] = i;
  auto find = [&](int i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  for (int i = 0; i < count; ++i) {
    if (!candidate[i]) continue;
    for (const Source& src : blocked_sources(i))
      if (src.producer >= 0 && candidate[src.producer]) root[find(i)] = find(src.producer);
  }
  // Tentatively every run of two or more convolutions; the cost rule below drops the runs that
  // do not pay. A stem with a wide window (resnet's 7x7 over 3 channels) is converted in any
  // case, alone if its run does not pay: its blocked kernel reads the image in place, so the
  // one reorder of its output is cheap next to the kh * kw * c multiply-adds per output it runs
  // faster than the im2col GEMM. A MaxPool or Concat is converted when a converted node makes
  // a value it reads (graph order: producers first).
  constexpr int64_t kWideStemMinTaps = 100;
  std::map<int, int> run_size;
  for (int i = 0; i < count; ++i)
    if (conv[i]) ++run_size[find(i)];
  auto wide_stem = [&](int i) {
    if (!plain[i] || ctx.precision == Precision::Bf16) return false;
    const Tensor* w = conv_weights(g, facts, g.nodes[i]);
    return w->dim(1) * w->dim(2) * w->dim(3) >= kWideStemMinTaps;
  };
  std::vector<bool> convert(static_cast<size_t>(count), false);
  for (int i = 0; i < count; ++i) convert[i] = conv[i] && (run_size[find(i)] >= 2 || wide_stem(i));
  auto convert_joiners = [&] {
    for (int i = 0; i < count; ++i) {
      if (joiner[i] == Joiner::None) continue;
      const std::vector<std::string>& in = g.nodes[i].inputs;
      convert[i] = std::any_of(in.begin(), in.end(), [&](const std::string& v) {
        auto p = producer.find(v);
        return p != producer.end() && convert[p->second];
      });
    }
  };
  convert_joiners();
  // Whether node c is a Mul folded into a converted convolution (it is then not emitted).
  auto folded = [&](int c) {
    auto it = absorber.find(c);
    return it != absorber.end() && convert[it->second];
  };
  // GlobalAveragePool of a converted node's output reads it blocked (BlockedGlobalAveragePool).
  auto blocked_pool = [&](int c) {
    const ir::Node& n = g.nodes[c];
    if (!is_onnx(n, "GlobalAveragePool") || n.inputs.size() != 1 || facts.rank(n.inputs[0]) != 4) return false;
    auto it = producer.find(n.inputs[0]);
    return it != producer.end() && convert[it->second];
  };

  // Whether a converted node's output is also needed in NCHW form.
  auto read_outside = [&](const std::string& v) {
    if (ir::is_graph_output(g, v) && !ctx.blocked_outputs.count(v)) return true;
    auto it = consumers.find(v);
    if (it == consumers.end()) return false;
    for (int c : it->second) {
      if (folded(c)) continue;  // its convolution reads v blocked
      if (blocked_pool(c)) continue;
      if (!convert[c]) return true;
      const ir::Node& n = g.nodes[c];
      const std::vector<size_t> ks = blocked_reads(c);
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k] == v && std::find(ks.begin(), ks.end(), k) == ks.end()) return true;
    }
    return false;
  };
  // A run pays when its convolutions' outputs outweigh the tensors reordered at its edges
  // kReorderWeight times: e.g. mobilenet_v2's one run (51 convolutions, two reorders) does,
  // an efficientnet block cut by its squeeze-excitation (three convolutions, two full-size
  // reorders) does not: there the reorders cost what the blocked kernels save. A run's pools
  // and concatenations count at its edges (what they give out NCHW) but not as its work, nor
  // do wide stems, which pay for themselves (a resnet's stem would otherwise carry the run of
  // its 1x1 convolutions, which the NCHW GEMM runs as fast, into the blocked layout).
  constexpr int64_t kReorderWeight = 4;
  std::map<int, int64_t> edge_elements, work_elements;
  std::set<std::pair<int, std::string>> blocked_at_edge;  // a value read by many is blocked once
  for (int i = 0; i < count; ++i) {
    if (!convert[i]) continue;
    const ir::Node& n = g.nodes[i];
    const int r = find(i);
    auto add = [&](std::map<int, int64_t>& sum, const std::string& v) {
      const int64_t e = facts.elements_per_image(v);
      sum[r] = e < 0 || sum[r] < 0 ? -1 : sum[r] + e;
    };
    for (const Source& src : blocked_sources(i))
      if ((src.producer < 0 || !convert[src.producer]) && blocked_at_edge.emplace(r, src.value).second)
        add(edge_elements, src.value);
    if (read_outside(n.outputs[0])) add(edge_elements, n.outputs[0]);
    if (conv[i] && !wide_stem(i)) add(work_elements, n.outputs[0]);
  }
  for (int i = 0; i < count; ++i) {
    if (!conv[i] || !convert[i]) continue;
    const int r = find(i);
    convert[i] = (edge_elements[r] >= 0 && work_elements[r] >= 0 &&
                  kReorderWeight * edge_elements[r] <= work_elements[r]) ||
                 wide_stem(i);
  }
  convert_joiners();
  const int converted = static_cast<int>(std::count(convert.begin(), convert.end(), true));
  if (converted == 0) return 0;

  // Names of the blocked form of each value a converted node reads or writes: the value's own
  // for a graph output that stays blocked.
  std::unordered_map<std::string, std::string> blocked_name;
  for (int i = 0; i < count; ++i) {
    if (!convert[i] || folded(i) || blocked_pool(i)) continue;
    const std::string& y = g.nodes[i].outputs[0];
    if (ir::is_graph_output(g, y) && ctx.blocked_outputs.count(y) && !read_outside(y)) blocked_name.emplace(y, y);
  }
  for (ValueInfo& o : g.outputs) {
    if (!blocked_name.count(o.name)) continue;
    o.dims.clear();
    o.dim_names.clear();
    o.has_shape = false;
  }
  auto blocked_of = [&](const std::string& v) -> const std::string& {
    auto it = blocked_name.find(v);
    if (it == blocked_name.end()) it = blocked_name.emplace(v, ir::unique_value_name(g, v + "_blocked")).first;
    return it->second;
  };
  auto int_attr = [](int64_t v) {
    Attribute a;
    a.kind = Attribute::Kind::Int;
    a.i = v;
    return a;
  };
  // Values read by converted nodes that come from elsewhere get a BlockChannels.
  std::set<std::string> to_block;
  for (int i = 0; i < count; ++i) {
    if (!convert[i]) continue;
    for (const Source& src : blocked_sources(i))
      if (src.producer < 0 || !convert[src.producer]) to_block.insert(src.value);
  }
  auto block_node = [&](const std::string& v) {
    ir::Node b;
    b.name = ir::unique_value_name(g, v + "/BlockChannels");
    b.op_type = "BlockChannels";
    b.domain = "ai.ignis";
    b.inputs = {v};
    b.outputs = {blocked_of(v)};
    b.attrs.set("block", int_attr(kBlock));
    return b;
  };
  std::vector<ir::Node> out;
  out.reserve(g.nodes.size() + 2 * static_cast<size_t>(converted));
  for (const std::string& v : to_block)
    if (producer.find(v) == producer.end()) out.push_back(block_node(v));  // graph inputs, initializers
  for (int i = 0; i < count; ++i) {
    ir::Node n = g.nodes[i];
    if (folded(i)) continue;
    if (blocked_pool(i)) {
      n.op_type = "BlockedGlobalAveragePool";
      n.domain = "ai.ignis";
      n.attrs.set("channels", int_attr(facts[n.inputs[0]].dims[1].value));
      n.attrs.set("block", int_attr(kBlock));
      n.inputs[0] = blocked_of(n.inputs[0]);
      out.push_back(std::move(n));
      continue;
    }
    if (!convert[i]) {
      out.push_back(std::move(n));
      for (const std::string& v : out.back().outputs)
        if (to_block.count(v)) out.push_back(block_node(v));
      continue;
    }
    const std::string y = n.outputs[0];
    if (joiner[i] == Joiner::Pool) {
      n.op_type = "BlockedMaxPool";
      n.domain = "ai.ignis";
      n.outputs.resize(1);
      n.attrs.set("block", int_attr(kBlock));
    } else if (joiner[i] == Joiner::Concat) {
      n.attrs.set("axis", int_attr(1));  // the block axis of [N, CB, H, W, block]
    } else if (joiner[i] == Joiner::Resize) {
      block_resize(g, n, y);
    } else if (joiner[i] == Joiner::Elementwise) {
      // The same op on the 5-D values.
    } else {
      n.op_type = "BlockedConv";
      n.domain = "ai.ignis";
      if (auto sc = scaled.find(i); sc != scaled.end()) {
        n.inputs[0] = sc->second.x;
        n.inputs.resize(5);
        n.inputs[4] = sc->second.s;
      }
      if (plain[i]) n.attrs.set("plain_input", int_attr(1));
      n.attrs.set("block", int_attr(kBlock));
    }
    for (size_t k : blocked_reads(i))
      if (k < n.inputs.size() && !n.inputs[k].empty()) n.inputs[k] = blocked_of(n.inputs[k]);
    n.outputs[0] = blocked_of(y);
    out.push_back(std::move(n));
    if (read_outside(y)) {
      ir::Node u;
      u.name = ir::unique_value_name(g, y + "/UnblockChannels");
      u.op_type = "UnblockChannels";
      u.domain = "ai.ignis";
      u.inputs = {blocked_of(y)};
      u.outputs = {y};
      u.attrs.set("channels", int_attr(facts[y].dims[1].value));
      u.attrs.set("block", int_attr(kBlock));
      out.push_back(std::move(u));
    }
  }
  g.nodes = std::move(out);
  import_ignis_domain(g);
  return converted;
}

}  // namespace ignis::passes
