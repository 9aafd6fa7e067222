// SPDX-License-Identifier: Apache-2.0
// ir::Graph -> ONNX ModelProto: bytes, or a file with its large weights in an external data file.
#include "onnx/export.h"

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "core/aligned_alloc.h"
#include "core/low_bit.h"
#include "core/strings.h"
#include "ir/outer_scope.h"
#include "onnx/type_text.h"

namespace ignis::onnx_io {
namespace {

// Appends tensor bytes to an external data file, each tensor at a 64-byte aligned offset so the
// importer can use it in place for every element type.
class DataWriter {
 public:
  DataWriter(std::ofstream* out, std::string location, int64_t min_bytes)
      : out_(out), location_(std::move(location)), min_bytes_(min_bytes) {}

  // Writes `bytes` and points `tp` at them, unless they are small enough to stay inline.
  bool put(onnx::TensorProto* tp, const char* bytes, size_t n) {
    if (static_cast<int64_t>(n) < min_bytes_) return false;
    static constexpr char kZeros[kAlignment] = {};
    const int64_t start = static_cast<int64_t>(align_up(static_cast<size_t>(offset_)));
    out_->write(kZeros, start - offset_);
    out_->write(bytes, static_cast<std::streamsize>(n));
    offset_ = start + static_cast<int64_t>(n);
    tp->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* key, const std::string& value) {
      auto* kv = tp->add_external_data();
      kv->set_key(key);
      kv->set_value(value);
    };
    add("location", location_);
    add("offset", std::to_string(start));
    add("length", std::to_string(n));
    return true;
  }
  int64_t bytes_written() const { return offset_; }

