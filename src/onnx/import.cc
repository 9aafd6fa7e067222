// SPDX-License-Identifier: Apache-2.0
// Converts onnx.ModelProto into ir::Graph, validating what the IR relies on (known dtypes,
// element counts matching dims, external data inside the model folder) so later stages can
// trust it. External data is memory-mapped (external_data.h). Protobuf exceptions and parse
// failures become Status values here.
#include "onnx/import.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <limits>
#include <map>
#include <memory>

#include "core/low_bit.h"
#include "core/strings.h"
#include "onnx/external_data.h"
#include "onnx/type_text.h"

namespace ignis::onnx_io {
namespace {

std::string normalize_domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

Result<Shape> convert_dims(const google::protobuf::RepeatedField<int64_t>& dims, const std::string& what) {
  if (dims.size() > Shape::kMaxRank)
    return unsupported(str_cat(what, ": rank ", dims.size(), " exceeds the supported maximum of ", Shape::kMaxRank));
  Shape s;
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0) return invalid_model(str_cat(what, ": negative dimension ", d));
    if (d > 0 && numel > std::numeric_limits<int64_t>::max() / d)
      return invalid_model(str_cat(what, ": element count overflows"));
    numel *= d;
    s.push_back(d);
  }
  return s;
}

// The location, offset and length keys of `tp.external_data` (other keys, e.g. checksum, are
// ignored).
ExternalLocation external_location(const onnx::TensorProto& tp) {
  ExternalLocation loc;
  for (const auto& kv : tp.external_data()) {
    if (kv.key() == "location") loc.location = kv.value();
    else if (kv.key() == "offset") loc.offset = std::atoll(kv.value().c_str());
    else if (kv.key() == "length") loc.length = std::atoll(kv.value().c_str());
  }
  return loc;
}

template <class Field>
Status check_count(const Field& f, int64_t numel, const std::string& what) {
  if (static_cast<int64_t>(f.size()) != numel)
    return invalid_model(str_cat(what, ": has ", f.size(), " values for ", numel, " elements"));
  return Status::ok();
}

// The 4- and 2-bit types: raw_data, external data and int32_data (one packed byte per value)
// all hold the packed stream, low bits first; memory holds one byte per element.
Result<Tensor> convert_packed_tensor(const onnx::TensorProto& tp, ExternalData& external, DType dt,
                                     const Shape& shape, const std::string& what) {
  const int64_t numel = shape.numel();
  const size_t bytes = low_bit_packed_bytes(dt, numel);
  if (tp.data_location() == onnx::TensorProto::EXTERNAL) {  // unpacked straight from the mapping
    IGNIS_ASSIGN_OR_RETURN(ExternalBytes packed,
                           external.bytes(external_location(tp), static_cast<int64_t>(bytes), what));
    Tensor t = Tensor::empty(dt, shape);
    if (numel > 0) low_bit_unpack(dt, reinterpret_cast<const uint8_t*>(packed.data), numel, static_cast<uint8_t*>(t.data()));
    packed.drop_pages();
    return t;
  }
  std::string packed;
  if (tp.has_raw_data()) {
    packed = tp.raw_data();
  } else {
    for (int32_t v : tp.int32_data()) packed.push_back(static_cast<char>(static_cast<uint8_t>(v)));
  }
  if (packed.size() != bytes)
    return invalid_model(str_cat(what, ": has ", packed.size(), " packed bytes for ", numel, " ", dtype_name(dt),
                                 " elements, expected ", bytes));
  Tensor t = Tensor::empty(dt, shape);
  low_bit_unpack(dt, reinterpret_cast<const uint8_t*>(packed.data()), numel, static_cast<uint8_t*>(t.data()));
  return t;
}

// String tensors keep their elements in string_data (bytes, not necessarily UTF-8).
Result<Tensor> convert_string_tensor(const onnx::TensorProto& tp, const std::string& what) {
  if (tp.data_location() == onnx::TensorProto::EXTERNAL)
    return unsupported(str_cat(what, ": string tensors in external data are not supported"));
  IGNIS_ASSIGN_OR_RETURN(Shape shape, convert_dims(tp.dims(), what));
  IGNIS_RETURN_IF_ERROR(check_count(tp.string_data(), shape.numel(), what));
  Tensor t = Tensor::empty(DType::String, shape);
  for (int64_t i = 0; i < shape.numel(); ++i) t.data_as<std::string>()[i] = tp.string_data(static_cast<int>(i));
  return t;
}

