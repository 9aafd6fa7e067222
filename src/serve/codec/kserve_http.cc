// SPDX-License-Identifier: Apache-2.0
#include "serve/codec/kserve_http.h"

#include <simdjson.h>

#include <cstring>
#include <limits>

#include "core/half.h"
#include "core/strings.h"
#include "serve/datatype.h"
#include "serve/json_writer.h"

namespace ignis::serve {
namespace {

namespace dom = simdjson::dom;

constexpr int kMaxNesting = 32;

Status json_error(simdjson::error_code e) {
  return invalid_argument(str_cat("malformed JSON: ", simdjson::error_message(e)));
}

// Element count of a shape, rejecting negative extents and overflow past `limit`.
Result<int64_t> checked_numel(const std::vector<int64_t>& shape, int64_t limit, const std::string& name) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return invalid_argument(str_cat("input '", name, "': shape ", str_list(shape), " has a negative extent"));
    if (d != 0 && n > limit / d)
      return invalid_argument(str_cat("input '", name, "': shape ", str_list(shape), " has more than ", limit,
                                      " elements"));
    n *= d;
  }
  return n;
}

// Writes JSON numbers and booleans into a typed buffer, flattening nested arrays row-major.
class DataWriter {
 public:
  DataWriter(const std::string& name, DType dtype, void* dst, int64_t count)
      : name_(name), dtype_(dtype), dst_(static_cast<char*>(dst)), count_(count) {}

  Status write(dom::element e, int depth = 0) {
    if (depth > kMaxNesting) return invalid_argument(str_cat("input '", name_, "': data nested too deeply"));
    if (e.type() == dom::element_type::ARRAY) {
      for (dom::element x : dom::array(e)) IGNIS_RETURN_IF_ERROR(write(x, depth + 1));
      return Status::ok();
    }
    if (n_ >= count_) return too_many();
    IGNIS_RETURN_IF_ERROR(put(e));
    ++n_;
    return Status::ok();
  }

  Status finish() const {
    if (n_ != count_)
      return invalid_argument(str_cat("input '", name_, "': data has ", n_, " elements but its shape needs ", count_));
    return Status::ok();
  }

 private:
  Status too_many() const {
    return invalid_argument(str_cat("input '", name_, "': data has more elements than its shape's ", count_));
  }

  Status wrong(const char* expected, dom::element e) const {
    return invalid_argument(str_cat("input '", name_, "': element ", n_, " must be ", expected, " for datatype ",
                                    kserve_name(dtype_), ", got ", simdjson::to_string(e)));
  }

  template <class T>
  void store(T v) {
    std::memcpy(dst_ + n_ * sizeof(T), &v, sizeof(T));
  }

  template <class T>
  Status put_int(dom::element e) {
    int64_t i = 0;
    uint64_t u = 0;
    if (e.get_int64().get(i) == simdjson::SUCCESS) {
      if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
        return wrong("an integer in the type's range", e);
      store(static_cast<T>(i));
      return Status::ok();
    }
    if (e.get_uint64().get(u) == simdjson::SUCCESS) {
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return wrong("an integer in the type's range", e);
      store(static_cast<T>(u));
      return Status::ok();
    }
    return wrong("an integer", e);
  }

  Result<double> number(dom::element e) const {
    double d = 0;
    if (e.get_double().get(d) == simdjson::SUCCESS) return d;  // also reads integers
    return wrong("a number", e);
  }

  Status put(dom::element e) {
    switch (dtype_) {
      case DType::Bool: {
        bool b = false;
        if (e.get_bool().get(b) != simdjson::SUCCESS) return wrong("true or false", e);
        store(static_cast<uint8_t>(b ? 1 : 0));
        return Status::ok();
      }
      case DType::U8: return put_int<uint8_t>(e);
      case DType::U16: return put_int<uint16_t>(e);
      case DType::U32: return put_int<uint32_t>(e);
      case DType::U64: return put_int<uint64_t>(e);
      case DType::I8: return put_int<int8_t>(e);
      case DType::I16: return put_int<int16_t>(e);
      case DType::I32: return put_int<int32_t>(e);
      case DType::I64: return put_int<int64_t>(e);
      case DType::F16: {
        IGNIS_ASSIGN_OR_RETURN(double d, number(e));
        store(float_to_half(static_cast<float>(d)));
        return Status::ok();
      }
      case DType::BF16: {
        IGNIS_ASSIGN_OR_RETURN(double d, number(e));
        store(float_to_bf16(static_cast<float>(d)));
        return Status::ok();
      }
      case DType::F32: {
        IGNIS_ASSIGN_OR_RETURN(double d, number(e));
        store(static_cast<float>(d));
        return Status::ok();
      }
      case DType::F64: {
        IGNIS_ASSIGN_OR_RETURN(double d, number(e));
        store(d);
        return Status::ok();
      }
      default: return invalid_argument(str_cat("input '", name_, "': unsupported datatype"));
    }
  }