 private:
  std::ofstream* out_;
  std::string location_;
  int64_t min_bytes_;
  int64_t offset_ = 0;
};

// Stored bytes of `t`: 4- and 2-bit types are held one byte per element and stored packed.
size_t stored_bytes(const Tensor& t) {
  return dtype_bits(t.dtype()) < 8 ? low_bit_packed_bytes(t.dtype(), t.numel()) : t.nbytes();
}

void fill_tensor(onnx::TensorProto* tp, const std::string& name, const Tensor& t, DataWriter* data = nullptr) {
  tp->set_name(name);
  tp->set_data_type(static_cast<int>(t.dtype()));
  for (int64_t d : t.shape()) tp->add_dims(d);
  if (t.dtype() == DType::String) {  // string_data; never external
    for (int64_t i = 0; i < t.numel(); ++i) tp->add_string_data(t.data_as<std::string>()[i]);
    return;
  }
  std::string packed;
  const char* bytes = static_cast<const char*>(t.data());
  if (dtype_bits(t.dtype()) < 8) {
    packed.resize(stored_bytes(t));
    low_bit_pack(t.dtype(), static_cast<const uint8_t*>(t.data()), t.numel(), reinterpret_cast<uint8_t*>(packed.data()));
    bytes = packed.data();
  }
  if (data != nullptr && data->put(tp, bytes, stored_bytes(t))) return;
  if (!packed.empty()) tp->set_raw_data(std::move(packed));
  else tp->set_raw_data(std::string(bytes, t.nbytes()));
}

// Initializer bytes as stored, control-flow bodies included.
int64_t stored_initializer_bytes(const ir::Graph& g) {
  int64_t n = 0;
  for (const auto& [name, t] : g.initializers) n += static_cast<int64_t>(stored_bytes(t));
  for (const auto& node : g.nodes)
    for (const auto& [name, a] : node.attrs.items())
      if (a.kind == Attribute::Kind::Graph && a.graph) n += stored_initializer_bytes(*a.graph);
  return n;
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

Status fill_graph(onnx::GraphProto* gp, const ir::Graph& g, DataWriter* data);

Status fill_attribute(onnx::AttributeProto* ap, const std::string& name, const Attribute& a, const ir::Node& n,
                      DataWriter* data) {
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
      IGNIS_RETURN_IF_ERROR(fill_graph(ap->mutable_g(), *a.graph, data));
      break;
    default:
      return unsupported(str_cat(n.label(), ": attribute '", name, "' of kind ", attribute_kind_name(a.kind),
                                 " cannot be written"));
  }
  return Status::ok();
}

// Writes `g`'s inputs, outputs, initializers and nodes. A node's trailing outer-scope inputs
// are implicit in ONNX: where a pass renamed one, the body is written reading the new name.
// With `data`, large initializers go to the external data file.
Status fill_graph(onnx::GraphProto* gp, const ir::Graph& graph, DataWriter* data) {
  ir::Graph g = graph;  // a copy to edit: initializer data is shared
  ir::sync_outer_reads(g);
  gp->set_name(g.name.empty() ? "ignis" : g.name);
  for (const auto& in : g.inputs) IGNIS_RETURN_IF_ERROR(fill_value_info(gp->add_input(), in));
  for (const auto& out : g.outputs) IGNIS_RETURN_IF_ERROR(fill_value_info(gp->add_output(), out));
  // Sorted so the same graph always serializes to the same bytes.
  std::vector<const std::pair<const std::string, Tensor>*> inits;
  for (const auto& kv : g.initializers) inits.push_back(&kv);
  std::sort(inits.begin(), inits.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (const auto* kv : inits) fill_tensor(gp->add_initializer(), kv->first, kv->second, data);
  for (const auto& n : g.nodes) {
    const size_t declared = ir::declared_input_count(n);
    auto* np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    np->set_domain(n.domain);
    for (size_t i = 0; i < declared; ++i) np->add_input(n.inputs[i]);
    for (const auto& o : n.outputs) np->add_output(o);
    for (const auto& [name, a] : n.attrs.items()) IGNIS_RETURN_IF_ERROR(fill_attribute(np->add_attribute(), name, a, n, data));
  }
  return Status::ok();
}

Status fill_model(onnx::ModelProto* mp, const ir::Graph& g, DataWriter* data) {
  mp->set_ir_version(std::max<int64_t>(g.ir_version, 7));
  mp->set_producer_name("ignis");
  mp->set_producer_version("0.1.0");
  for (const auto& [domain, version] : g.opsets) {
    auto* os = mp->add_opset_import();
    os->set_domain(domain);
    os->set_version(version);
  }
  return fill_graph(mp->mutable_graph(), g, data);
}

std::string too_large(size_t bytes) {
  return str_cat("the model would take ", bytes, " bytes, more than one protobuf message holds (2 GiB)");
}

// Writes into `tmp`, then renames it to `path`; the temporary file is removed on failure.
class StagedFile {
 public:
  explicit StagedFile(std::string path) : path_(std::move(path)), tmp_(str_cat(path_, ".tmp", ::getpid())) {}
  ~StagedFile() {
    if (!committed_) std::remove(tmp_.c_str());
  }
  Result<std::ofstream*> open() {
    out_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!out_) return not_found(str_cat("cannot write '", tmp_, "'"));
    return &out_;
  }
  Status close() {
    out_.close();
    return out_ ? Status::ok() : internal_error(str_cat("write to '", tmp_, "' failed (disk full?)"));
  }
  Status commit() {
    std::error_code ec;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) return internal_error(str_cat("cannot rename '", tmp_, "' to '", path_, "': ", ec.message()));
    committed_ = true;
    return Status::ok();
  }

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace

Result<std::string> export_model(const ir::Graph& g) {
  onnx::ModelProto mp;
  IGNIS_RETURN_IF_ERROR(fill_model(&mp, g, nullptr));
  const size_t size = mp.ByteSizeLong();
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
    return unsupported(str_cat(too_large(size), "; write it to a file to put its weights in external data"));
  std::string bytes;
  if (!mp.SerializeToString(&bytes)) return internal_error("serializing the model failed");
  return bytes;
}

Result<ExportedFiles> export_model_file(const ir::Graph& g, const std::string& path, const ExportOptions& options) {
  ExportedFiles files;
  onnx::ModelProto mp;
  const bool external = stored_initializer_bytes(g) > options.external_data_threshold;
  std::optional<StagedFile> data_file;
  if (external) {
    const std::string location = std::filesystem::path(path).filename().string() + ".data";
    files.data_path = (std::filesystem::path(path).parent_path() / location).string();
    data_file.emplace(files.data_path);
    IGNIS_ASSIGN_OR_RETURN(std::ofstream * out, data_file->open());
    DataWriter writer(out, location, options.external_min_bytes);
    IGNIS_RETURN_IF_ERROR(fill_model(&mp, g, &writer));
    IGNIS_RETURN_IF_ERROR(data_file->close());
    files.data_bytes = writer.bytes_written();
  } else {
    IGNIS_RETURN_IF_ERROR(fill_model(&mp, g, nullptr));
  }
  const size_t size = mp.ByteSizeLong();
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
    return unsupported(str_cat(too_large(size), " even with its large weights in external data"));
  StagedFile model_file(path);
  IGNIS_ASSIGN_OR_RETURN(std::ofstream * out, model_file.open());
  if (!mp.SerializeToOstream(out)) return internal_error(str_cat("serializing the model to '", path, "' failed"));
  IGNIS_RETURN_IF_ERROR(model_file.close());
  // Data first: the model never names a data file that is not in place yet.
  if (data_file) IGNIS_RETURN_IF_ERROR(data_file->commit());
  IGNIS_RETURN_IF_ERROR(model_file.commit());
  files.model_bytes = static_cast<int64_t>(size);
  return files;
}

}  // namespace ignis::onnx_io
