// SPDX-License-Identifier: Apache-2.0
#include "serve/grpc/grpc_codec.h"

#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "core/strings.h"
#include "serve/datatype.h"

namespace ignis::serve {
namespace {

using ParameterMap = google::protobuf::Map<std::string, inference::InferParameter>;

constexpr size_t kMaxRank = 16;

// Element count of a shape, rejecting negative extents and counts past `limit`.
Result<int64_t> checked_numel(const std::vector<int64_t>& shape, int64_t limit, const std::string& name) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return invalid_argument(str_cat("input '", name, "': shape ", str_list(shape), " has a negative extent"));
    if (d != 0 && n > limit / d)
      return invalid_argument(str_cat("input '", name, "': shape ", str_list(shape), " has more than ", limit,
                                      " elements"));
    n *= d;
  }
  return n;
}

// A request parameter given as uint64_param, or as a non-negative int64_param (tritonclient
// sends `priority` as the first and `timeout` as the second).
Result<std::optional<uint64_t>> uint_param(const ParameterMap& params, const char* key) {
  auto it = params.find(key);
  if (it == params.end()) return std::optional<uint64_t>();
  const inference::InferParameter& p = it->second;
  if (p.parameter_choice_case() == inference::InferParameter::kUint64Param)
    return std::optional<uint64_t>(p.uint64_param());
  if (p.parameter_choice_case() == inference::InferParameter::kInt64Param && p.int64_param() >= 0)
    return std::optional<uint64_t>(static_cast<uint64_t>(p.int64_param()));
  return invalid_argument(str_cat("request parameter '", key, "' must be a non-negative integer"));
}

// BYTES in raw form: each element a 4-byte little-endian length and its bytes.
Status split_raw_strings(const std::string& raw, int64_t count, const std::string& name,
                         std::vector<std::string>* out) {
  const size_t n = raw.size();
  size_t pos = 0;
  while (pos < n) {
    if (n - pos < 4) return invalid_argument(str_cat("input '", name, "': BYTES data ends inside a length prefix"));
    uint32_t len = 0;
    std::memcpy(&len, raw.data() + pos, 4);
    pos += 4;
    if (len > n - pos)
      return invalid_argument(str_cat("input '", name, "': BYTES element ", out->size(), " claims ", len,
                                      " bytes but only ", n - pos, " remain"));
    if (static_cast<int64_t>(out->size()) >= count)
      return invalid_argument(str_cat("input '", name, "': BYTES data holds more elements than its shape's ", count));
    out->emplace_back(raw.data() + pos, len);
    pos += len;
  }
  if (static_cast<int64_t>(out->size()) != count)
    return invalid_argument(str_cat("input '", name, "': BYTES data holds ", out->size(),
                                    " elements but its shape needs ", count));
  return Status::ok();
}

int contents_elements(const inference::InferTensorContents& c) {
  return c.bool_contents_size() + c.int_contents_size() + c.int64_contents_size() + c.uint_contents_size() +
         c.uint64_contents_size() + c.fp32_contents_size() + c.fp64_contents_size() + c.bytes_contents_size();
}

// Copies one typed contents field into `dst` as T, checking the count and each value's range
// (int_contents carries INT8 and INT16 as int32, uint_contents UINT8 and UINT16 as uint32).
template <class T, class Field>
Status copy_contents(const Field& field, const char* field_name, const InferInput& x, int64_t count, void* dst) {
  if (field.size() != count)
    return invalid_argument(str_cat("input '", x.name, "': ", kserve_name(x.dtype), " data goes in contents.",
                                    field_name, ", which has ", field.size(), " elements but shape ",
                                    str_list(x.shape), " needs ", count));
  auto* p = static_cast<T*>(dst);
  for (int64_t i = 0; i < count; ++i) {
    const auto v = field.Get(static_cast<int>(i));
    if constexpr (std::is_same_v<decltype(v), const bool>) {
      p[i] = static_cast<T>(v ? 1 : 0);
    } else {
      if constexpr (std::is_integral_v<T>) {
        if (!std::in_range<T>(v))
          return invalid_argument(str_cat("input '", x.name, "': element ", i, " (", v, ") is outside the range of ",
                                          kserve_name(x.dtype)));
      }
      p[i] = static_cast<T>(v);
    }
  }
  return Status::ok();
}

