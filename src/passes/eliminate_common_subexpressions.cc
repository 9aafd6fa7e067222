// SPDX-License-Identifier: Apache-2.0
// Common-subexpression elimination. Constant initializers with the same dtype, shape and
// bytes are merged first (readers of a copy read the first name, in name order), so nodes
// reading copies of one constant become duplicates too. Then a node with the op, domain,
// inputs (same names, same order), present outputs and attributes of an earlier node is
// dropped and its readers read the earlier node's outputs.
// Legality: the op must be a function of its inputs and attributes. That holds for ai.onnx
// and ai.ignis ops except the random ones and Dropout (random in training mode); ops of other
// domains are unknown and left alone. Nodes with bodies never merge (bodies do not compare);
// a value a body reads is renamed in the node's captured inputs, and the bodies follow
// (ir::sync_outer_reads, which the pipeline and the exporter run). A duplicate whose
// output is a graph output keeps the name: a one-output node becomes Identity of the first
// node's output; a multi-output node stays.
#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// FNV-1a over 8-byte words, then the tail bytes.
uint64_t hash_bytes(const void* data, size_t n, uint64_t h = 1469598103934665603ull) {
  constexpr uint64_t kPrime = 1099511628211ull;
  const auto* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * kPrime;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * kPrime;
  return h;
}

// A hash of up to ~2.5 KiB sampled from the tensor (all of a small one): enough to tell most
// different weights apart without reading them whole; equal hashes are then compared in full.
uint64_t sample_hash(const Tensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.data());
  const size_t n = t.nbytes();
  constexpr size_t kEdge = 1024, kSamples = 64;
  if (n <= 2 * kEdge + kSamples * 8) return hash_bytes(p, n);
  uint64_t h = hash_bytes(p, kEdge);
  h = hash_bytes(p + n - kEdge, kEdge, h);
  for (size_t k = 0; k < kSamples; ++k) h = hash_bytes(p + (n - 8) / (kSamples - 1) * k, 8, h);
  return h;
}

bool has_bytes(const Tensor& t) { return t.dtype() != DType::String && t.dtype() != DType::Undefined; }

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && has_bytes(a) &&
         (a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0);
}

// Floats compare by bits: NaN equals itself, 0.0 and -0.0 differ (conservative both ways).
bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool same_attribute(const Attribute& a, const Attribute& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Attribute::Kind::Float: return std::memcmp(&a.f, &b.f, sizeof(float)) == 0;
    case Attribute::Kind::Int: return a.i == b.i;
    case Attribute::Kind::String: return a.s == b.s;
    case Attribute::Kind::Tensor: return same_tensor(a.t, b.t);
    case Attribute::Kind::Floats: return same_floats(a.floats, b.floats);
    case Attribute::Kind::Ints: return a.ints == b.ints;
    case Attribute::Kind::Strings: return a.strings == b.strings;
    case Attribute::Kind::Graph:
    case Attribute::Kind::Other: return false;
  }
  return false;
}

bool same_attributes(const AttrMap& a, const AttrMap& b) {
  if (a.items().size() != b.items().size()) return false;
  for (const auto& [name, attr] : a.items()) {
    const Attribute* other = b.find(name);
    if (!other || !same_attribute(attr, *other)) return false;
  }
  return true;
}

bool is_pure(const ir::Node& n) {
  static const std::unordered_set<std::string> kImpure = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                                          "RandomUniformLike", "Multinomial",   "Bernoulli",
                                                          "Dropout"};
  if (!n.domain.empty() && n.domain != "ai.ignis") return false;
  return !n.outputs.empty() && !kImpure.count(n.op_type);
}

// Op, domain, inputs, output presence and attribute names; attribute values are compared
// exactly among the nodes sharing a key.
std::string node_key(const ir::Node& n) {
  std::string k = n.domain + '\x1f' + n.op_type;
  for (const auto& in : n.inputs) k += '\x1f' + in;
  k += '\x1e';
  for (const auto& out : n.outputs) k += out.empty() ? '0' : '1';
  std::vector<std::string> names;
  for (const auto& [name, a] : n.attrs.items()) names.push_back(name);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) k += '\x1f' + name;
  return k;
}

// Merges identical initializers; returns how many copies it dropped or stopped reading.
int merge_initializers(ir::Graph& g) {
  std::map<std::pair<DType, std::vector<int64_t>>, std::vector<std::string>> by_type;
  for (const auto& [name, t] : g.initializers)
    if (has_bytes(t)) by_type[{t.dtype(), t.shape().to_vector()}].push_back(name);
  const auto uses = ir::consumers(g);
  int count = 0;
  for (auto& [type, names] : by_type) {
    if (names.size() < 2) continue;
    std::sort(names.begin(), names.end());
    std::unordered_map<uint64_t, std::vector<std::string>> firsts;  // hash -> canonical names
    for (const auto& name : names) {
      const Tensor& t = g.initializers.at(name);
      auto& candidates = firsts[sample_hash(t)];
      auto same = std::find_if(candidates.begin(), candidates.end(),
                               [&](const std::string& c) { return same_tensor(g.initializers.at(c), t); });
      if (same == candidates.end()) {
        candidates.push_back(name);
        continue;
      }
      const bool read = uses.count(name) > 0;
      ir::replace_uses(g, name, *same);
      if (ir::is_graph_output(g, name)) {
        count += read ? 1 : 0;  // the interface keeps the name; readers moved to the first copy
      } else {
        g.initializers.erase(name);
        ++count;
      }
    }
  }
  return count;
}

}  // namespace

Result<int> eliminate_common_subexpressions(ir::Graph& g, const PassContext&) {
  int count = merge_initializers(g);
  IGNIS_ASSIGN_OR_RETURN(auto order, ir::topological_order(g));
  std::unordered_map<std::string, std::vector<int>> seen;  // key -> earlier nodes with it
  std::vector<bool> remove(g.nodes.size(), false);
  int removed = 0;
  // In topological order every reader of a duplicate comes after it, so renaming its uses
  // never touches a node already keyed.
  for (int idx : order) {
    ir::Node& n = g.nodes[idx];
    if (!is_pure(n)) continue;
    auto& bucket = seen[node_key(n)];
    auto first_it = std::find_if(bucket.begin(), bucket.end(),
                                 [&](int c) { return same_attributes(g.nodes[c].attrs, n.attrs); });
    if (first_it == bucket.end()) {
      bucket.push_back(idx);
      continue;
    }
    const ir::Node& first = g.nodes[*first_it];
    bool interface = false;
    for (const auto& o : n.outputs) interface |= !o.empty() && ir::is_graph_output(g, o);
    if (interface) {
      if (n.outputs.size() != 1 || is_onnx(n, "Identity")) continue;
      ir::Node copy;
      copy.name = n.name;
      copy.op_type = "Identity";
      copy.inputs = {first.outputs[0]};
      copy.outputs = n.outputs;
      n = std::move(copy);
      ++count;
      continue;
    }
    for (size_t o = 0; o < n.outputs.size(); ++o)
      if (!n.outputs[o].empty()) ir::replace_uses(g, n.outputs[o], first.outputs[o]);
    remove[idx] = true;
    ++removed;
  }
  if (removed) ir::remove_nodes(g, remove);
  return count + removed;
}

}  // namespace ignis::passes
