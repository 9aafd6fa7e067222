// SPDX-License-Identifier: Apache-2.0
// Keeps runs of quantized convolutions channels-last: every ungrouped 2-D QLinearConv on uint8
// X with constant weights (and weight zero points) becomes an ai.ignis QLinearConvNhwc
// (docs/ops_ai_ignis.md), which runs the int8 GEMM with the output positions as rows and the
// weights packed once, reading each tap's channels where they lie: nothing per run is packed.
// A com.microsoft QLinearAdd both of whose inputs such nodes make (a residual sum) joins their
// run: it adds bytes position by position in any layout. A Transpose to NHWC gives the run
// each value it reads from outside, and a Transpose back gives every value read outside the
// run (or a graph output) its NCHW form under its own name, so consumers outside are untouched.
// As in convert_to_blocked_layout, only connected runs of two or more convolutions whose
// outputs outweigh the tensors transposed at their edges kEdgeWeight times are converted (a
// resnet's one run of 52 convolutions pays for its two transposes; mobilenet's pointwise pairs
// between depthwise convolutions, which stay NCHW, do not). Runs only when the context says
// the channels-last kernel is the fast one here (PassContext::int8_channels_last: AVX-512 VNNI,
// whose tile takes uint8 rows of A; on AVX2 the NCHW kernel takes the int8 weights as A).
// Exactness: QLinearConvNhwc computes the same integer sums and the same requantization as
// QLinearConv, and the transposes only move bytes.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/rewrite.h"
#include "passes/graph_facts.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// An ungrouped 2-D QLinearConv on uint8 X with constant W (and w_zero_point) and float32
// scales: what QLinearConvNhwc's fast kernel runs.
bool convertible_conv(const ir::Graph& g, const GraphFacts& facts, const ir::Node& n) {
  if (!is_onnx(n, "QLinearConv") || n.outputs.size() != 1 || n.inputs.size() < 8) return false;
  if (facts.dtype(n.inputs[0]) != DType::U8 || facts.rank(n.inputs[0]) != 4) return false;
  if (n.attrs.get_int("group", 1) != 1) return false;
  const Tensor* w = ir::constant_value(g, n.inputs[3]);
  if (w == nullptr || w->rank() != 4) return false;
  if (!n.inputs[5].empty() && ir::constant_value(g, n.inputs[5]) == nullptr) return false;
  for (size_t i : {size_t{1}, size_t{4}, size_t{6}})
    if (facts.dtype(n.inputs[i]) != DType::F32) return false;
  return true;
}

// A com.microsoft QLinearAdd of two 4-D tensors provably of one shape (no broadcasting).
bool same_shape_add(const GraphFacts& facts, const ir::Node& n) {
  if (n.domain != "com.microsoft" || n.op_type != "QLinearAdd" || n.inputs.size() < 7 || n.outputs.size() != 1)
    return false;
  return facts.rank(n.inputs[0]) == 4 && facts.same_shape(n.inputs[0], n.inputs[3]);
}

}  // namespace