// With `owned` (the same proto, mutable), raw_data is moved into the tensor instead of copied:
// the tensor keeps the string alive. Its data is then 16-byte aligned (malloc), not 64; kernels
// already accept any alignment of their inputs, which may be views of caller memory. External
// data is a view of its mapped file, aligned to the element size (or a copy where it is not).
Result<Tensor> convert_tensor(const onnx::TensorProto& tp, ExternalData& external,
                              onnx::TensorProto* owned = nullptr) {
  const std::string what = str_cat("tensor '", tp.name(), "'");
  if (tp.data_type() == onnx::TensorProto::STRING) return convert_string_tensor(tp, what);
  auto dt = dtype_from_onnx(tp.data_type());
  if (!dt) return unsupported(str_cat(what, ": element type ", tp.data_type(), " is not supported"));
  if (tp.has_segment()) return unsupported(str_cat(what, ": segmented tensors are not supported"));
  IGNIS_ASSIGN_OR_RETURN(Shape shape, convert_dims(tp.dims(), what));
  const int64_t numel = shape.numel();
  const size_t esize = dtype_size(*dt);
  if (numel > (int64_t{1} << 40)) return invalid_model(str_cat(what, ": implausibly large (", numel, " elements)"));
  if (dtype_bits(*dt) < 8) return convert_packed_tensor(tp, external, *dt, shape, what);
  if (tp.data_location() == onnx::TensorProto::EXTERNAL) return external.tensor(external_location(tp), *dt, shape, what);
  if (owned && tp.has_raw_data() && numel > 0) {
    if (tp.raw_data().size() != numel * esize)
      return invalid_model(str_cat(what, ": raw_data has ", tp.raw_data().size(), " bytes, expected ", numel * esize));
    std::shared_ptr<std::string> raw(owned->release_raw_data());
    return Tensor::wrap(*dt, shape, raw->data(), raw);
  }
  Tensor t = Tensor::empty(*dt, shape);
  char* dst = static_cast<char*>(t.data());
  if (tp.has_raw_data()) {
    const std::string& raw = tp.raw_data();
    if (raw.size() != numel * esize)
      return invalid_model(str_cat(what, ": raw_data has ", raw.size(), " bytes, expected ", numel * esize));
    if (!raw.empty()) std::memcpy(dst, raw.data(), raw.size());
    return t;
  }
  switch (*dt) {
    case DType::F32:
      IGNIS_RETURN_IF_ERROR(check_count(tp.float_data(), numel, what));
      if (numel) std::memcpy(dst, tp.float_data().data(), numel * 4);
      break;
    case DType::F64:
      IGNIS_RETURN_IF_ERROR(check_count(tp.double_data(), numel, what));
      if (numel) std::memcpy(dst, tp.double_data().data(), numel * 8);
      break;
    case DType::I64:
      IGNIS_RETURN_IF_ERROR(check_count(tp.int64_data(), numel, what));
      if (numel) std::memcpy(dst, tp.int64_data().data(), numel * 8);
      break;
    case DType::U32:
    case DType::U64:
      IGNIS_RETURN_IF_ERROR(check_count(tp.uint64_data(), numel, what));
      for (int64_t i = 0; i < numel; ++i) {
        if (*dt == DType::U32) reinterpret_cast<uint32_t*>(dst)[i] = static_cast<uint32_t>(tp.uint64_data(i));
        else reinterpret_cast<uint64_t*>(dst)[i] = tp.uint64_data(i);
      }
      break;
    default: {
      // int32_data carries every type narrower than 32 bits (fp16/bf16 as their bit patterns).
      IGNIS_RETURN_IF_ERROR(check_count(tp.int32_data(), numel, what));
      for (int64_t i = 0; i < numel; ++i) {
        const int32_t v = tp.int32_data(i);
        switch (esize) {
          case 1: reinterpret_cast<uint8_t*>(dst)[i] = static_cast<uint8_t>(v); break;
          case 2: reinterpret_cast<uint16_t*>(dst)[i] = static_cast<uint16_t>(v); break;
          default: reinterpret_cast<int32_t*>(dst)[i] = v; break;
        }
      }
      if (*dt == DType::Bool)
        for (int64_t i = 0; i < numel; ++i) dst[i] = dst[i] != 0;
    }
  }
  return t;
}

