// SPDX-License-Identifier: Apache-2.0
// ignis._ignis: the native layer under the Python package. It turns numpy arrays into Tensor
// views and engine outputs into numpy arrays without copying, releases the GIL while the engine
// works, and raises a non-ok Status as the matching class of ignis/_errors.py. Also binds
// optimize_model, quantize_model and prune_model for ignis.optimize(), quantize() and prune().
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <bit>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ignis/ignis.h"

namespace py = pybind11;

namespace ignis::python {
namespace {

// numpy's NPY_ARRAY_ALIGNED flag bit (part of numpy's stable C ABI).
constexpr int kNumpyAligned = 0x0100;
// The byte-order character numpy gives a dtype that is not in this machine's order.
constexpr char kForeignByteOrder = std::endian::native == std::endian::little ? '>' : '<';

const char* error_class_name(StatusCode code) {
  switch (code) {
    case StatusCode::InvalidArgument: return "InvalidArgument";
    case StatusCode::InvalidModel: return "InvalidModel";
    // ValueRequired reaches users only when a valid model needs a value ignis cannot plan for.
    case StatusCode::Unsupported:
    case StatusCode::ValueRequired: return "Unsupported";
    case StatusCode::NotFound: return "NotFound";
    case StatusCode::OutOfRange: return "OutOfRange";
    case StatusCode::ResourceExhausted: return "ResourceExhausted";
    case StatusCode::Ok:
    case StatusCode::Internal: break;
  }
  return "IgnisError";
}

// Sets the Python error for `status` (the engine's message, unchanged) and unwinds to pybind11.
[[noreturn]] void raise_status(const Status& status) {
  py::object cls = py::module_::import("ignis._errors").attr(error_class_name(status.code()));
  PyErr_SetObject(cls.ptr(), py::str(status.message()).ptr());
  throw py::error_already_set();
}

template <class T>
T unwrap(Result<T> result) {
  if (!result) raise_status(result.error());
  return std::move(result).value();
}

std::string quoted_names(const std::vector<ValueInfo>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "'" : ", '") + v.name + "'";
  return out;
}

// numpy dtype -> DType; nullopt for numpy types that have no ONNX tensor type (object,
// strings, complex, datetime...). bfloat16 is ml_dtypes' type, the one onnx itself uses.
std::optional<DType> dtype_from_numpy(const py::dtype& dt) {
  const auto size = dt.itemsize();
  switch (dt.kind()) {
    case 'f':
      if (size == 2) return DType::F16;
      if (size == 4) return DType::F32;
      if (size == 8) return DType::F64;
      break;
    case 'i':
      if (size == 1) return DType::I8;
      if (size == 2) return DType::I16;
      if (size == 4) return DType::I32;
      if (size == 8) return DType::I64;
      break;
    case 'u':
      if (size == 1) return DType::U8;
      if (size == 2) return DType::U16;
      if (size == 4) return DType::U32;
      if (size == 8) return DType::U64;
      break;
    case 'b':
      if (size == 1) return DType::Bool;
      break;
    case 'V':
      if (size == 2 && py::str(dt.attr("name")).cast<std::string>() == "bfloat16") return DType::BF16;
      break;
    default: break;
  }
  return std::nullopt;
}

py::dtype numpy_dtype(DType t, const std::string& output) {
  switch (t) {
    case DType::F32: return py::dtype::of<float>();
    case DType::F64: return py::dtype::of<double>();
    case DType::F16: return py::dtype("float16");
    case DType::I8: return py::dtype::of<int8_t>();
    case DType::I16: return py::dtype::of<int16_t>();
    case DType::I32: return py::dtype::of<int32_t>();
    case DType::I64: return py::dtype::of<int64_t>();
    case DType::U8: return py::dtype::of<uint8_t>();
    case DType::U16: return py::dtype::of<uint16_t>();
    case DType::U32: return py::dtype::of<uint32_t>();
    case DType::U64: return py::dtype::of<uint64_t>();
    case DType::Bool: return py::dtype::of<bool>();
    case DType::BF16:
      try {
        return py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16"));
      } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_ImportError)) throw;
        raise_status(unsupported("output '" + output +
                                 "' is bfloat16, which numpy represents only with the ml_dtypes package"));
      }
    case DType::String:
    case DType::Undefined:
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
    case DType::U4:
    case DType::I4:
    case DType::F4E2M1:
    case DType::F8E8M0:
    case DType::U2:
    case DType::I2: break;  // low-bit types are held unpacked; numpy has no matching buffer type
    case DType::Sequence:
    case DType::Optional:
    case DType::Map: break;  // converted by to_python, never as one buffer
  }
  raise_status(unsupported("output '" + output + "' has type " + std::string(dtype_name(t)) +
                           ", which has no numpy buffer equivalent"));
}