  const std::string& name_;
  DType dtype_;
  char* dst_;
  int64_t count_;
  int64_t n_ = 0;
};

Status collect_strings(dom::element e, std::vector<std::string>* out, int64_t count, const std::string& name,
                       int depth = 0) {
  if (depth > kMaxNesting) return invalid_argument(str_cat("input '", name, "': data nested too deeply"));
  if (e.type() == dom::element_type::ARRAY) {
    for (dom::element x : dom::array(e)) IGNIS_RETURN_IF_ERROR(collect_strings(x, out, count, name, depth + 1));
    return Status::ok();
  }
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS)
    return invalid_argument(str_cat("input '", name, "': BYTES elements must be strings, got ", simdjson::to_string(e)));
  if (static_cast<int64_t>(out->size()) >= count)
    return invalid_argument(str_cat("input '", name, "': data has more elements than its shape's ", count));
  out->emplace_back(s);
  return Status::ok();
}

// BYTES in binary form: each element a 4-byte little-endian length and its bytes.
Status split_binary_strings(const char* p, size_t n, int64_t count, const std::string& name,
                            std::vector<std::string>* out) {
  size_t pos = 0;
  while (pos < n) {
    if (n - pos < 4) return invalid_argument(str_cat("input '", name, "': BYTES data ends inside a length prefix"));
    uint32_t len = 0;
    std::memcpy(&len, p + pos, 4);
    pos += 4;
    if (len > n - pos)
      return invalid_argument(str_cat("input '", name, "': BYTES element ", out->size(), " claims ", len,
                                      " bytes but only ", n - pos, " remain"));
    if (static_cast<int64_t>(out->size()) >= count) break;
    out->emplace_back(p + pos, len);
    pos += len;
  }
  if (static_cast<int64_t>(out->size()) != count || pos != n)
    return invalid_argument(str_cat("input '", name, "': BYTES data holds ", out->size(),
                                    pos != n ? "+ elements" : " elements", " but its shape needs ", count));
  return Status::ok();
}

Result<bool> get_bool_param(dom::object params, const char* key, const std::string& where) {
  dom::element v;
  if (params[key].get(v) != simdjson::SUCCESS) return false;
  bool b = false;
  if (v.get_bool().get(b) != simdjson::SUCCESS)
    return invalid_argument(str_cat(where, " parameter '", key, "' must be true or false"));
  return b;
}

Result<std::optional<uint64_t>> get_uint_param(dom::object params, const char* key, const std::string& where) {
  dom::element v;
  if (params[key].get(v) != simdjson::SUCCESS) return std::optional<uint64_t>();
  uint64_t u = 0;
  if (v.get_uint64().get(u) != simdjson::SUCCESS)
    return invalid_argument(str_cat(where, " parameter '", key, "' must be a non-negative integer, got ",
                                    simdjson::to_string(v)));
  return std::optional<uint64_t>(u);
}

}  // namespace

Status reject_shared_memory(dom::object params, const std::string& what) {
  if (dom::element e; params["shared_memory_region"].get(e) == simdjson::SUCCESS)
    return unsupported(str_cat(what, ": the shared-memory extension is not supported; send the data in the request"));
  return Status::ok();
}

Status decode_repository_request(std::string_view body, RepositoryRequest* r) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return Status::ok();
  thread_local dom::parser parser;
  dom::element doc;
  if (auto e = parser.parse(body.data(), body.size(), true).get(doc); e != simdjson::SUCCESS) return json_error(e);
  dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return invalid_argument("the request must be a JSON object");
  if (dom::element v; root["ready"].get(v) == simdjson::SUCCESS && v.get_bool().get(r->ready_only) != simdjson::SUCCESS)
    return invalid_argument("'ready' must be true or false");
  if (dom::element p; root["parameters"].get(p) == simdjson::SUCCESS) {
    dom::object params;
    if (p.get_object().get(params) != simdjson::SUCCESS) return invalid_argument("'parameters' must be an object");
    r->has_parameters = params.size() > 0;
  }
  return Status::ok();
}