Result<ValueInfo> convert_value_info(const onnx::ValueInfoProto& vi) {
  ValueInfo out;
  out.name = vi.name();
  if (!vi.has_type() || vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET)
    return out;  // type unknown: validated at run time
  if (!vi.type().has_tensor_type()) {
    auto text = type_text(vi.type());
    if (!text) return Status(text.error().code(), str_cat("value '", vi.name(), "': ", text.error().message()));
    out.type_text = std::move(*text);
    switch (vi.type().value_case()) {
      case onnx::TypeProto::kSequenceType: out.dtype = DType::Sequence; break;
      case onnx::TypeProto::kOptionalType: out.dtype = DType::Optional; break;
      default: out.dtype = DType::Map; break;
    }
    return out;
  }
  const auto& tt = vi.type().tensor_type();
  auto dt = dtype_from_onnx(tt.elem_type());
  if (!dt) return unsupported(str_cat("value '", vi.name(), "': element type ", tt.elem_type(), " is not supported"));
  out.dtype = *dt;
  if (tt.has_shape()) {
    out.has_shape = true;
    if (tt.shape().dim_size() > Shape::kMaxRank)
      return unsupported(str_cat("value '", vi.name(), "': rank ", tt.shape().dim_size(), " exceeds ", Shape::kMaxRank));
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        out.dims.push_back(d.dim_value());
        out.dim_names.emplace_back();
      } else {
        out.dims.push_back(-1);
        out.dim_names.push_back(d.has_dim_param() ? d.dim_param() : "");
      }
    }
  }
  return out;
}

Result<ir::Graph> convert_graph(onnx::GraphProto& gp, ExternalData& external,
                                const std::map<std::string, int64_t>& opsets, int depth);

// Control-flow bodies nest; a model nesting them deeper than this is refused, not recursed into.
constexpr int kMaxGraphDepth = 64;

Result<Attribute> convert_attribute(onnx::AttributeProto& ap, ExternalData& external,
                                    const std::map<std::string, int64_t>& opsets, int depth) {
  Attribute a;
  auto type = ap.type();
  if (type == onnx::AttributeProto::UNDEFINED) {  // very old models omit the type
    if (ap.has_f()) type = onnx::AttributeProto::FLOAT;
    else if (ap.has_i()) type = onnx::AttributeProto::INT;
    else if (ap.has_s()) type = onnx::AttributeProto::STRING;
    else if (ap.has_t()) type = onnx::AttributeProto::TENSOR;
    else if (ap.floats_size()) type = onnx::AttributeProto::FLOATS;
    else if (ap.ints_size()) type = onnx::AttributeProto::INTS;
    else if (ap.strings_size()) type = onnx::AttributeProto::STRINGS;
  }
  switch (type) {
    case onnx::AttributeProto::FLOAT: a.kind = Attribute::Kind::Float; a.f = ap.f(); break;
    case onnx::AttributeProto::INT: a.kind = Attribute::Kind::Int; a.i = ap.i(); break;
    case onnx::AttributeProto::STRING: a.kind = Attribute::Kind::String; a.s = ap.s(); break;
    case onnx::AttributeProto::FLOATS: a.kind = Attribute::Kind::Floats; a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
    case onnx::AttributeProto::INTS: a.kind = Attribute::Kind::Ints; a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
    case onnx::AttributeProto::STRINGS: a.kind = Attribute::Kind::Strings; a.strings.assign(ap.strings().begin(), ap.strings().end()); break;
    case onnx::AttributeProto::TENSOR: {
      a.kind = Attribute::Kind::Tensor;
      auto t = convert_tensor(ap.t(), external);
      if (!t) {
        // A tensor attribute we cannot represent (e.g. a string value) is only fatal for ops that read it.
        if (t.error().code() != StatusCode::Unsupported) return t.error();
        a.kind = Attribute::Kind::Other;
        break;
      }
      a.t = std::move(*t);
      break;
    }
    case onnx::AttributeProto::GRAPH: {
      if (depth >= kMaxGraphDepth) return unsupported(str_cat("subgraphs nest deeper than ", kMaxGraphDepth, " levels"));
      IGNIS_ASSIGN_OR_RETURN(ir::Graph body, convert_graph(*ap.mutable_g(), external, opsets, depth + 1));
      a.kind = Attribute::Kind::Graph;
      a.graph = std::make_shared<const ir::Graph>(std::move(body));
      break;
    }
    case onnx::AttributeProto::GRAPHS: a.kind = Attribute::Kind::Other; break;
    default: a.kind = Attribute::Kind::Other; break;
  }
  return a;
}