// A numpy array of str / bytes / object as a String tensor (copied; str is stored as UTF-8).
Tensor string_tensor(const std::string& name, const py::array& arr) {
  Shape shape;
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) shape.push_back(arr.shape(d));
  Tensor t = Tensor::empty(DType::String, shape);
  py::list flat = arr.attr("ravel")().attr("tolist")();
  for (size_t i = 0; i < flat.size(); ++i) {
    py::handle item = flat[i];
    if (py::isinstance<py::bytes>(item)) t.data_as<std::string>()[i] = item.cast<std::string>();
    else if (py::isinstance<py::str>(item)) t.data_as<std::string>()[i] = item.cast<std::string>();
    else
      raise_status(invalid_argument("input '" + name + "' is a string tensor; element " + std::to_string(i) + " is a " +
                                    py::str(py::type::of(item).attr("__name__")).cast<std::string>()));
  }
  return t;
}

// Reads a numpy array (or anything np.asarray accepts) as a Tensor. A C-contiguous, aligned,
// native-endian array is viewed in place; any other layout is copied into a contiguous array
// first, as onnxruntime does. The dtype must match exactly: nothing is cast. The array that
// the view reads is appended to `keep` so it outlives the run. Strings are copied.
Tensor array_input(const Session& session, const ValueInfo* decl, const std::string& name, py::handle value,
                   std::vector<py::object>* keep) {
  py::module_ np = py::module_::import("numpy");
  py::array arr = py::isinstance<py::array>(value) ? py::reinterpret_borrow<py::array>(value)
                                                   : py::array(np.attr("asarray")(value));
  const char kind = arr.dtype().kind();
  if (kind == 'U' || kind == 'S' || (kind == 'O' && decl && decl->dtype == DType::String))
    return string_tensor(name, arr);
  const std::optional<DType> dtype = dtype_from_numpy(arr.dtype());
  if (!dtype) {
    const std::string got = py::str(arr.dtype()).cast<std::string>();
    if (!decl)
      raise_status(invalid_argument("unknown input '" + name + "'; the model's inputs are " +
                                    quoted_names(session.inputs())));
    raise_status(invalid_argument("input '" + name + "' must be " + std::string(dtype_name(decl->dtype)) +
                                  ", got numpy " + got + ", which has no ONNX tensor type"));
  }
  if (arr.ndim() > Shape::kMaxRank)
    raise_status(invalid_argument("input '" + name + "' has rank " + std::to_string(arr.ndim()) +
                                  "; ignis supports at most " + std::to_string(Shape::kMaxRank) + " dimensions"));

  const bool native = arr.dtype().byteorder() != kForeignByteOrder;
  const bool in_place = (arr.flags() & py::array::c_style) && (arr.flags() & kNumpyAligned) && native;
  if (!in_place) {
    py::object target = native ? py::object(arr.dtype()) : arr.dtype().attr("newbyteorder")("=");
    arr = py::array(np.attr("array")(arr, py::arg("dtype") = target, py::arg("order") = "C", py::arg("copy") = true));
  }
  Shape shape;
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) shape.push_back(arr.shape(d));
  Tensor t = Tensor::view(*dtype, shape, arr.data());
  keep->push_back(std::move(arr));
  return t;
}

