// SPDX-License-Identifier: Apache-2.0
#include "onnx/export.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <string>
#include <utility>

#include "core/low_bit.h"
#include "core/strings.h"
#include "ir/outer_scope.h"
#include "onnx/type_text.h"

namespace ignis::onnx_io {
namespace {

void fill_tensor(onnx::TensorProto* tp, const std::string& name, const Tensor& t) {
  tp->set_name(name);
  tp->set_data_type(static_cast<int>(t.dtype()));
  for (int64_t d : t.shape()) tp->add_dims(d);
  if (t.dtype() == DType::String) {
    for (int64_t i = 0; i < t.numel(); ++i) tp->add_string_data(t.data_as<std::string>()[i]);
    return;
  }
  if (dtype_bits(t.dtype()) < 8) {  // held one byte per element, stored packed
    std::string packed(low_bit_packed_bytes(t.dtype(), t.numel()), '\0');
    low_bit_pack(t.dtype(), static_cast<const uint8_t*>(t.data()), t.numel(), reinterpret_cast<uint8_t*>(packed.data()));
    tp->set_raw_data(std::move(packed));
    return;
  }
  tp->set_raw_data(std::string(static_cast<const char*>(t.data()), t.nbytes()));
}

Status fill_value_info(onnx::ValueInfoProto* vi, const ValueInfo& info) {
  vi->set_name(info.name);
  if (info.dtype == DType::Undefined) return Status::ok();
  if (dtype_is_container(info.dtype)) {
    Status s = fill_type(vi->mutable_type(), info.type_text);
    return s ? s : Status(s.code(), str_cat("value '", info.name, "': ", s.message()));
  }
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(info.dtype));
  if (!info.has_shape) return Status::ok();
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < info.dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (info.dims[i] >= 0) d->set_dim_value(info.dims[i]);
    else if (i < info.dim_names.size() && !info.dim_names[i].empty()) d->set_dim_param(info.dim_names[i]);
  }
  return Status::ok();
}

Status fill_graph(onnx::GraphProto* gp, const ir::Graph& g);

Status fill_attribute(onnx::AttributeProto* ap, const std::string& name, const Attribute& a, const ir::Node& n) {
  ap->set_name(name);
  switch (a.kind) {
    case Attribute::Kind::Float: ap->set_type(onnx::AttributeProto::FLOAT); ap->set_f(a.f); break;
    case Attribute::Kind::Int: ap->set_type(onnx::AttributeProto::INT); ap->set_i(a.i); break;
    case Attribute::Kind::String: ap->set_type(onnx::AttributeProto::STRING); ap->set_s(a.s); break;
    case Attribute::Kind::Tensor: ap->set_type(onnx::AttributeProto::TENSOR); fill_tensor(ap->mutable_t(), "", a.t); break;
    case Attribute::Kind::Floats:
      ap->set_type(onnx::AttributeProto::FLOATS);
      for (float f : a.floats) ap->add_floats(f);
      break;
    case Attribute::Kind::Ints:
      ap->set_type(onnx::AttributeProto::INTS);
      for (int64_t i : a.ints) ap->add_ints(i);
      break;
    case Attribute::Kind::Strings:
      ap->set_type(onnx::AttributeProto::STRINGS);
      for (const auto& s : a.strings) ap->add_strings(s);
      break;
    case Attribute::Kind::Graph:
      if (!a.graph) break;
      ap->set_type(onnx::AttributeProto::GRAPH);
      IGNIS_RETURN_IF_ERROR(fill_graph(ap->mutable_g(), *a.graph));
      break;
    default:
      return unsupported(str_cat(n.label(), ": attribute '", name, "' of kind ", attribute_kind_name(a.kind),
                                 " cannot be written"));
  }
  return Status::ok();
}

// Writes `g`'s inputs, outputs, initializers and nodes. A node's trailing outer-scope inputs
// are implicit in ONNX: where a pass renamed one, the body is written reading the new name.
Status fill_graph(onnx::GraphProto* gp, const ir::Graph& graph) {
  ir::Graph g = graph;  // a copy to edit: initializer data is shared
  ir::sync_outer_reads(g);
  gp->set_name(g.name.empty() ? "ignis" : g.name);
  for (const auto& in : g.inputs) IGNIS_RETURN_IF_ERROR(fill_value_info(gp->add_input(), in));
  for (const auto& out : g.outputs) IGNIS_RETURN_IF_ERROR(fill_value_info(gp->add_output(), out));
  // Sorted so the same graph always serializes to the same bytes.
  std::vector<const std::pair<const std::string, Tensor>*> inits;
  for (const auto& kv : g.initializers) inits.push_back(&kv);
  std::sort(inits.begin(), inits.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (const auto* kv : inits) fill_tensor(gp->add_initializer(), kv->first, kv->second);
  for (const auto& n : g.nodes) {
    const size_t declared = ir::declared_input_count(n);
    auto* np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    np->set_domain(n.domain);
    for (size_t i = 0; i < declared; ++i) np->add_input(n.inputs[i]);
    for (const auto& o : n.outputs) np->add_output(o);
    for (const auto& [name, a] : n.attrs.items()) IGNIS_RETURN_IF_ERROR(fill_attribute(np->add_attribute(), name, a, n));
  }
  return Status::ok();
}

}  // namespace

Result<std::string> export_model(const ir::Graph& g) {
  onnx::ModelProto mp;
  mp.set_ir_version(std::max<int64_t>(g.ir_version, 7));
  mp.set_producer_name("ignis");
  mp.set_producer_version("0.1.0");
  for (const auto& [domain, version] : g.opsets) {
    auto* os = mp.add_opset_import();
    os->set_domain(domain);
    os->set_version(version);
  }
  IGNIS_RETURN_IF_ERROR(fill_graph(mp.mutable_graph(), g));
  std::string bytes;
  if (!mp.SerializeToString(&bytes)) return internal_error("serializing the optimized model failed (over 2 GiB?)");
  return bytes;
}

}  // namespace ignis::onnx_io