Status decode_contents(const inference::InferTensorContents& c, int64_t count, InferInput* x) {
  if (x->dtype == DType::String) {
    if (c.bytes_contents_size() != count)
      return invalid_argument(str_cat("input '", x->name, "': BYTES data goes in contents.bytes_contents, which has ",
                                      c.bytes_contents_size(), " elements but shape ", str_list(x->shape), " needs ",
                                      count));
    x->tensor = string_tensor(x->shape, {c.bytes_contents().begin(), c.bytes_contents().end()});
    return Status::ok();
  }
  if (x->dtype == DType::F16 || x->dtype == DType::BF16)
    return invalid_argument(str_cat("input '", x->name, "': ", kserve_name(x->dtype),
                                    " has no typed contents field; send its data in raw_input_contents"));
  x->tensor = Tensor::empty(x->dtype, Shape(x->shape));
  void* d = x->tensor.data();
  switch (x->dtype) {
    case DType::Bool: return copy_contents<uint8_t>(c.bool_contents(), "bool_contents", *x, count, d);
    case DType::I8: return copy_contents<int8_t>(c.int_contents(), "int_contents", *x, count, d);
    case DType::I16: return copy_contents<int16_t>(c.int_contents(), "int_contents", *x, count, d);
    case DType::I32: return copy_contents<int32_t>(c.int_contents(), "int_contents", *x, count, d);
    case DType::I64: return copy_contents<int64_t>(c.int64_contents(), "int64_contents", *x, count, d);
    case DType::U8: return copy_contents<uint8_t>(c.uint_contents(), "uint_contents", *x, count, d);
    case DType::U16: return copy_contents<uint16_t>(c.uint_contents(), "uint_contents", *x, count, d);
    case DType::U32: return copy_contents<uint32_t>(c.uint_contents(), "uint_contents", *x, count, d);
    case DType::U64: return copy_contents<uint64_t>(c.uint64_contents(), "uint64_contents", *x, count, d);
    case DType::F32: return copy_contents<float>(c.fp32_contents(), "fp32_contents", *x, count, d);
    case DType::F64: return copy_contents<double>(c.fp64_contents(), "fp64_contents", *x, count, d);
    default: return invalid_argument(str_cat("input '", x->name, "': unsupported datatype"));
  }
}

Status decode_raw(const std::string& raw, int64_t count, InferInput* x) {
  if (x->dtype == DType::String) {
    std::vector<std::string> elements;
    IGNIS_RETURN_IF_ERROR(split_raw_strings(raw, count, x->name, &elements));
    x->tensor = string_tensor(x->shape, std::move(elements));
    return Status::ok();
  }
  const size_t want = static_cast<size_t>(count) * dtype_size(x->dtype);
  if (raw.size() != want)
    return invalid_argument(str_cat("input '", x->name, "': raw_input_contents has ", raw.size(), " bytes but shape ",
                                    str_list(x->shape), " of ", kserve_name(x->dtype), " needs ", want));
  const Shape shape(x->shape);
  if (reinterpret_cast<uintptr_t>(raw.data()) % dtype_size(x->dtype) == 0) {
    x->tensor = Tensor::view(x->dtype, shape, raw.data());
  } else {
    x->tensor = Tensor::empty(x->dtype, shape);
    if (want) std::memcpy(x->tensor.data(), raw.data(), want);
  }
  return Status::ok();
}

}  // namespace