Result<int> convert_qlinear_conv_to_nhwc(ir::Graph& g, const PassContext& ctx) {
  if (!ctx.int8_channels_last) return 0;
  const GraphFacts facts(g);
  const int count = static_cast<int>(g.nodes.size());
  const auto producer = ir::producers(g);
  const auto consumers = ir::consumers(g);

  std::vector<bool> conv(static_cast<size_t>(count), false), add(static_cast<size_t>(count), false);
  for (int i = 0; i < count; ++i) conv[i] = convertible_conv(g, facts, g.nodes[i]);
  auto made_by = [&](const std::vector<bool>& which, const std::string& v) {
    auto p = producer.find(v);
    return p != producer.end() && which[p->second];
  };
  // Joiners in graph order (producers first): adds whose both inputs a convolution or an
  // earlier joiner makes.
  std::vector<bool> member(conv);
  for (int i = 0; i < count; ++i) {
    const ir::Node& n = g.nodes[i];
    if (!same_shape_add(facts, n) || !made_by(member, n.inputs[0]) || !made_by(member, n.inputs[3])) continue;
    add[i] = member[i] = true;
  }
  // The inputs node i reads channels-last: a convolution's X, an add's A and B.
  auto nhwc_reads = [&](int i) -> std::vector<size_t> {
    if (conv[i]) return {0};
    if (add[i]) return {0, 3};
    return {};
  };
  // Runs: members connected through the values they read channels-last.
  std::vector<int> root(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) root[i] = i;
  auto find = [&](int i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  for (int i = 0; i < count; ++i)
    for (size_t k : nhwc_reads(i))
      if (auto p = producer.find(g.nodes[i].inputs[k]); p != producer.end() && member[p->second])
        root[find(i)] = find(p->second);
  std::map<int, int> run_convs;
  for (int i = 0; i < count; ++i)
    if (conv[i]) ++run_convs[find(i)];
  std::vector<bool> convert(static_cast<size_t>(count), false);
  for (int i = 0; i < count; ++i) convert[i] = member[i] && run_convs[find(i)] >= 2;

  // Whether a converted node's output is also needed NCHW.
  auto read_outside = [&](const std::string& v) {
    if (ir::is_graph_output(g, v)) return true;
    auto it = consumers.find(v);
    if (it == consumers.end()) return false;
    for (int c : it->second) {
      if (!convert[c]) return true;
      const std::vector<size_t> ks = nhwc_reads(c);
      const std::vector<std::string>& in = g.nodes[c].inputs;
      for (size_t k = 0; k < in.size(); ++k)
        if (in[k] == v && std::find(ks.begin(), ks.end(), k) == ks.end()) return true;
    }
    return false;
  };
  // A run pays when its convolutions' outputs outweigh its edge transposes kEdgeWeight times.
  constexpr int64_t kEdgeWeight = 4;
  std::map<int, int64_t> edge_elements, work_elements;
  auto count_in = [&](std::map<int, int64_t>& sum, int r, const std::string& v) {
    const int64_t e = facts.elements_per_image(v);
    sum[r] = e < 0 || sum[r] < 0 ? -1 : sum[r] + e;
  };
  std::set<std::string> to_nhwc;
  for (int i = 0; i < count; ++i) {
    if (!convert[i]) continue;
    const int r = find(i);
    for (size_t k : nhwc_reads(i)) {
      const std::string& v = g.nodes[i].inputs[k];
      if (!made_by(convert, v) && to_nhwc.insert(v).second) count_in(edge_elements, r, v);
    }
    if (read_outside(g.nodes[i].outputs[0])) count_in(edge_elements, r, g.nodes[i].outputs[0]);
    if (conv[i]) count_in(work_elements, r, g.nodes[i].outputs[0]);
  }
  for (int i = 0; i < count; ++i) {
    if (!convert[i]) continue;
    const int r = find(i);
    convert[i] = edge_elements[r] >= 0 && work_elements[r] >= 0 && kEdgeWeight * edge_elements[r] <= work_elements[r];
  }
  const int converted = static_cast<int>(std::count(convert.begin(), convert.end(), true));
  if (converted == 0) return 0;
  // Values to transpose in: those read by converted nodes and made elsewhere (recounted: a
  // run dropped above no longer reads any).
  to_nhwc.clear();
  for (int i = 0; i < count; ++i)
    if (convert[i])
      for (size_t k : nhwc_reads(i))
        if (!made_by(convert, g.nodes[i].inputs[k])) to_nhwc.insert(g.nodes[i].inputs[k]);

  std::unordered_map<std::string, std::string> nhwc_name;
  auto nhwc_of = [&](const std::string& v) -> const std::string& {
    auto it = nhwc_name.find(v);
    if (it == nhwc_name.end()) it = nhwc_name.emplace(v, ir::unique_value_name(g, v + "_nhwc")).first;
    return it->second;
  };
  auto transpose = [&](const std::string& in, const std::string& out, std::vector<int64_t> perm) {
    ir::Node t;
    t.name = ir::unique_value_name(g, out + "/Transpose");
    t.op_type = "Transpose";
    t.inputs = {in};
    t.outputs = {out};
    set_ints(t, "perm", std::move(perm));
    return t;
  };
  std::vector<ir::Node> out;
  out.reserve(g.nodes.size() + 2 * static_cast<size_t>(converted));
  for (const std::string& v : to_nhwc)
    if (producer.find(v) == producer.end()) out.push_back(transpose(v, nhwc_of(v), {0, 2, 3, 1}));
  for (int i = 0; i < count; ++i) {
    ir::Node n = g.nodes[i];
    if (!convert[i]) {
      out.push_back(std::move(n));
      for (const std::string& v : out.back().outputs)
        if (to_nhwc.count(v)) out.push_back(transpose(v, nhwc_of(v), {0, 2, 3, 1}));
      continue;
    }
    const std::string y = n.outputs[0];
    if (conv[i]) {
      n.op_type = "QLinearConvNhwc";
      n.domain = "ai.ignis";
    }
    for (size_t k : nhwc_reads(i)) n.inputs[k] = nhwc_of(n.inputs[k]);
    n.outputs[0] = nhwc_of(y);
    out.push_back(std::move(n));
    if (read_outside(y)) out.push_back(transpose(nhwc_of(y), y, {0, 3, 1, 2}));
  }
  g.nodes = std::move(out);
  import_ignis_domain(g);
  return converted;
}

}  // namespace ignis::passes