// A Python value for a graph input: an array, a list of arrays for a sequence, None or a
// value for an optional.
Tensor view_input(const Session& session, const std::string& name, py::handle value, std::vector<py::object>* keep) {
  const ValueInfo* decl = nullptr;
  for (const auto& in : session.inputs())
    if (in.name == name) decl = &in;
  const DType kind = decl ? decl->dtype : DType::Undefined;
  if (kind == DType::Optional) {
    if (value.is_none()) return Tensor::optional(Tensor());
    const bool is_list = py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value);
    if (is_list && decl->type_text.rfind("optional(seq(", 0) == 0) {
      std::vector<Tensor> items;
      for (py::handle item : value) items.push_back(array_input(session, nullptr, name, item, keep));
      const DType element = items.empty() ? DType::Undefined : items[0].dtype();
      return Tensor::optional(Tensor::sequence(element, std::move(items)));
    }
    return Tensor::optional(array_input(session, nullptr, name, value, keep));
  }
  if (kind == DType::Sequence) {
    if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value))
      raise_status(invalid_argument("input '" + name + "' is a sequence; pass a list of arrays"));
    std::vector<Tensor> items;
    for (py::handle item : value) items.push_back(array_input(session, nullptr, name, item, keep));
    const DType element = items.empty() ? DType::Undefined : items[0].dtype();
    return Tensor::sequence(element, std::move(items));
  }
  return array_input(session, decl, name, value, keep);
}