Status decode_grpc_infer_request(inference::ModelInferRequest* request, const DecodeLimits& limits,
                                 InferRequest* out) {
  out->model = request->model_name();
  out->version = request->model_version();
  out->id = request->id();
  IGNIS_ASSIGN_OR_RETURN(out->priority, uint_param(request->parameters(), "priority"));
  IGNIS_ASSIGN_OR_RETURN(out->timeout_us, uint_param(request->parameters(), "timeout"));

  const int n_inputs = request->inputs_size();
  if (n_inputs == 0) return invalid_argument("the request has no inputs");
  if (n_inputs > limits.max_inputs)
    return invalid_argument(
        str_cat("the request has ", n_inputs, " inputs, more than the limit of ", limits.max_inputs));
  const int n_raw = request->raw_input_contents_size();
  if (n_raw != 0 && n_raw != n_inputs)
    return invalid_argument(str_cat("the request has ", n_raw, " raw_input_contents for ", n_inputs,
                                    " inputs; give one per input, in order, or none"));
  // The raw buffers move into storage that the request keeps, so tensors can view them after
  // the gRPC message is gone; reserve() keeps short strings' inline bytes where they are.
  auto raw = std::make_shared<std::vector<std::string>>();
  raw->reserve(static_cast<size_t>(n_raw));
  for (std::string& s : *request->mutable_raw_input_contents()) raw->push_back(std::move(s));

  for (int i = 0; i < n_inputs; ++i) {
    const inference::ModelInferRequest::InferInputTensor& in = request->inputs(i);
    InferInput x;
    x.name = in.name();
    auto dtype = dtype_from_kserve(in.datatype());
    if (!dtype) return invalid_argument(str_cat("input '", x.name, "': unknown datatype '", in.datatype(), "'"));
    x.dtype = *dtype;
    if (static_cast<size_t>(in.shape_size()) > kMaxRank)
      return invalid_argument(str_cat("input '", x.name, "': shape has more than ", kMaxRank, " dimensions"));
    x.shape.assign(in.shape().begin(), in.shape().end());
    IGNIS_ASSIGN_OR_RETURN(int64_t count, checked_numel(x.shape, limits.max_elements, x.name));
    if (in.parameters().contains("shared_memory_region"))
      return unsupported(str_cat("input '", x.name, "': shared memory is not supported"));
    const bool has_contents = in.has_contents() && contents_elements(in.contents()) > 0;
    if (n_raw > 0) {
      if (has_contents)
        return invalid_argument(str_cat("input '", x.name, "' has both contents and raw_input_contents"));
      IGNIS_RETURN_IF_ERROR(decode_raw((*raw)[static_cast<size_t>(i)], count, &x));
    } else {
      if (!has_contents && count > 0)
        return invalid_argument(str_cat("input '", x.name, "' has no data: neither contents nor raw_input_contents"));
      IGNIS_RETURN_IF_ERROR(decode_contents(in.contents(), count, &x));
    }
    for (const auto& prev : out->inputs)
      if (prev.name == x.name) return invalid_argument(str_cat("input '", x.name, "' is given twice"));
    out->inputs.push_back(std::move(x));
  }

  for (const auto& o : request->outputs()) {
    RequestedOutput r;
    r.name = o.name();
    if (o.parameters().contains("classification"))
      return unsupported(str_cat("output '", r.name, "': the classification extension is not supported"));
    if (o.parameters().contains("shared_memory_region"))
      return unsupported(str_cat("output '", r.name, "': shared memory is not supported"));
    for (const auto& prev : out->outputs)
      if (prev.name == r.name) return invalid_argument(str_cat("output '", r.name, "' is requested twice"));
    out->outputs.push_back(std::move(r));
  }
  out->binary_output = true;
  out->storage = std::move(raw);
  return Status::ok();
}

void encode_grpc_infer_response(const InferResponse& r, inference::ModelInferResponse* out) {
  out->set_model_name(r.model);
  out->set_model_version(r.version);
  out->set_id(r.id);
  for (const auto& o : r.outputs) {
    inference::ModelInferResponse::InferOutputTensor* t = out->add_outputs();
    t->set_name(o.name);
    t->set_datatype(std::string(kserve_name(o.tensor.dtype())));
    for (int64_t d : o.tensor.shape()) t->add_shape(d);
    std::string* raw = out->add_raw_output_contents();
    if (o.tensor.dtype() == DType::String) *raw = serialize_strings(o.tensor);
    else if (o.tensor.nbytes()) raw->assign(static_cast<const char*>(o.tensor.data()), o.tensor.nbytes());
  }
}

