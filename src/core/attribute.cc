// SPDX-License-Identifier: Apache-2.0
#include "core/attribute.h"

namespace ignis {

const char* attribute_kind_name(Attribute::Kind kind) {
  switch (kind) {
    case Attribute::Kind::Float: return "float";
    case Attribute::Kind::Int: return "int";
    case Attribute::Kind::String: return "string";
    case Attribute::Kind::Tensor: return "tensor";
    case Attribute::Kind::Floats: return "floats";
    case Attribute::Kind::Ints: return "ints";
    case Attribute::Kind::Strings: return "strings";
    case Attribute::Kind::Graph: return "graph";
    case Attribute::Kind::Other: return "other";
  }
  return "other";
}

void AttrMap::set(std::string name, Attribute a) {
  for (auto& [n, v] : items_) {
    if (n == name) {
      v = std::move(a);
      return;
    }
  }
  items_.emplace_back(std::move(name), std::move(a));
}

const Attribute* AttrMap::find(std::string_view name) const {
  for (const auto& [n, v] : items_)
    if (n == name) return &v;
  return nullptr;
}

int64_t AttrMap::get_int(std::string_view name, int64_t def) const {
  const Attribute* a = find(name);
  if (!a) return def;
  if (a->kind == Attribute::Kind::Int) return a->i;
  if (a->kind == Attribute::Kind::Float) return static_cast<int64_t>(a->f);
  return def;
}

float AttrMap::get_float(std::string_view name, float def) const {
  const Attribute* a = find(name);
  if (!a) return def;
  if (a->kind == Attribute::Kind::Float) return a->f;
  if (a->kind == Attribute::Kind::Int) return static_cast<float>(a->i);
  return def;
}

std::string AttrMap::get_string(std::string_view name, std::string def) const {
  const Attribute* a = find(name);
  return (a && a->kind == Attribute::Kind::String) ? a->s : def;
}

std::vector<int64_t> AttrMap::get_ints(std::string_view name, std::vector<int64_t> def) const {
  const Attribute* a = find(name);
  if (!a) return def;
  if (a->kind == Attribute::Kind::Ints) return a->ints;
  if (a->kind == Attribute::Kind::Int) return {a->i};
  return def;
}

std::vector<float> AttrMap::get_floats(std::string_view name, std::vector<float> def) const {
  const Attribute* a = find(name);
  if (!a) return def;
  if (a->kind == Attribute::Kind::Floats) return a->floats;
  if (a->kind == Attribute::Kind::Float) return {a->f};
  return def;
}

std::vector<std::string> AttrMap::get_strings(std::string_view name) const {
  const Attribute* a = find(name);
  return (a && a->kind == Attribute::Kind::Strings) ? a->strings : std::vector<std::string>{};
}

const Tensor* AttrMap::get_tensor(std::string_view name) const {
  const Attribute* a = find(name);
  return (a && a->kind == Attribute::Kind::Tensor) ? &a->t : nullptr;
}

const ir::Graph* AttrMap::get_graph(std::string_view name) const {
  const Attribute* a = find(name);
  return (a && a->kind == Attribute::Kind::Graph) ? a->graph.get() : nullptr;
}

}  // namespace ignis
