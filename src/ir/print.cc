// SPDX-License-Identifier: Apache-2.0
#include "ir/print.h"

#include <sstream>

#include "ir/rewrite.h"

namespace ignis::ir {

namespace {
std::string quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o.push_back('\\');
    o.push_back(c);
  }
  return o + "\"";
}
}  // namespace

std::string to_dot(const Graph& g) {
  std::ostringstream os;
  os << "digraph " << quote(g.name.empty() ? "model" : g.name) << " {\n  rankdir=TB;\n  node [fontsize=10];\n";
  for (const auto& in : g.inputs) os << "  " << quote("in:" + in.name) << " [shape=ellipse,label=" << quote(in.name) << "];\n";
  for (const auto& out : g.outputs)
    os << "  " << quote("out:" + out.name) << " [shape=ellipse,label=" << quote(out.name) << "];\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const std::string op = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
    os << "  n" << i << " [shape=box,style=filled,fillcolor=" << (n.domain.empty() ? "lightblue" : "orange")
       << ",label=" << quote(op + "\n" + n.name) << "];\n";
  }
  const auto prod = producers(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& in : g.nodes[i].inputs) {
      if (in.empty() || g.initializers.count(in)) continue;  // weights would drown the picture
      auto p = prod.find(in);
      const std::string from = p != prod.end() ? "n" + std::to_string(p->second) : quote("in:" + in);
      os << "  " << from << " -> n" << i << ";\n";
    }
  }
  for (const auto& out : g.outputs) {
    auto p = prod.find(out.name);
    if (p != prod.end()) os << "  n" << p->second << " -> " << quote("out:" + out.name) << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace ignis::ir