// Wraps an engine output in a numpy array without copying: the array's base is a capsule that
// owns a handle to the Tensor, so the buffer lives as long as the array (and its views) do.
py::array to_numpy(Tensor t, const std::string& name) {
  py::dtype dt = numpy_dtype(t.dtype(), name);
  // A view's memory is not kept alive by its handle; outputs normally own theirs.
  if (!t.owns_data() && t.numel() > 0) t = t.clone();
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  void* data = t.data();
  py::capsule owner(new Tensor(std::move(t)), [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dt, shape, data, owner);
}

// A string element as str when it is UTF-8, else as bytes.
py::object string_value(const std::string& s) {
  PyObject* u = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
  if (u) return py::reinterpret_steal<py::object>(u);
  PyErr_Clear();
  return py::bytes(s);
}

// Outputs as Python values: numpy arrays; an object array of str for strings; a list for a
// sequence; None or the value for an optional; a dict for a map, of Python scalars when the
// values are scalars (ZipMap's label -> probability), as onnxruntime gives them.
py::object to_python(Tensor t, const std::string& name) {
  switch (t.dtype()) {
    case DType::Sequence: {
      py::list out;
      for (const Tensor& item : t.as_sequence().items) out.append(to_python(item, name));
      return out;
    }
    case DType::Optional:
      return t.as_optional().has_value() ? to_python(t.as_optional().value, name) : py::object(py::none());
    case DType::Map: {
      const TensorMap& m = t.as_map();
      py::list keys = to_python(m.keys, name).attr("tolist")();
      py::array array = to_numpy(m.values, name);
      py::object values = array.ndim() == 1 ? array.attr("tolist")() : py::object(array);
      py::dict out;
      for (size_t i = 0; i < keys.size(); ++i) out[keys[i]] = values[py::int_(i)];
      return out;
    }
    case DType::String: {
      py::module_ np = py::module_::import("numpy");
      py::list flat;
      for (int64_t i = 0; i < t.numel(); ++i) flat.append(string_value(t.data_as<std::string>()[i]));
      std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
      return np.attr("array")(flat, py::arg("dtype") = "object").attr("reshape")(shape);
    }
    default: return to_numpy(std::move(t), name);
  }
}

struct RunArgs {
  NamedTensors inputs;
  std::vector<std::string> output_names;
  std::vector<std::string> result_names;  // the name of each result, for messages
  std::vector<py::object> keep;           // arrays the input views read
};

RunArgs make_run_args(const Session& session, const py::dict& feed, const std::optional<std::vector<std::string>>& names) {
  RunArgs args;
  for (auto [key, value] : feed) {
    if (!py::isinstance<py::str>(key))
      throw py::type_error("input names must be str, got " + py::str(py::type::of(key).attr("__name__")).cast<std::string>());
    std::string name = key.cast<std::string>();
    Tensor t = view_input(session, name, value, &args.keep);
    args.inputs.emplace_back(std::move(name), std::move(t));
  }
  if (names) args.output_names = *names;
  if (args.output_names.empty())
    for (const auto& out : session.outputs()) args.result_names.push_back(out.name);
  else
    args.result_names = args.output_names;
  return args;
}

py::list to_numpy_list(std::vector<Tensor> tensors, const std::vector<std::string>& names) {
  py::list out;
  for (size_t i = 0; i < tensors.size(); ++i)
    out.append(to_python(std::move(tensors[i]), i < names.size() ? names[i] : std::to_string(i)));
  return out;
}

py::list run(const Session& session, const py::dict& feed, const std::optional<std::vector<std::string>>& names) {
  RunArgs args = make_run_args(session, feed, names);
  auto result = [&] {
    py::gil_scoped_release unlocked;
    return session.run(args.inputs, args.output_names);
  }();
  return to_numpy_list(unwrap(std::move(result)), args.result_names);
}

// As run(); also returns one (node, op_type, kernel, microseconds, flops) tuple per executed node.
py::tuple run_profiled(const Session& session, const py::dict& feed,
                       const std::optional<std::vector<std::string>>& names) {
  RunArgs args = make_run_args(session, feed, names);
  std::vector<OpTiming> timings;
  auto result = [&] {
    py::gil_scoped_release unlocked;
    return session.run_profiled(args.inputs, &timings, args.output_names);
  }();
  py::list outputs = to_numpy_list(unwrap(std::move(result)), args.result_names);
  py::list ops;
  for (const auto& t : timings) ops.append(py::make_tuple(t.node, t.op_type, t.kernel, t.micros, t.flops));
  return py::make_tuple(outputs, ops);
}

SessionOptions make_options(int threads, int optimization, int log_level, bool pin_threads = false,
                            size_t memory_limit_bytes = 0, const std::string& precision = "fp32",
                            const std::string& tuning = "cached", const std::string& tuning_cache = "") {
  SessionOptions o;
  if (tuning == "off") o.tuning = Tuning::Off;
  else if (tuning == "cached") o.tuning = Tuning::Cached;
  else if (tuning == "measure") o.tuning = Tuning::Measure;
  else if (tuning == "remeasure") o.tuning = Tuning::Remeasure;
  else raise_status(invalid_argument("tuning must be 'off', 'cached', 'measure' or 'remeasure', got '" + tuning + "'"));
  o.tuning_cache = tuning_cache;
  if (precision == "fp32") o.precision = Precision::F32;
  else if (precision == "bf16") o.precision = Precision::Bf16;
  else if (precision == "fp16") o.precision = Precision::F16;
  else raise_status(invalid_argument("precision must be 'fp32', 'bf16' or 'fp16', got '" + precision + "'"));
  o.threads = threads;
  o.pin_threads = pin_threads;
  o.memory_limit_bytes = memory_limit_bytes;
  if (optimization < 0 || optimization > static_cast<int>(OptLevel::All))
    raise_status(invalid_argument("optimization level must be 0..3, got " + std::to_string(optimization)));
  o.optimization = static_cast<OptLevel>(optimization);
  if (log_level < 0 || log_level > static_cast<int>(LogLevel::Debug))
    raise_status(invalid_argument("log level must be 0..3, got " + std::to_string(log_level)));
  o.log_level = static_cast<LogLevel>(log_level);
  return o;
}

std::unique_ptr<Session> open_path(const std::string& path, int threads, int optimization, int log_level,
                                   bool pin_threads, size_t memory_limit_bytes, const std::string& precision,
                                   const std::string& tuning, const std::string& tuning_cache) {
  const SessionOptions options = make_options(threads, optimization, log_level, pin_threads, memory_limit_bytes,
                                              precision, tuning, tuning_cache);
  auto result = [&] {
    py::gil_scoped_release unlocked;
    return Session::open(path, options);
  }();
  return std::make_unique<Session>(unwrap(std::move(result)));
}

std::unique_ptr<Session> open_bytes(const py::object& model, int threads, int optimization, int log_level,
                                    bool pin_threads, size_t memory_limit_bytes, const std::string& base_dir,
                                    const std::string& precision, const std::string& tuning,
                                    const std::string& tuning_cache) {
  const SessionOptions options = make_options(threads, optimization, log_level, pin_threads, memory_limit_bytes,
                                              precision, tuning, tuning_cache);
  Py_buffer view;
  if (PyObject_GetBuffer(model.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  const std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> release(&view, PyBuffer_Release);
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(view.buf), static_cast<size_t>(view.len));
  auto result = [&] {
    py::gil_scoped_release unlocked;
    return Session::open_bytes(bytes, options, base_dir);
  }();
  return std::make_unique<Session>(unwrap(std::move(result)));
}

// (name, ONNX element type number, dims with -1 for symbolic, dim names, has_shape)
py::list describe(const std::vector<ValueInfo>& values) {
  py::list out;
  for (const auto& v : values)
    out.append(py::make_tuple(v.name, static_cast<int>(v.dtype), v.dims, v.dim_names, v.has_shape));
  return out;
}

py::dict model_info(const Session& session) {
  const ModelInfo& m = session.model_info();
  py::dict d;
  d["ir_version"] = m.ir_version;
  d["producer"] = m.producer;
  d["opsets"] = m.opsets;
  d["op_histogram"] = m.op_histogram;
  d["node_count"] = m.node_count;
  d["parameter_count"] = m.parameter_count;
  d["parameter_bytes"] = m.parameter_bytes;
  d["flops"] = m.flops;
  return d;
}

// ignis::optimize_model: reads `input`, runs the graph passes of `level`, writes `output`.
py::dict optimize(const std::string& input, const std::string& output, int level, const std::string& dot_dir) {
  OptimizeOptions o;
  o.level = make_options(0, level, 0).optimization;
  o.dot_dir = dot_dir;
  auto result = [&] {
    py::gil_scoped_release unlocked;
    return optimize_model(input, output, o);
  }();
  const OptimizeReport r = unwrap(std::move(result));
  py::dict d;
  d["ops_before"] = r.ops_before;
  d["ops_after"] = r.ops_after;
  d["nodes_before"] = r.nodes_before;
  d["nodes_after"] = r.nodes_after;
  d["parameters_before"] = r.parameters_before;
  d["parameters_after"] = r.parameters_after;
  d["flops_before"] = r.flops_before;
  d["flops_after"] = r.flops_after;
  d["passes"] = r.passes;
  d["files_written"] = r.files_written;
  return d;
}

py::dict compress_report(const CompressReport& r) {
  py::list changed;
  for (const auto& c : r.changed) {
    py::dict w;
    w["value"] = c.value;
    w["op_type"] = c.op_type;
    w["scheme"] = c.scheme;
    w["elements"] = c.elements;
    w["zeros_before"] = c.zeros_before;
    w["zeros_after"] = c.zeros_after;
    w["max_abs"] = c.max_abs;
    w["max_abs_error"] = c.max_abs_error;
    changed.append(w);
  }
  py::list activations;
  for (const auto& a : r.activations) {
    py::dict v;
    v["value"] = a.value;
    v["min"] = a.min;
    v["max"] = a.max;
    v["scale"] = a.scale;
    v["zero_point"] = a.zero_point;
    v["error"] = a.error < 0 ? py::object(py::none()) : py::object(py::float_(a.error));
    activations.append(v);
  }
  py::dict d;
  d["changed"] = changed;
  d["activations"] = activations;
  d["calibration_samples"] = r.calibration_samples;
  d["accuracy_loss"] = r.accuracy_loss >= 0 ? py::object(py::float_(r.accuracy_loss)) : py::object(py::none());
  d["decisions"] = r.decisions;
  d["skipped"] = r.skipped;
  d["parameters"] = r.parameters;
  d["parameters_changed"] = r.parameters_changed;
  d["initializer_bytes_before"] = r.initializer_bytes_before;
  d["initializer_bytes_after"] = r.initializer_bytes_after;
  d["file_bytes_before"] = r.file_bytes_before;
  d["file_bytes_after"] = r.file_bytes_after;
  return d;
}

// A Python callable as max_drop's metric: fn(float_outputs, quantized_outputs) -> loss, each a
// list over calibration samples of {output name: numpy array}. Runs with the GIL taken (the
// quantization itself runs without it); what it raises, or a result that is not a number,
// becomes the quantization's error. The callable is released under the GIL whichever thread
// drops the last copy of the function.
AccuracyLossFn python_metric(const py::object& fn) {
  std::shared_ptr<py::object> held(new py::object(fn), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
  return [held](const std::vector<std::string>& names, const std::vector<std::vector<Tensor>>& float_outputs,
                const std::vector<std::vector<Tensor>>& quantized_outputs) -> Result<double> {
    py::gil_scoped_acquire gil;
    auto samples = [&](const std::vector<std::vector<Tensor>>& outputs) {
      py::list list;
      for (const auto& sample : outputs) {
        py::dict d;
        for (size_t i = 0; i < sample.size() && i < names.size(); ++i) d[py::str(names[i])] = to_python(sample[i], names[i]);
        list.append(d);
      }
      return list;
    };
    py::object loss;
    try {
      loss = (*held)(samples(float_outputs), samples(quantized_outputs));
    } catch (py::error_already_set& e) {
      // The exception's type and message; what() would append the whole traceback.
      return Status(StatusCode::InvalidArgument,
                    "the accuracy metric raised " + py::str(e.type().attr("__name__")).cast<std::string>() + ": " +
                        py::str(e.value()).cast<std::string>());
    }
    PyObject* number = PyNumber_Float(loss.ptr());
    if (!number) {
      PyErr_Clear();
      return Status(StatusCode::InvalidArgument,
                    "the accuracy metric must return a number, got " +
                        py::str(py::type::of(loss).attr("__name__")).cast<std::string>());
    }
    return py::reinterpret_steal<py::float_>(number).cast<double>();
  };
}

// ignis::quantize_model; `mode` is "int8", "fp16", "dynamic", "int4" or "static" and `method` "minmax",
// "percentile" or "entropy" (checked by the Python layer); `metric` is "top1", "cosine" or a
// callable (python_metric). `progress` prints one line per calibration sample to stderr.
py::dict quantize(const std::string& input, const std::string& output, const std::string& mode, bool per_channel,
                  std::optional<int64_t> min_elements, const std::vector<std::string>& exclude,
                  const std::string& calibrate, const std::string& method, double percentile, int64_t samples,
                  bool progress, int64_t block_size, std::optional<double> max_drop, const py::object& metric,
                  double smooth, int64_t error_samples, bool per_row) {
  QuantizeOptions o;
  o.per_row = per_row;
  o.max_drop = max_drop;
  if (py::isinstance<py::str>(metric))
    o.metric = metric.cast<std::string>() == "cosine" ? AccuracyMetric::Cosine : AccuracyMetric::Top1Disagreement;
  else
    o.custom_metric = python_metric(metric);
  o.block_size = block_size;
  o.mode = mode == "fp16"      ? QuantizeMode::Fp16
           : mode == "dynamic" ? QuantizeMode::Dynamic
           : mode == "int4"    ? QuantizeMode::Int4
           : mode == "static"  ? QuantizeMode::Static
                               : QuantizeMode::Int8;
  o.per_channel = per_channel;
  o.min_elements = min_elements;
  o.exclude_nodes = exclude;
  o.calibration_data = calibrate;
  o.calibration_method = method == "entropy"      ? CalibrationMethod::Entropy
                         : method == "percentile" ? CalibrationMethod::Percentile
                                                  : CalibrationMethod::MinMax;
  o.percentile = percentile;
  o.smooth_alpha = smooth;
  o.calibration_samples = samples;
  o.error_samples = error_samples;
  if (progress) o.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  auto result = [&] {
    py::gil_scoped_release unlocked;
    return quantize_model(input, output, o);
  }();
  return compress_report(unwrap(std::move(result)));
}

// ignis::prune_model; `granularity` is "element" or "channel" (checked by the Python layer).
py::dict prune(const std::string& input, const std::string& output, double sparsity, const std::string& granularity,
               int64_t min_elements) {
  PruneOptions o;
  o.sparsity = sparsity;
  o.granularity = granularity == "channel" ? PruneGranularity::Channel : PruneGranularity::Element;
  o.min_elements = min_elements;
  auto result = [&] {
    py::gil_scoped_release unlocked;
    return prune_model(input, output, o);
  }();
  return compress_report(unwrap(std::move(result)));
}

}  // namespace
}  // namespace ignis::python

PYBIND11_MODULE(_ignis, m) {
  using namespace ignis::python;
  m.doc() = "Native layer of the ignis package; use the API in `ignis` instead.";
  m.attr("__version__") = IGNIS_VERSION;

  py::class_<ignis::Session>(m, "Session")
      .def_static("open", &open_path, py::arg("path"), py::arg("threads"), py::arg("optimization"),
                  py::arg("log_level"), py::arg("pin_threads") = false, py::arg("memory_limit_bytes") = 0,
                  py::arg("precision") = "fp32", py::arg("tuning") = "cached", py::arg("tuning_cache") = "")
      .def_static("open_bytes", &open_bytes, py::arg("model"), py::arg("threads"), py::arg("optimization"),
                  py::arg("log_level"), py::arg("pin_threads") = false, py::arg("memory_limit_bytes") = 0,
                  py::arg("base_dir") = "", py::arg("precision") = "fp32", py::arg("tuning") = "cached",
                  py::arg("tuning_cache") = "")
      .def("inputs", [](const ignis::Session& s) { return describe(s.inputs()); })
      .def("outputs", [](const ignis::Session& s) { return describe(s.outputs()); })
      .def("model_info", &model_info)
      .def("run", &run, py::arg("feed"), py::arg("output_names") = py::none())
      .def("run_profiled", &run_profiled, py::arg("feed"), py::arg("output_names") = py::none());

  m.def("optimize", &optimize, py::arg("input"), py::arg("output"), py::arg("level"), py::arg("dot_dir") = "");
  m.def("quantize", &quantize, py::arg("input"), py::arg("output"), py::arg("mode"), py::arg("per_channel"),
        py::arg("min_elements"), py::arg("exclude") = std::vector<std::string>{}, py::arg("calibrate") = "",
        py::arg("method") = "minmax", py::arg("percentile") = 99.999, py::arg("samples") = 0,
        py::arg("progress") = false, py::arg("block_size") = 32, py::arg("max_drop") = py::none(),
        py::arg("metric") = "top1", py::arg("smooth") = 0.7, py::arg("error_samples") = 0,
        py::arg("per_row") = false);
  m.def("prune", &prune, py::arg("input"), py::arg("output"), py::arg("sparsity"), py::arg("granularity"),
        py::arg("min_elements"));
}