Status decode_infer_request(std::shared_ptr<const std::string> body, int64_t header_length, const DecodeLimits& limits,
                            InferRequest* req) {
  const std::string& b = *body;
  if (header_length > static_cast<int64_t>(b.size()))
    return invalid_argument(str_cat("Inference-Header-Content-Length is ", header_length, " but the body has only ",
                                    b.size(), " bytes"));
  const size_t json_len = header_length < 0 ? b.size() : static_cast<size_t>(header_length);
  if (json_len == 0) return invalid_argument("the request body is empty; expected a JSON inference request");

  thread_local dom::parser parser;
  dom::element doc;
  if (auto e = parser.parse(b.data(), json_len, true).get(doc); e != simdjson::SUCCESS) return json_error(e);
  dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return invalid_argument("the request must be a JSON object");

  if (dom::element id; root["id"].get(id) == simdjson::SUCCESS) {
    std::string_view s;
    if (id.get_string().get(s) != simdjson::SUCCESS) return invalid_argument("'id' must be a string");
    req->id = s;
  }
  if (dom::element p; root["parameters"].get(p) == simdjson::SUCCESS) {
    dom::object params;
    if (p.get_object().get(params) != simdjson::SUCCESS) return invalid_argument("'parameters' must be an object");
    IGNIS_ASSIGN_OR_RETURN(req->binary_output, get_bool_param(params, "binary_data_output", "request"));
    IGNIS_ASSIGN_OR_RETURN(req->priority, get_uint_param(params, "priority", "request"));
    IGNIS_ASSIGN_OR_RETURN(req->timeout_us, get_uint_param(params, "timeout", "request"));
  }

  dom::array inputs;
  if (dom::element in; root["inputs"].get(in) != simdjson::SUCCESS || in.get_array().get(inputs) != simdjson::SUCCESS)
    return invalid_argument("the request needs an 'inputs' array");
  if (inputs.size() == 0) return invalid_argument("'inputs' is empty");
  if (static_cast<int>(inputs.size()) > limits.max_inputs)
    return invalid_argument(str_cat("the request has ", inputs.size(), " inputs, more than the limit of ",
                                    limits.max_inputs));

  size_t binary_pos = json_len;  // next unread byte of binary data
  for (dom::element in : inputs) {
    dom::object o;
    if (in.get_object().get(o) != simdjson::SUCCESS) return invalid_argument("each input must be an object");
    InferInput x;
    std::string_view sv;
    if (dom::element n; o["name"].get(n) != simdjson::SUCCESS || n.get_string().get(sv) != simdjson::SUCCESS)
      return invalid_argument("an input has no 'name' string");
    x.name = sv;
    if (dom::element d; o["datatype"].get(d) != simdjson::SUCCESS || d.get_string().get(sv) != simdjson::SUCCESS)
      return invalid_argument(str_cat("input '", x.name, "' has no 'datatype' string"));
    auto dtype = dtype_from_kserve(sv);
    if (!dtype) return invalid_argument(str_cat("input '", x.name, "': unknown datatype '", sv, "'"));
    x.dtype = *dtype;
    dom::array shape;
    if (dom::element s; o["shape"].get(s) != simdjson::SUCCESS || s.get_array().get(shape) != simdjson::SUCCESS)
      return invalid_argument(str_cat("input '", x.name, "' has no 'shape' array"));
    if (shape.size() > 16) return invalid_argument(str_cat("input '", x.name, "': shape has more than 16 dimensions"));
    for (dom::element d : shape) {
      int64_t v = 0;
      if (d.get_int64().get(v) != simdjson::SUCCESS || v < 0)
        return invalid_argument(str_cat("input '", x.name, "': shape entries must be non-negative integers, got ",
                                        simdjson::to_string(d)));
      x.shape.push_back(v);
    }
    IGNIS_ASSIGN_OR_RETURN(int64_t count, checked_numel(x.shape, limits.max_elements, x.name));

    std::optional<uint64_t> binary_size;
    if (dom::element p; o["parameters"].get(p) == simdjson::SUCCESS) {
      dom::object params;
      if (p.get_object().get(params) != simdjson::SUCCESS)
        return invalid_argument(str_cat("input '", x.name, "': 'parameters' must be an object"));
      IGNIS_ASSIGN_OR_RETURN(binary_size, get_uint_param(params, "binary_data_size", str_cat("input '", x.name, "'")));
      IGNIS_RETURN_IF_ERROR(reject_shared_memory(params, str_cat("input '", x.name, "'")));
    }
    dom::element data;
    const bool has_data = o["data"].get(data) == simdjson::SUCCESS;
    if (binary_size && has_data)
      return invalid_argument(str_cat("input '", x.name, "' has both 'data' and binary_data_size"));
    if (!binary_size && !has_data)
      return invalid_argument(str_cat("input '", x.name, "' has neither 'data' nor binary_data_size"));

    const Shape tshape(x.shape);
    if (binary_size) {
      if (header_length < 0)
        return invalid_argument(str_cat("input '", x.name,
                                        "' has binary_data_size but the request has no Inference-Header-Content-Length"));
      const size_t remaining = b.size() - binary_pos;
      if (*binary_size > remaining)
        return invalid_argument(str_cat("input '", x.name, "' needs ", *binary_size, " bytes of binary data but only ",
                                        remaining, " remain in the body"));
      const char* p = b.data() + binary_pos;
      const size_t n = static_cast<size_t>(*binary_size);
      binary_pos += n;
      if (x.dtype == DType::String) {
        std::vector<std::string> elements;
        IGNIS_RETURN_IF_ERROR(split_binary_strings(p, n, count, x.name, &elements));
        x.tensor = string_tensor(x.shape, std::move(elements));
      } else {
        const size_t want = static_cast<size_t>(count) * dtype_size(x.dtype);
        if (n != want)
          return invalid_argument(str_cat("input '", x.name, "': binary_data_size is ", n, " bytes but shape ",
                                          str_list(x.shape), " of ", kserve_name(x.dtype), " needs ", want));
        const size_t align = dtype_size(x.dtype);
        if (reinterpret_cast<uintptr_t>(p) % align == 0) {
          x.tensor = Tensor::view(x.dtype, tshape, p);
        } else {
          x.tensor = Tensor::empty(x.dtype, tshape);
          if (n) std::memcpy(x.tensor.data(), p, n);
        }
      }
    } else if (x.dtype == DType::String) {
      std::vector<std::string> elements;
      IGNIS_RETURN_IF_ERROR(collect_strings(data, &elements, count, x.name));
      if (static_cast<int64_t>(elements.size()) != count)
        return invalid_argument(str_cat("input '", x.name, "': data has ", elements.size(),
                                        " elements but its shape needs ", count));
      x.tensor = string_tensor(x.shape, std::move(elements));
    } else {
      x.tensor = Tensor::empty(x.dtype, tshape);
      DataWriter w(x.name, x.dtype, x.tensor.data(), count);
      IGNIS_RETURN_IF_ERROR(w.write(data));
      IGNIS_RETURN_IF_ERROR(w.finish());
    }
    for (const auto& prev : req->inputs)
      if (prev.name == x.name) return invalid_argument(str_cat("input '", x.name, "' is given twice"));
    req->inputs.push_back(std::move(x));
  }
  if (binary_pos != b.size())
    return invalid_argument(str_cat("the body has ", b.size() - binary_pos,
                                    " bytes after the JSON header that no input's binary_data_size accounts for"));

  if (dom::element outs; root["outputs"].get(outs) == simdjson::SUCCESS) {
    dom::array arr;
    if (outs.get_array().get(arr) != simdjson::SUCCESS) return invalid_argument("'outputs' must be an array");
    for (dom::element oe : arr) {
      dom::object o;
      if (oe.get_object().get(o) != simdjson::SUCCESS) return invalid_argument("each requested output must be an object");
      RequestedOutput r;
      std::string_view sv;
      if (dom::element n; o["name"].get(n) != simdjson::SUCCESS || n.get_string().get(sv) != simdjson::SUCCESS)
        return invalid_argument("a requested output has no 'name' string");
      r.name = sv;
      if (dom::element p; o["parameters"].get(p) == simdjson::SUCCESS) {
        dom::object params;
        if (p.get_object().get(params) != simdjson::SUCCESS)
          return invalid_argument(str_cat("output '", r.name, "': 'parameters' must be an object"));
        if (dom::element bd; params["binary_data"].get(bd) == simdjson::SUCCESS) {
          bool v = false;
          if (bd.get_bool().get(v) != simdjson::SUCCESS)
            return invalid_argument(str_cat("output '", r.name, "': binary_data must be true or false"));
          r.binary = v;
        }
        IGNIS_RETURN_IF_ERROR(reject_shared_memory(params, str_cat("output '", r.name, "'")));
        if (dom::element c; params["classification"].get(c) == simdjson::SUCCESS)
          return unsupported(str_cat("output '", r.name, "': the classification extension is not supported"));
      }
      for (const auto& prev : req->outputs)
        if (prev.name == r.name) return invalid_argument(str_cat("output '", r.name, "' is requested twice"));
      req->outputs.push_back(std::move(r));
    }
  }
  req->storage = std::move(body);
  return Status::ok();
}