// Constant nodes become initializers so the planner sees their values directly.
Result<Tensor> constant_value(const ir::Node& n) {
  if (const Tensor* t = n.attrs.get_tensor("value")) return *t;
  auto scalar_or_list = [](DType dt, auto values, bool scalar) {
    Shape s = scalar ? Shape{} : Shape{static_cast<int64_t>(values.size())};
    Tensor t = Tensor::zeros(dt, s);
    using V = typename decltype(values)::value_type;
    if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(V));
    return t;
  };
  if (const Attribute* a = n.attrs.find("value_float"))
    return scalar_or_list(DType::F32, std::vector<float>{a->f}, true);
  if (const Attribute* a = n.attrs.find("value_floats")) return scalar_or_list(DType::F32, a->floats, false);
  if (const Attribute* a = n.attrs.find("value_int")) return scalar_or_list(DType::I64, std::vector<int64_t>{a->i}, true);
  if (const Attribute* a = n.attrs.find("value_ints")) return scalar_or_list(DType::I64, a->ints, false);
  if (n.attrs.has("value_string") || n.attrs.has("value_strings") || n.attrs.has("value"))
    return unsupported(str_cat(n.label(), ": string constants are not supported"));
  if (n.attrs.has("sparse_value")) return unsupported(str_cat(n.label(), ": sparse constants are not supported"));
  return invalid_model(str_cat(n.label(), ": Constant without a value attribute"));
}

// A graph (the model's, or a control-flow body at `depth` > 0), taken by mutable reference to
// move each initializer's raw bytes into its tensor: the model's weights are held once, never
// copied. Bodies share the model's opset imports.
Result<ir::Graph> convert_graph(onnx::GraphProto& gp, ExternalData& external,
                                const std::map<std::string, int64_t>& opsets, int depth) {
  ir::Graph g;
  g.opsets = opsets;
  g.name = gp.name();
  for (auto& init : *gp.mutable_initializer()) {
    IGNIS_ASSIGN_OR_RETURN(Tensor t, convert_tensor(init, external, &init));
    g.initializers[init.name()] = std::move(t);
  }
  if (gp.sparse_initializer_size() > 0) return unsupported("sparse initializers are not supported");
  for (const auto& vi : gp.input()) {
    if (g.initializers.count(vi.name())) continue;  // an initializer with a default: treated as constant
    IGNIS_ASSIGN_OR_RETURN(ValueInfo info, convert_value_info(vi));
    g.inputs.push_back(std::move(info));
  }
  for (const auto& vi : gp.output()) {
    IGNIS_ASSIGN_OR_RETURN(ValueInfo info, convert_value_info(vi));
    g.outputs.push_back(std::move(info));
  }

  int unnamed = 0;
  for (auto& np : *gp.mutable_node()) {
    ir::Node n;
    n.name = np.name().empty() ? str_cat(np.op_type(), "_", unnamed++) : np.name();
    n.op_type = np.op_type();
    n.domain = normalize_domain(np.domain());
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (auto& ap : *np.mutable_attribute()) {
      IGNIS_ASSIGN_OR_RETURN(Attribute a, convert_attribute(ap, external, opsets, depth));
      n.attrs.set(ap.name(), std::move(a));
    }
    if (n.op_type == "Constant" && n.domain.empty() && n.outputs.size() == 1) {
      IGNIS_ASSIGN_OR_RETURN(Tensor t, constant_value(n));
      g.initializers[n.outputs[0]] = std::move(t);
      continue;
    }
    // Values the node's bodies read from this or an enclosing scope become inputs of the node.
    for (auto& name : ir::outer_scope_names(n.attrs)) n.inputs.push_back(std::move(name));
    g.nodes.push_back(std::move(n));
  }
  return g;
}

Result<ir::Graph> convert_model(onnx::ModelProto& mp, const std::string& base_dir, int64_t* external_bytes = nullptr) {
  std::map<std::string, int64_t> opsets;
  for (const auto& os : mp.opset_import()) opsets[normalize_domain(os.domain())] = os.version();
  if (!opsets.count("")) opsets[""] = 1;  // IR 1-2 models predate opset_import
  if (!mp.has_graph()) return invalid_model("model has no graph");
  ExternalData external(base_dir);
  IGNIS_ASSIGN_OR_RETURN(ir::Graph g, convert_graph(*mp.mutable_graph(), external, opsets, 0));
  if (external_bytes) *external_bytes = external.file_bytes();
  g.ir_version = mp.ir_version();
  g.producer = mp.producer_name();
  return g;
}

}  // namespace

