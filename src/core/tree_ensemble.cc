// SPDX-License-Identifier: Apache-2.0
#include "core/tree_ensemble.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

#include "core/dtype_dispatch.h"
#include "core/strings.h"

namespace ignis {

namespace {

// Node and vote indices are int32 in TreeNode; anything larger is rejected, not truncated.
constexpr size_t kMaxEntries = static_cast<size_t>(std::numeric_limits<int32_t>::max());

Status wrong_kind(std::string_view name, const char* want, const Attribute& a) {
  return invalid_argument(str_cat("attribute '", name, "' must be ", want, ", got ", attribute_kind_name(a.kind)));
}

// An absent attribute reads as an empty list; one of another kind is an error.
Result<std::vector<int64_t>> ints_attr(const AttrMap& attrs, std::string_view name) {
  const Attribute* a = attrs.find(name);
  if (a == nullptr) return std::vector<int64_t>{};
  if (a->kind != Attribute::Kind::Ints) return wrong_kind(name, "a list of ints", *a);
  return a->ints;
}

Result<std::string> string_attr(const AttrMap& attrs, std::string_view name, std::string def) {
  const Attribute* a = attrs.find(name);
  if (a == nullptr) return def;
  if (a->kind != Attribute::Kind::String) return wrong_kind(name, "a string", *a);
  return a->s;
}

Result<int64_t> int_attr(const AttrMap& attrs, std::string_view name, int64_t def) {
  const Attribute* a = attrs.find(name);
  if (a == nullptr) return def;
  if (a->kind != Attribute::Kind::Int) return wrong_kind(name, "an int", *a);
  return a->i;
}

Result<const Tensor*> tensor_attr(const AttrMap& attrs, std::string_view name) {
  const Attribute* a = attrs.find(name);
  if (a == nullptr) return static_cast<const Tensor*>(nullptr);
  if (a->kind != Attribute::Kind::Tensor) return wrong_kind(name, "a tensor", *a);
  if (!DTypeSet::floats().contains(a->t.dtype()) && a->t.numel() > 0)
    return invalid_argument(str_cat("attribute '", name, "' must be a float tensor, got ", dtype_name(a->t.dtype())));
  return &a->t;
}

std::vector<double> tensor_values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = load_as_double(t.dtype(), t.data(), static_cast<int64_t>(i));
  return v;
}

// `name` (floats) or `name`_as_tensor (double precision, from version 3); at most one of them.
Result<std::vector<double>> real_values(const AttrMap& attrs, std::string_view name) {
  const std::string tensor_name = str_cat(name, "_as_tensor");
  IGNIS_ASSIGN_OR_RETURN(const Tensor* t, tensor_attr(attrs, tensor_name));
  const Attribute* a = attrs.find(name);
  if (a != nullptr && t != nullptr)
    return invalid_argument(str_cat("attributes '", name, "' and '", tensor_name, "' are both set; use one"));
  if (t != nullptr) return tensor_values(*t);
  if (a == nullptr) return std::vector<double>{};
  if (a->kind != Attribute::Kind::Floats) return wrong_kind(name, "a list of floats", *a);
  return std::vector<double>(a->floats.begin(), a->floats.end());
}

// The name real_values read `name` from, for messages.
std::string values_name(const AttrMap& attrs, std::string_view name) {
  const std::string tensor_name = str_cat(name, "_as_tensor");
  return attrs.has(tensor_name) ? tensor_name : std::string(name);
}

Status expect_count(std::string_view name, size_t got, size_t want, std::string_view per) {
  if (got == want) return Status::ok();
  return invalid_argument(str_cat("attribute '", name, "' has ", got, " values, expected ", want, " (", per, ")"));
}

Result<std::string> read_post_transform(const AttrMap& attrs) {
  IGNIS_ASSIGN_OR_RETURN(std::string s, string_attr(attrs, "post_transform", "NONE"));
  if (s != "NONE" && s != "SOFTMAX" && s != "LOGISTIC" && s != "SOFTMAX_ZERO" && s != "PROBIT")
    return invalid_argument(
        str_cat("attribute 'post_transform' must be NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT, got '", s, "'"));
  return s;
}

Result<int64_t> read_n_targets(const AttrMap& attrs) {
  IGNIS_ASSIGN_OR_RETURN(int64_t n, int_attr(attrs, "n_targets", 0));
  if (n < 1)
    return invalid_argument(
        str_cat("attribute 'n_targets' must be >= 1, got ", n, attrs.has("n_targets") ? "" : " (absent)"));
  return n;
}

// Names node i in messages ("node 3 of tree 1", "node 4", "leaf 2").
using NodeNamer = std::function<std::string(int32_t)>;

// Walks every node reachable from the roots depth first, calling visit(node) once per node;
// a node met again while it is still on the path closes a cycle, which is an error.
template <class Visit>
Status walk_trees(const TreeEnsembleModel& m, const NodeNamer& name, Visit visit) {
  enum : uint8_t { kNew, kOnPath, kDone };
  std::vector<uint8_t> state(m.nodes.size(), kNew);
  std::vector<std::pair<int32_t, int>> path;  // (node, children already pushed)
  for (const int32_t root : m.roots) {
    if (state[root] != kNew) continue;
    state[root] = kOnPath;
    visit(root);
    path.emplace_back(root, 0);
    while (!path.empty()) {
      auto& [node, pushed] = path.back();
      const TreeNode& n = m.nodes[node];
      if (n.mode == TreeNodeMode::Leaf || pushed == 2) {
        state[node] = kDone;
        path.pop_back();
        continue;
      }
      const int32_t child = pushed++ == 0 ? n.true_child : n.false_child;
      if (state[child] == kOnPath)
        return invalid_argument(str_cat("the trees have a cycle: ", name(node), " leads back to ", name(child)));
      if (state[child] == kDone) continue;
      state[child] = kOnPath;
      visit(child);
      path.emplace_back(child, 0);
    }
  }
  return Status::ok();
}

// Checks the trees for cycles, bypasses branches whose children are one node (the encoding of a
// tree that is a single leaf: its feature is never read) and records the largest feature read.
Status finish_trees(TreeEnsembleModel& m, const NodeNamer& name) {
  IGNIS_RETURN_IF_ERROR(walk_trees(m, name, [](int32_t) {}));
  auto bypass = [&](int32_t i) {
    while (m.nodes[i].mode != TreeNodeMode::Leaf && m.nodes[i].true_child == m.nodes[i].false_child)
      i = m.nodes[i].true_child;
    return i;
  };
  for (int32_t& r : m.roots) r = bypass(r);
  for (TreeNode& n : m.nodes) {
    if (n.mode == TreeNodeMode::Leaf) continue;
    n.true_child = bypass(n.true_child);
    n.false_child = bypass(n.false_child);
  }
  m.max_feature = -1;
  return walk_trees(m, name, [&](int32_t i) {
    if (m.nodes[i].mode != TreeNodeMode::Leaf) m.max_feature = std::max(m.max_feature, m.nodes[i].feature);
  });
}

// ---- TreeEnsembleRegressor and TreeEnsembleClassifier (versions 1 and 3) ----------------------

struct LegacyIds {
  std::vector<int64_t> tree_ids;
  std::vector<int64_t> node_ids;
  std::string name(int32_t i) const { return str_cat("node ", node_ids[i], " of tree ", tree_ids[i]); }
};

Result<TreeNodeMode> parse_legacy_mode(const std::string& s, size_t i) {
  static const std::array<std::pair<std::string_view, TreeNodeMode>, 7> kModes = {{
      {"BRANCH_LEQ", TreeNodeMode::Leq},
      {"BRANCH_LT", TreeNodeMode::Lt},
      {"BRANCH_GTE", TreeNodeMode::Gte},
      {"BRANCH_GT", TreeNodeMode::Gt},
      {"BRANCH_EQ", TreeNodeMode::Eq},
      {"BRANCH_NEQ", TreeNodeMode::Neq},
      {"LEAF", TreeNodeMode::Leaf},
  }};
  for (const auto& [name, mode] : kModes)
    if (s == name) return mode;
  return invalid_argument(str_cat("attribute 'nodes_modes' has '", s, "' at index ", i,
                                  ", expected BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, "
                                  "BRANCH_NEQ or LEAF"));
}

// The nodes_* attributes, and the votes `prefix`_ids/_nodeids/_treeids/_weights ("target" for
// the regressor, "class" for the classifier) with ids in [0, targets).
Status read_legacy_trees(const AttrMap& attrs, std::string_view prefix, int64_t targets, TreeEnsembleModel& m,
                         LegacyIds& ids) {
  IGNIS_ASSIGN_OR_RETURN(ids.tree_ids, ints_attr(attrs, "nodes_treeids"));
  IGNIS_ASSIGN_OR_RETURN(ids.node_ids, ints_attr(attrs, "nodes_nodeids"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> features, ints_attr(attrs, "nodes_featureids"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> trues, ints_attr(attrs, "nodes_truenodeids"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> falses, ints_attr(attrs, "nodes_falsenodeids"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> missing, ints_attr(attrs, "nodes_missing_value_tracks_true"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<double> values, real_values(attrs, "nodes_values"));
  const Attribute* modes = attrs.find("nodes_modes");
  if (modes != nullptr && modes->kind != Attribute::Kind::Strings)
    return wrong_kind("nodes_modes", "a list of strings", *modes);

  m.value_dtype = DType::F32;
  for (const std::string& name : {std::string("nodes_values_as_tensor"), str_cat(prefix, "_weights_as_tensor"),
                                  std::string("base_values_as_tensor")}) {
    const Tensor* t = attrs.get_tensor(name);
    if (t != nullptr && t->dtype() == DType::F64) m.value_dtype = DType::F64;
  }

  const size_t n = ids.tree_ids.size();
  if (n == 0) return invalid_argument("attribute 'nodes_treeids' is empty or absent: the ensemble has no nodes");
  if (n > kMaxEntries) return invalid_argument(str_cat("the ensemble has ", n, " nodes, more than ignis supports"));
  constexpr std::string_view kPerNode = "one per node, as 'nodes_treeids'";
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_nodeids", ids.node_ids.size(), n, kPerNode));
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_featureids", features.size(), n, kPerNode));
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_modes", modes ? modes->strings.size() : 0, n, kPerNode));
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_truenodeids", trues.size(), n, kPerNode));
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_falsenodeids", falses.size(), n, kPerNode));
  IGNIS_RETURN_IF_ERROR(expect_count(values_name(attrs, "nodes_values"), values.size(), n, kPerNode));
  if (!missing.empty())
    IGNIS_RETURN_IF_ERROR(expect_count("nodes_missing_value_tracks_true", missing.size(), n, kPerNode));

  // (tree id, node id) -> index; trees in order of first appearance, rooted at their first node.
  std::map<std::pair<int64_t, int64_t>, int32_t> index;
  std::map<int64_t, int32_t> tree_root;
  m.nodes.assign(n, TreeNode{});
  for (size_t i = 0; i < n; ++i) {
    const auto at = static_cast<int32_t>(i);
    if (!index.emplace(std::make_pair(ids.tree_ids[i], ids.node_ids[i]), at).second)
      return invalid_argument(str_cat("node id ", ids.node_ids[i], " appears twice in tree ", ids.tree_ids[i],
                                      " (attributes 'nodes_treeids', 'nodes_nodeids')"));
    if (tree_root.emplace(ids.tree_ids[i], at).second) m.roots.push_back(at);
    TreeNode& node = m.nodes[i];
    IGNIS_ASSIGN_OR_RETURN(node.mode, parse_legacy_mode(modes->strings[i], i));
    node.missing_tracks_true = !missing.empty() && missing[i] == 1;
    node.feature = features[i];
    node.threshold = values[i];
    if (node.mode != TreeNodeMode::Leaf && node.feature < 0)
      return invalid_argument(str_cat("attribute 'nodes_featureids' has ", node.feature, " for ", ids.name(at)));
  }
  for (size_t i = 0; i < n; ++i) {
    TreeNode& node = m.nodes[i];
    if (node.mode == TreeNodeMode::Leaf) continue;
    for (const auto& [name, child, slot] : {std::tuple{"nodes_truenodeids", trues[i], &node.true_child},
                                            std::tuple{"nodes_falsenodeids", falses[i], &node.false_child}}) {
      auto it = index.find({ids.tree_ids[i], child});
      if (it == index.end())
        return invalid_argument(str_cat("attribute '", name, "' points ", ids.name(static_cast<int32_t>(i)),
                                        " to node ", child, ", which tree ", ids.tree_ids[i], " does not have"));
      *slot = it->second;
    }
  }

  const std::string ids_name = str_cat(prefix, "_ids");
  const std::string nodes_name = str_cat(prefix, "_nodeids");
  const std::string trees_name = str_cat(prefix, "_treeids");
  const std::string weights_name = str_cat(prefix, "_weights");
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> vote_targets, ints_attr(attrs, ids_name));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> vote_nodes, ints_attr(attrs, nodes_name));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> vote_trees, ints_attr(attrs, trees_name));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<double> vote_weights, real_values(attrs, weights_name));
  const size_t k = vote_targets.size();
  if (k > kMaxEntries) return invalid_argument(str_cat("the ensemble has ", k, " votes, more than ignis supports"));
  const std::string per_vote = str_cat("one per vote, as '", ids_name, "'");
  IGNIS_RETURN_IF_ERROR(expect_count(nodes_name, vote_nodes.size(), k, per_vote));
  IGNIS_RETURN_IF_ERROR(expect_count(trees_name, vote_trees.size(), k, per_vote));
  IGNIS_RETURN_IF_ERROR(expect_count(values_name(attrs, weights_name), vote_weights.size(), k, per_vote));
  // Votes grouped by leaf, each leaf's in the order listed. Votes on branch nodes are ignored,
  // as onnxruntime does: old converters wrote some.
  std::vector<int32_t> vote_leaf(k, -1);
  for (size_t j = 0; j < k; ++j) {
    if (vote_targets[j] < 0 || vote_targets[j] >= targets)
      return invalid_argument(
          str_cat("attribute '", ids_name, "' has ", vote_targets[j], " at index ", j, ", outside [0, ", targets, ")"));
    auto it = index.find({vote_trees[j], vote_nodes[j]});
    if (it == index.end())
      return invalid_argument(str_cat("vote ", j, " is for node ", vote_nodes[j], " of tree ", vote_trees[j],
                                      ", which does not exist (attributes '", trees_name, "', '", nodes_name, "')"));
    if (m.nodes[it->second].mode == TreeNodeMode::Leaf) {
      vote_leaf[j] = it->second;
      ++m.nodes[it->second].count;
    }
    if (vote_weights[j] < 0) m.votes_nonnegative = false;
  }
  int32_t next = 0;
  for (TreeNode& node : m.nodes) {
    node.first = next;
    next += node.count;
    node.count = 0;
  }
  m.weights.resize(static_cast<size_t>(next));
  for (size_t j = 0; j < k; ++j) {
    if (vote_leaf[j] < 0) continue;
    TreeNode& leaf = m.nodes[vote_leaf[j]];
    m.weights[leaf.first + leaf.count++] = TreeVote{vote_targets[j], vote_weights[j]};
  }
  for (size_t i = 0; i < n; ++i)
    if (m.nodes[i].mode == TreeNodeMode::Leaf && m.nodes[i].count == 0)
      return invalid_argument(str_cat(ids.name(static_cast<int32_t>(i)), " is a leaf without votes ('", ids_name,
                                      "', '", nodes_name, "', '", trees_name, "' name none for it)"));
  return finish_trees(m, [&](int32_t i) { return ids.name(i); });
}

// ---- TreeEnsemble (version 5) -------------------------------------------------------------------

// One of nodes_truenodeids/nodes_falsenodeids: a node index, or a leaf index where the matching
// *leafs flag is 1.
Status link_child(std::string_view name, std::string_view leafs_name, size_t i, int64_t id, int64_t is_leaf,
                  int32_t branches, int32_t leaves, int32_t& slot) {
  if (is_leaf != 0 && is_leaf != 1)
    return invalid_argument(
        str_cat("attribute '", leafs_name, "' has ", is_leaf, " at index ", i, ", expected 0 or 1"));
  const int32_t limit = is_leaf ? leaves : branches;
  if (id < 0 || id >= limit)
    return invalid_argument(str_cat("attribute '", name, "' has ", id, " at index ", i, ", outside [0, ", limit,
                                    ") (the ", is_leaf ? "leaves" : "nodes", ")"));
  slot = static_cast<int32_t>(is_leaf ? branches + id : id);
  return Status::ok();
}

// membership_values: one NaN-terminated set per BRANCH_MEMBER node, in node order.
Status read_member_sets(const AttrMap& attrs, TreeEnsembleModel& m, int32_t branches) {
  int64_t member_nodes = 0;
  for (int32_t i = 0; i < branches; ++i) member_nodes += m.nodes[i].mode == TreeNodeMode::Member ? 1 : 0;
  IGNIS_ASSIGN_OR_RETURN(const Tensor* t, tensor_attr(attrs, "membership_values"));
  if (t == nullptr) {
    if (member_nodes == 0) return Status::ok();
    return invalid_argument(
        str_cat("attribute 'membership_values' is required: ", member_nodes, " nodes have mode BRANCH_MEMBER (6)"));
  }
  if (t->numel() > 0 && t->dtype() != m.value_dtype)
    return invalid_argument(str_cat("attribute 'membership_values' must have the dtype of 'nodes_splits' (",
                                    dtype_name(m.value_dtype), "), got ", dtype_name(t->dtype())));
  const std::vector<double> values = tensor_values(*t);
  int64_t sets = 0;
  for (double v : values) sets += std::isnan(v) ? 1 : 0;
  if (sets != member_nodes || (!values.empty() && !std::isnan(values.back())))
    return invalid_argument(str_cat("attribute 'membership_values' must hold ", member_nodes,
                                    " NaN-terminated sets (one per BRANCH_MEMBER node), got ", sets, " NaN in ",
                                    values.size(), " values"));
  size_t at = 0;
  for (int32_t i = 0; i < branches; ++i) {
    TreeNode& node = m.nodes[i];
    if (node.mode != TreeNodeMode::Member) continue;
    node.first = static_cast<int32_t>(m.members.size());
    for (; !std::isnan(values[at]); ++at) m.members.push_back(values[at]);
    ++at;
    node.count = static_cast<int32_t>(m.members.size()) - node.first;
  }
  return Status::ok();
}

}  // namespace

Result<TreeEnsembleModel> read_tree_ensemble_regressor(const AttrMap& attrs) {
  TreeEnsembleModel m;
  IGNIS_ASSIGN_OR_RETURN(m.targets, read_n_targets(attrs));
  IGNIS_ASSIGN_OR_RETURN(m.post_transform, read_post_transform(attrs));
  IGNIS_ASSIGN_OR_RETURN(const std::string agg, string_attr(attrs, "aggregate_function", "SUM"));
  static constexpr std::array<std::pair<std::string_view, TreeAggregate>, 4> kAggregates = {{
      {"SUM", TreeAggregate::Sum},
      {"AVERAGE", TreeAggregate::Average},
      {"MIN", TreeAggregate::Min},
      {"MAX", TreeAggregate::Max},
  }};
  const auto it = std::find_if(kAggregates.begin(), kAggregates.end(), [&](const auto& e) { return e.first == agg; });
  if (it == kAggregates.end())
    return invalid_argument(
        str_cat("attribute 'aggregate_function' must be SUM, AVERAGE, MIN or MAX, got '", agg, "'"));
  m.aggregate = it->second;
  LegacyIds ids;
  IGNIS_RETURN_IF_ERROR(read_legacy_trees(attrs, "target", m.targets, m, ids));
  IGNIS_ASSIGN_OR_RETURN(m.base_values, real_values(attrs, "base_values"));
  if (!m.base_values.empty())
    IGNIS_RETURN_IF_ERROR(expect_count(values_name(attrs, "base_values"), m.base_values.size(),
                                       static_cast<size_t>(m.targets), "one per target"));
  return m;
}

Result<TreeEnsembleModel> read_tree_ensemble_classifier(const AttrMap& attrs) {
  TreeEnsembleModel m;
  const bool string_labels = attrs.has("classlabels_strings");
  if (string_labels == attrs.has("classlabels_int64s"))
    return invalid_argument(
        "exactly one of the attributes 'classlabels_int64s' and 'classlabels_strings' must be given (one label per "
        "class)");
  const char* labels_name = string_labels ? "classlabels_strings" : "classlabels_int64s";
  if (string_labels) {
    const Attribute* a = attrs.find(labels_name);
    if (a->kind != Attribute::Kind::Strings) return wrong_kind(labels_name, "a list of strings", *a);
    m.class_label_strings = a->strings;
  } else {
    IGNIS_ASSIGN_OR_RETURN(m.class_labels, ints_attr(attrs, labels_name));
  }
  m.targets = static_cast<int64_t>(string_labels ? m.class_label_strings.size() : m.class_labels.size());
  if (m.targets == 0) return invalid_argument(str_cat("attribute '", labels_name, "' must not be empty"));
  if (m.targets == 1) return unsupported(str_cat("attribute '", labels_name, "' with a single class"));
  IGNIS_ASSIGN_OR_RETURN(m.post_transform, read_post_transform(attrs));
  LegacyIds ids;
  IGNIS_RETURN_IF_ERROR(read_legacy_trees(attrs, "class", m.targets, m, ids));
  IGNIS_ASSIGN_OR_RETURN(m.base_values, real_values(attrs, "base_values"));
  const std::string base_name = values_name(attrs, "base_values");

  bool one_column = m.targets == 2 && !m.weights.empty();
  for (const TreeVote& v : m.weights) one_column = one_column && v.target == m.weights.front().target;
  if (!one_column) {
    if (!m.base_values.empty())
      IGNIS_RETURN_IF_ERROR(
          expect_count(base_name, m.base_values.size(), static_cast<size_t>(m.targets), "one per class"));
    return m;
  }
  // Two classes, one column of votes: what the column means is onnxruntime's convention, which
  // ignis follows where it gives each row a complete, well-defined answer.
  if (m.weights.front().target != 0)
    return unsupported(
        "two classes with votes for class 1 only (attribute 'class_ids'); binary ensembles vote for class 0");
  if (m.post_transform == "PROBIT")
    return unsupported("post_transform 'PROBIT' for two classes with one column of votes");
  if (m.base_values.size() > 1)
    return unsupported(str_cat("attribute '", base_name, "' with ", m.base_values.size(),
                               " values for two classes with one column of votes (expected at most 1)"));
  m.binary_one_column = true;
  return m;
}

Result<TreeEnsembleModel> read_tree_ensemble(const AttrMap& attrs) {
  TreeEnsembleModel m;
  IGNIS_ASSIGN_OR_RETURN(m.targets, read_n_targets(attrs));
  IGNIS_ASSIGN_OR_RETURN(const int64_t agg, int_attr(attrs, "aggregate_function", 1));
  static constexpr std::array<TreeAggregate, 4> kAggregates = {TreeAggregate::Average, TreeAggregate::Sum,
                                                               TreeAggregate::Min, TreeAggregate::Max};
  if (agg < 0 || agg > 3)
    return invalid_argument(
        str_cat("attribute 'aggregate_function' must be 0 (AVERAGE), 1 (SUM), 2 (MIN) or 3 (MAX), got ", agg));
  m.aggregate = kAggregates[static_cast<size_t>(agg)];
  IGNIS_ASSIGN_OR_RETURN(const int64_t post, int_attr(attrs, "post_transform", 0));
  static constexpr std::array<const char*, 5> kTransforms = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
  if (post < 0 || post > 4)
    return invalid_argument(
        str_cat("attribute 'post_transform' must be 0 (NONE), 1 (SOFTMAX), 2 (LOGISTIC), "
                "3 (SOFTMAX_ZERO) or 4 (PROBIT), got ",
                post));
  m.post_transform = kTransforms[static_cast<size_t>(post)];

  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> features, ints_attr(attrs, "nodes_featureids"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> trues, ints_attr(attrs, "nodes_truenodeids"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> true_leafs, ints_attr(attrs, "nodes_trueleafs"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> falses, ints_attr(attrs, "nodes_falsenodeids"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> false_leafs, ints_attr(attrs, "nodes_falseleafs"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> missing, ints_attr(attrs, "nodes_missing_value_tracks_true"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> targets, ints_attr(attrs, "leaf_targetids"));
  IGNIS_ASSIGN_OR_RETURN(const std::vector<int64_t> roots, ints_attr(attrs, "tree_roots"));
  IGNIS_ASSIGN_OR_RETURN(const Tensor* splits, tensor_attr(attrs, "nodes_splits"));
  IGNIS_ASSIGN_OR_RETURN(const Tensor* weights, tensor_attr(attrs, "leaf_weights"));

  const size_t nb = features.size();
  const size_t nl = targets.size();
  if (nb == 0) return invalid_argument("attribute 'nodes_featureids' is empty or absent: the ensemble has no nodes");
  if (nl == 0) return invalid_argument("attribute 'leaf_targetids' is empty or absent: the ensemble has no leaves");
  if (nb + nl > kMaxEntries)
    return invalid_argument(str_cat("the ensemble has ", nb + nl, " nodes and leaves, more than ignis supports"));
  if (roots.empty()) return invalid_argument("attribute 'tree_roots' is empty or absent: the ensemble has no trees");
  const Attribute* mode_attr = attrs.find("nodes_modes");
  if (mode_attr == nullptr || mode_attr->kind != Attribute::Kind::Tensor || mode_attr->t.dtype() != DType::U8)
    return invalid_argument("attribute 'nodes_modes' must be a uint8 tensor");
  if (splits == nullptr) return invalid_argument("attribute 'nodes_splits' is required");
  if (weights == nullptr) return invalid_argument("attribute 'leaf_weights' is required");
  m.value_dtype = splits->dtype();
  if (weights->dtype() != m.value_dtype)
    return invalid_argument(str_cat("attribute 'leaf_weights' must have the dtype of 'nodes_splits' (",
                                    dtype_name(m.value_dtype), "), got ", dtype_name(weights->dtype())));
  constexpr std::string_view kPerNode = "one per node, as 'nodes_featureids'";
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_modes", static_cast<size_t>(mode_attr->t.numel()), nb, kPerNode));
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_splits", static_cast<size_t>(splits->numel()), nb, kPerNode));
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_truenodeids", trues.size(), nb, kPerNode));
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_trueleafs", true_leafs.size(), nb, kPerNode));
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_falsenodeids", falses.size(), nb, kPerNode));
  IGNIS_RETURN_IF_ERROR(expect_count("nodes_falseleafs", false_leafs.size(), nb, kPerNode));
  if (!missing.empty())
    IGNIS_RETURN_IF_ERROR(expect_count("nodes_missing_value_tracks_true", missing.size(), nb, kPerNode));
  IGNIS_RETURN_IF_ERROR(
      expect_count("leaf_weights", static_cast<size_t>(weights->numel()), nl, "one per leaf, as 'leaf_targetids'"));

  const auto branches = static_cast<int32_t>(nb);
  const auto leaves = static_cast<int32_t>(nl);
  const std::vector<double> split_values = tensor_values(*splits);
  const std::vector<double> leaf_weights = tensor_values(*weights);
  const auto* mode_codes = mode_attr->t.data_as<const uint8_t>();
  m.nodes.assign(nb + nl, TreeNode{});
  for (size_t i = 0; i < nb; ++i) {
    TreeNode& node = m.nodes[i];
    if (mode_codes[i] > 6)
      return invalid_argument(str_cat("attribute 'nodes_modes' has ", static_cast<int>(mode_codes[i]), " at index ", i,
                                      ", expected 0 (BRANCH_LEQ) to 6 (BRANCH_MEMBER)"));
    node.mode = static_cast<TreeNodeMode>(mode_codes[i]);
    node.missing_tracks_true = !missing.empty() && missing[i] == 1;
    node.feature = features[i];
    node.threshold = split_values[i];
    if (node.feature < 0)
      return invalid_argument(str_cat("attribute 'nodes_featureids' has ", node.feature, " at index ", i));
    IGNIS_RETURN_IF_ERROR(link_child("nodes_truenodeids", "nodes_trueleafs", i, trues[i], true_leafs[i], branches,
                                     leaves, node.true_child));
    IGNIS_RETURN_IF_ERROR(link_child("nodes_falsenodeids", "nodes_falseleafs", i, falses[i], false_leafs[i], branches,
                                     leaves, node.false_child));
  }
  m.weights.resize(nl);
  for (size_t j = 0; j < nl; ++j) {
    if (targets[j] < 0 || targets[j] >= m.targets)
      return invalid_argument(
          str_cat("attribute 'leaf_targetids' has ", targets[j], " at index ", j, ", outside [0, ", m.targets, ")"));
    m.weights[j] = TreeVote{targets[j], leaf_weights[j]};
    TreeNode& leaf = m.nodes[nb + j];
    leaf.first = static_cast<int32_t>(j);
    leaf.count = 1;
  }
  IGNIS_RETURN_IF_ERROR(read_member_sets(attrs, m, branches));
  for (size_t t = 0; t < roots.size(); ++t) {
    if (roots[t] < 0 || roots[t] >= branches)
      return invalid_argument(str_cat("attribute 'tree_roots' has ", roots[t], " at index ", t, ", outside [0, ",
                                      branches, ") (the nodes)"));
    m.roots.push_back(static_cast<int32_t>(roots[t]));
  }
  IGNIS_RETURN_IF_ERROR(
      finish_trees(m, [&](int32_t i) { return i < branches ? str_cat("node ", i) : str_cat("leaf ", i - branches); }));
  return m;
}

}  // namespace ignis