namespace {

inference::DataType triton_data_type(DType t) {
  inference::DataType v = inference::TYPE_INVALID;
  if (!inference::DataType_Parse(std::string(triton_type_name(t)), &v)) return inference::TYPE_INVALID;
  return v;
}

void encode_queue_policy(const QueuePolicy& q, inference::ModelQueuePolicy* out) {
  out->set_timeout_action(q.delay_on_timeout ? inference::ModelQueuePolicy::DELAY
                                             : inference::ModelQueuePolicy::REJECT);
  out->set_default_timeout_microseconds(q.default_timeout_us);
  out->set_allow_timeout_override(q.allow_timeout_override);
  out->set_max_queue_size(q.max_queue_size);
}

}  // namespace

void encode_grpc_model_config(const ModelConfig& c, inference::ModelConfig* out) {
  out->set_name(c.name);
  out->set_platform(c.platform);
  out->set_backend(c.backend);
  inference::ModelVersionPolicy* policy = out->mutable_version_policy();
  switch (c.version_policy.kind) {
    case VersionPolicy::Kind::Latest:
      policy->mutable_latest()->set_num_versions(static_cast<uint32_t>(c.version_policy.latest));
      break;
    case VersionPolicy::Kind::All: policy->mutable_all(); break;
    case VersionPolicy::Kind::Specific: {
      inference::ModelVersionPolicy::Specific* specific = policy->mutable_specific();
      for (int64_t v : c.version_policy.specific) specific->add_versions(v);
      break;
    }
  }
  out->set_max_batch_size(static_cast<int32_t>(c.max_batch_size));
  for (const auto& t : c.inputs) {
    inference::ModelInput* in = out->add_input();
    in->set_name(t.name);
    in->set_data_type(triton_data_type(t.dtype));
    in->set_format(inference::ModelInput::FORMAT_NONE);
    for (int64_t d : t.dims) in->add_dims(d);
    in->set_optional(t.optional);
  }
  for (const auto& t : c.outputs) {
    inference::ModelOutput* o = out->add_output();
    o->set_name(t.name);
    o->set_data_type(triton_data_type(t.dtype));
    for (int64_t d : t.dims) o->add_dims(d);
  }
  if (c.dynamic_batching) {
    const DynamicBatching& b = *c.dynamic_batching;
    inference::ModelDynamicBatching* db = out->mutable_dynamic_batching();
    for (int64_t s : b.preferred_batch_size) db->add_preferred_batch_size(static_cast<int32_t>(s));
    db->set_max_queue_delay_microseconds(b.max_queue_delay_us);
    db->set_preserve_ordering(b.preserve_ordering);
    db->set_priority_levels(b.priority_levels);
    db->set_default_priority_level(b.default_priority_level);
    encode_queue_policy(b.default_queue_policy, db->mutable_default_queue_policy());
    for (const auto& [level, q] : b.priority_queue_policy)
      encode_queue_policy(q, &(*db->mutable_priority_queue_policy())[level]);
  }
  inference::ModelInstanceGroup* group = out->add_instance_group();
  group->set_name(c.name + "_0");
  group->set_kind(inference::ModelInstanceGroup::KIND_CPU);
  group->set_count(c.instance_count);
  out->set_default_model_filename(c.default_model_filename);
  for (const auto& [k, v] : c.parameters) (*out->mutable_parameters())[k].set_string_value(v);
  out->mutable_response_cache()->set_enable(c.response_cache);
  if (c.optimization) {
    // What parse_model_config reads back: -1 for basic rewrites, 1 for all of them.
    const bool basic = *c.optimization == OptLevel::None || *c.optimization == OptLevel::Basic;
    out->mutable_optimization()->mutable_graph()->set_level(basic ? -1 : 1);
  }
}

}  // namespace ignis::serve