Result<ir::Graph> import_model(std::span<const std::byte> bytes, const std::string& base_dir) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return unsupported("models over 2 GiB must keep their weights as external data");
  try {
    onnx::ModelProto mp;
    if (!mp.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return invalid_model("not a valid ONNX model: protobuf parsing failed (truncated or not an ONNX file)");
    if (!mp.has_graph() && mp.opset_import_size() == 0)
      return invalid_model("not a valid ONNX model: no graph and no opset imports");
    return convert_model(mp, base_dir);
  } catch (const std::exception& e) {
    return invalid_model(str_cat("not a valid ONNX model: ", e.what()));
  }
}

Result<ir::Graph> import_model_file(const std::string& path, const std::string& base_dir, int64_t* external_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return not_found(str_cat("cannot open model file '", path, "'"));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return not_found(str_cat("cannot read model file '", path, "'"));
  if (st.st_size > static_cast<off_t>(std::numeric_limits<int>::max()))
    return unsupported("models over 2 GiB must keep their weights as external data");
  try {
    onnx::ModelProto mp;
    google::protobuf::io::FileInputStream stream(fd, 1 << 20);
    if (!mp.ParseFromZeroCopyStream(&stream)) {
      if (stream.GetErrno() != 0) return not_found(str_cat("reading model file '", path, "' failed"));
      return invalid_model("not a valid ONNX model: protobuf parsing failed (truncated or not an ONNX file)");
    }
    if (!mp.has_graph() && mp.opset_import_size() == 0)
      return invalid_model("not a valid ONNX model: no graph and no opset imports");
    return convert_model(mp, base_dir, external_bytes);
  } catch (const std::exception& e) {
    return invalid_model(str_cat("not a valid ONNX model: ", e.what()));
  }
}