namespace {

template <class T>
void write_values(JsonWriter& w, const void* data, int64_t n) {
  const T* p = static_cast<const T*>(data);
  for (int64_t i = 0; i < n; ++i) w.value(p[i]);
}

void write_data(JsonWriter& w, const Tensor& t) {
  const int64_t n = t.numel();
  const void* d = t.data();
  w.key("data").begin_array();
  switch (t.dtype()) {
    case DType::Bool: {
      const auto* p = static_cast<const uint8_t*>(d);
      for (int64_t i = 0; i < n; ++i) w.value(p[i] != 0);
      break;
    }
    case DType::U8: {
      const auto* p = static_cast<const uint8_t*>(d);
      for (int64_t i = 0; i < n; ++i) w.value(static_cast<uint64_t>(p[i]));
      break;
    }
    case DType::U16: {
      const auto* p = static_cast<const uint16_t*>(d);
      for (int64_t i = 0; i < n; ++i) w.value(static_cast<uint64_t>(p[i]));
      break;
    }
    case DType::U32: {
      const auto* p = static_cast<const uint32_t*>(d);
      for (int64_t i = 0; i < n; ++i) w.value(static_cast<uint64_t>(p[i]));
      break;
    }
    case DType::U64: write_values<uint64_t>(w, d, n); break;
    case DType::I8: {
      const auto* p = static_cast<const int8_t*>(d);
      for (int64_t i = 0; i < n; ++i) w.value(static_cast<int64_t>(p[i]));
      break;
    }
    case DType::I16: {
      const auto* p = static_cast<const int16_t*>(d);
      for (int64_t i = 0; i < n; ++i) w.value(static_cast<int64_t>(p[i]));
      break;
    }
    case DType::I32: {
      const auto* p = static_cast<const int32_t*>(d);
      for (int64_t i = 0; i < n; ++i) w.value(static_cast<int64_t>(p[i]));
      break;
    }
    case DType::I64: write_values<int64_t>(w, d, n); break;
    case DType::F16: {
      const auto* p = static_cast<const uint16_t*>(d);
      for (int64_t i = 0; i < n; ++i) w.value(half_to_float(p[i]));
      break;
    }
    case DType::BF16: {
      const auto* p = static_cast<const uint16_t*>(d);
      for (int64_t i = 0; i < n; ++i) w.value(bf16_to_float(p[i]));
      break;
    }
    case DType::F32: write_values<float>(w, d, n); break;
    case DType::F64: write_values<double>(w, d, n); break;
    case DType::String: {
      const auto* p = static_cast<const std::string*>(d);
      for (int64_t i = 0; i < n; ++i) w.value(std::string_view(p[i]));
      break;
    }
    default: break;
  }
  w.end_array();
}

}  // namespace