Result<Tensor> import_tensor_proto(std::span<const std::byte> bytes, std::string* name) {
  try {
    onnx::TensorProto tp;
    if (!tp.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return invalid_argument("not a valid ONNX TensorProto: protobuf parsing failed");
    if (name) *name = tp.name();
    ExternalData external("");
    return convert_tensor(tp, external);
  } catch (const std::exception& e) {
    return invalid_argument(str_cat("not a valid ONNX TensorProto: ", e.what()));
  }
}

namespace {

// A tensor of a test-data value file: no model folder, so no external data.
Result<Tensor> convert_inline(const onnx::TensorProto& tp) {
  ExternalData none("");
  return convert_tensor(tp, none);
}

Result<Tensor> convert_value(const onnx::SequenceProto& sp, int depth);
Result<Tensor> convert_value(const onnx::OptionalProto& op, int depth);
Result<Tensor> convert_value(const onnx::MapProto& mp, int depth);

constexpr int kMaxValueDepth = 16;

// Converts each element of a repeated proto field with `convert` into `items`.
template <class Field, class Convert>
Status convert_all(const Field& field, Convert convert, std::vector<Tensor>* items) {
  for (const auto& element : field) {
    IGNIS_ASSIGN_OR_RETURN(Tensor t, convert(element));
    items->push_back(std::move(t));
  }
  return Status::ok();
}

Result<Tensor> convert_value(const onnx::SequenceProto& sp, int depth) {
  if (depth > kMaxValueDepth) return invalid_argument("sequence nests too deeply");
  std::vector<Tensor> items;
  auto nested = [&](const auto& inner) { return convert_value(inner, depth + 1); };
  switch (sp.elem_type()) {
    case onnx::SequenceProto::TENSOR: IGNIS_RETURN_IF_ERROR(convert_all(sp.tensor_values(), convert_inline, &items)); break;
    case onnx::SequenceProto::SEQUENCE: IGNIS_RETURN_IF_ERROR(convert_all(sp.sequence_values(), nested, &items)); break;
    case onnx::SequenceProto::MAP: IGNIS_RETURN_IF_ERROR(convert_all(sp.map_values(), nested, &items)); break;
    case onnx::SequenceProto::OPTIONAL: IGNIS_RETURN_IF_ERROR(convert_all(sp.optional_values(), nested, &items)); break;
    default: return unsupported(str_cat("sequence element type ", sp.elem_type(), " is not supported"));
  }
  const DType element = items.empty() ? DType::Undefined : items[0].dtype();
  for (const Tensor& t : items)
    if (t.dtype() != element) return invalid_argument("sequence items have different types");
  return Tensor::sequence(element, std::move(items));
}

Result<Tensor> convert_value(const onnx::OptionalProto& op, int depth) {
  if (depth > kMaxValueDepth) return invalid_argument("optional nests too deeply");
  switch (op.elem_type()) {
    case onnx::OptionalProto::TENSOR: {
      if (!op.has_tensor_value()) return Tensor::optional(Tensor());
      IGNIS_ASSIGN_OR_RETURN(Tensor t, convert_inline(op.tensor_value()));
      return Tensor::optional(std::move(t));
    }
    case onnx::OptionalProto::SEQUENCE: {
      if (!op.has_sequence_value()) return Tensor::optional(Tensor(), DType::Sequence);
      IGNIS_ASSIGN_OR_RETURN(Tensor t, convert_value(op.sequence_value(), depth + 1));
      return Tensor::optional(std::move(t));
    }
    case onnx::OptionalProto::UNDEFINED: return Tensor::optional(Tensor());
    default: return unsupported(str_cat("optional element type ", op.elem_type(), " is not supported"));
  }
}

// A map's values are a sequence of tensors; ignis keeps them joined along a new axis 0.
Result<Tensor> convert_value(const onnx::MapProto& mp, int depth) {
  if (depth > kMaxValueDepth) return invalid_argument("map nests too deeply");
  Tensor keys;
  if (mp.key_type() == onnx::TensorProto::STRING) {
    keys = Tensor::empty(DType::String, Shape{mp.string_keys_size()});
    for (int i = 0; i < mp.string_keys_size(); ++i) keys.data_as<std::string>()[i] = mp.string_keys(i);
  } else if (mp.key_type() == onnx::TensorProto::INT64) {
    keys = Tensor::empty(DType::I64, Shape{mp.keys_size()});
    for (int i = 0; i < mp.keys_size(); ++i) keys.data_as<int64_t>()[i] = mp.keys(i);
  } else {
    return unsupported(str_cat("map key type ", mp.key_type(), " is not supported"));
  }
  IGNIS_ASSIGN_OR_RETURN(Tensor seq, convert_value(mp.values(), depth + 1));
  const auto& items = seq.as_sequence().items;
  if (static_cast<int64_t>(items.size()) != keys.numel())
    return invalid_argument(str_cat("map has ", keys.numel(), " keys and ", items.size(), " values"));
  if (items.empty()) return Tensor::map(keys, Tensor::empty(DType::F32, Shape{0}));
  Shape shape{static_cast<int64_t>(items.size())};
  for (int64_t d : items[0].shape()) shape.push_back(d);
  if (!dtype_is_plain(items[0].dtype())) return unsupported("map values must be numeric tensors");
  Tensor values = Tensor::empty(items[0].dtype(), shape);
  const size_t bytes = items[0].nbytes();
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].dtype() != items[0].dtype() || !(items[i].shape() == items[0].shape()))
      return invalid_argument("map values have different types or shapes");
    if (bytes) std::memcpy(static_cast<char*>(values.data()) + i * bytes, items[i].data(), bytes);
  }
  return Tensor::map(keys, values);
}

template <class Proto>
Result<Tensor> parse_value(std::span<const std::byte> bytes, std::string_view what) {
  Proto p;
  if (!p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return invalid_argument(str_cat("not a valid ONNX ", what, ": protobuf parsing failed"));
  return convert_value(p, 0);
}

}  // namespace

Result<Tensor> import_value_proto(std::span<const std::byte> bytes, DType kind) {
  try {
    switch (kind) {
      case DType::Sequence: return parse_value<onnx::SequenceProto>(bytes, "SequenceProto");
      case DType::Optional: return parse_value<onnx::OptionalProto>(bytes, "OptionalProto");
      case DType::Map: return parse_value<onnx::MapProto>(bytes, "MapProto");
      default: return import_tensor_proto(bytes, nullptr);
    }
  } catch (const std::exception& e) {
    return invalid_argument(str_cat("not a valid ONNX value: ", e.what()));
  }
}

}  // namespace ignis::onnx_io