void encode_infer_response(const InferResponse& r, std::string* body, int64_t* header_length) {
  body->clear();
  JsonWriter w(body);
  w.begin_object();
  w.member("model_name", r.model);
  w.member("model_version", r.version);
  if (!r.id.empty()) w.member("id", r.id);
  w.key("outputs").begin_array();
  bool any_binary = false;
  // Binary BYTES outputs as length-prefixed elements; other types as their buffer.
  std::vector<std::string> packed(r.outputs.size());
  const auto binary_view = [&](size_t i) {
    const Tensor& t = r.outputs[i].tensor;
    if (t.dtype() == DType::String) return std::string_view(packed[i]);
    return std::string_view(static_cast<const char*>(t.data()), t.nbytes());
  };
  for (size_t i = 0; i < r.outputs.size(); ++i)
    if (r.outputs[i].binary && r.outputs[i].tensor.dtype() == DType::String) packed[i] = serialize_strings(r.outputs[i].tensor);
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const InferOutput& o = r.outputs[i];
    w.begin_object();
    w.member("name", o.name);
    w.member("datatype", kserve_name(o.tensor.dtype()));
    w.key("shape").begin_array();
    for (int64_t d : o.tensor.shape()) w.value(d);
    w.end_array();
    if (o.binary) {
      any_binary = true;
      w.key("parameters").begin_object().member("binary_data_size", static_cast<uint64_t>(binary_view(i).size())).end_object();
    } else {
      write_data(w, o.tensor);
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
  if (!any_binary) {
    *header_length = -1;
    return;
  }
  *header_length = static_cast<int64_t>(body->size());
  size_t total = body->size();
  for (size_t i = 0; i < r.outputs.size(); ++i)
    if (r.outputs[i].binary) total += binary_view(i).size();
  body->reserve(total);
  for (size_t i = 0; i < r.outputs.size(); ++i)
    if (r.outputs[i].binary) body->append(binary_view(i));
}

}  // namespace ignis::serve
