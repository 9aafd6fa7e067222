// SPDX-License-Identifier: Apache-2.0
#include "cli/common.h"

#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "cli/default_model.h"
#include "core/dtype_dispatch.h"
#include "core/low_bit.h"
#include "core/memory_info.h"
#include "core/strings.h"

namespace ignis::cli {

Result<Session> open_model(const std::string& path, const SessionOptions& options) {
  if (path == kDefaultModel) {
    auto bytes = default_model_bytes();
    if (bytes.empty()) return not_found("this build has no built-in default model; pass a MODEL path");
    return Session::open_bytes(bytes, options);
  }
  return Session::open(path, options);
}

namespace {

// Integer inputs get small values in [0, index_limit) (safe as token ids and indices; the
// limit comes from the tables the input indexes, else 100); inputs named like a mask get all
// ones, since a random "mask" (e.g. 57) makes (1 - mask) * -FLT_MAX overflow.
Tensor random_tensor(const std::string& name, DType dtype, const Shape& shape, int64_t index_limit,
                     std::mt19937_64& rng) {
  Tensor t = Tensor::empty(dtype, shape);
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool is_mask = lower.find("mask") != std::string::npos;
  const int64_t hi = std::max<int64_t>(0, std::min<int64_t>(99, index_limit - 1));
  const int64_t one = std::min<int64_t>(1, hi);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int64_t> small(0, hi);
  if (dtype == DType::String) {  // short words, "w0".."w99"
    for (int64_t i = 0; i < t.numel(); ++i) t.data_as<std::string>()[i] = str_cat("w", small(rng));
    return t;
  }
  if (dtype_is_low_bit(dtype)) {  // one byte per element: a code of the type
    auto* p = static_cast<uint8_t*>(t.data());
    for (int64_t i = 0; i < t.numel(); ++i)
      p[i] = dtype_is_low_bit_float(dtype) ? low_bit_float_from_double(dtype, normal(rng))
                                           : low_bit_int_from_int64(dtype, is_mask ? one : small(rng));
    return t;
  }
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data_as<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, bool>) p[i] = is_mask || (rng() & 1) != 0;
      else if constexpr (std::is_floating_point_v<compute_t<T>>) p[i] = from_compute<T>(normal(rng));
      else p[i] = static_cast<T>(is_mask ? one : small(rng));
    }
  });
  return t;
}

// Generated inputs must fit the session's memory limit, and so must the run they are for
// (planning reads only shapes, so data-less views stand in for the inputs not made yet).
Status check_generated_sizes(const Session& session, const NamedTensors& given,
                             const std::vector<std::pair<const ValueInfo*, Shape>>& generated) {
  const size_t limit = session.memory_limit_bytes();
  size_t total = 0;
  std::vector<std::string> shapes;
  NamedTensors probe = given;
  for (const auto& [in, shape] : generated) {
    auto bytes = tensor_bytes(in->dtype, shape);
    if (!bytes)
      return invalid_argument(str_cat("input '", in->name, "' of shape ", shape.str(),
                                      " would need more bytes than 64-bit sizes can express"));
    total = *bytes > SIZE_MAX - total ? SIZE_MAX : total + *bytes;
    shapes.push_back(str_cat(in->name, ": ", shape.str()));
    probe.emplace_back(in->name, Tensor::view(in->dtype, shape, static_cast<const void*>(nullptr)));
  }
  if (total > limit)
    return resource_exhausted(str_cat("generated inputs {", str_join(shapes), "} need ", format_bytes(total),
                                      ", more than the session's memory limit of ", format_bytes(limit)));
  auto planned = session.arena_bytes(probe);
  if (!planned && planned.error().code() == StatusCode::ResourceExhausted) return planned.error();
  return Status::ok();  // other planning errors are the run's to report, after its input checks
}

}  // namespace

Result<NamedTensors> make_inputs(const Session& session, const InputOptions& opts) {
  NamedTensors inputs;
  auto given = [&](const std::string& name) {
    return std::any_of(inputs.begin(), inputs.end(), [&](const auto& p) { return p.first == name; });
  };
  auto declared = [&](const std::string& name) -> const ValueInfo* {
    for (const auto& in : session.inputs())
      if (in.name == name) return &in;
    return nullptr;
  };
  for (const auto& spec : opts.files) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return invalid_argument(str_cat("--input expects NAME=FILE, got '", spec, "'"));
    const std::string name = spec.substr(0, eq);
    const std::string path = spec.substr(eq + 1);
    if (given(name)) return invalid_argument(str_cat("input '", name, "' is given twice with --input"));
    const ValueInfo* decl = declared(name);
    const bool proto = path.size() > 3 && path.compare(path.size() - 3, 3, ".pb") == 0;
    auto t = proto && decl ? read_onnx_value(path, decl->dtype) : read_tensor_file(path);
    if (!t) return Status(t.error().code(), str_cat("input '", name, "' from '", path, "': ", t.error().message()));
    inputs.emplace_back(name, std::move(*t));
  }
  if (!opts.dir.empty()) {
    if (!std::filesystem::is_directory(opts.dir)) return not_found(str_cat("inputs folder '", opts.dir, "' does not exist"));
    const size_t before = inputs.size();
    auto load = [&](const std::string& name, const std::string& path, bool npy) -> Status {
      const ValueInfo* decl = declared(name);
      auto t = npy ? read_npy(path) : read_onnx_value(path, decl ? decl->dtype : DType::Undefined);
      if (!t) return Status(t.error().code(), str_cat("input '", name, "' from '", path, "': ", t.error().message()));
      inputs.emplace_back(name, std::move(*t));
      return Status::ok();
    };
    for (const auto& in : session.inputs()) {  // NAME.npy, as `ignis run -o` names its files
      const std::string path = str_cat(opts.dir, "/", tensor_file_name(in.name), ".npy");
      if (!given(in.name) && std::filesystem::exists(path)) IGNIS_RETURN_IF_ERROR(load(in.name, path, true));
    }
    for (size_t i = 0; i < session.inputs().size(); ++i) {  // ONNX test data: input_<i>.pb
      const std::string path = str_cat(opts.dir, "/input_", i, ".pb");
      if (!std::filesystem::exists(path)) break;
      const std::string& name = session.inputs()[i].name;
      if (!given(name)) IGNIS_RETURN_IF_ERROR(load(name, path, false));
    }
    if (inputs.size() == before && opts.files.size() < session.inputs().size())
      return not_found(str_cat("inputs folder '", opts.dir, "' holds no NAME.npy for an input of the model nor input_0.pb"));
  }
  IGNIS_ASSIGN_OR_RETURN(const auto dims, parse_dim_specs(opts.dim_specs));
  // Shapes first: sizes are checked, and the model planned for them, before any data is made.
  std::vector<std::pair<const ValueInfo*, Shape>> generated;
  for (const auto& in : session.inputs()) {
    if (given(in.name)) continue;
    if (dtype_is_container(in.dtype))
      return invalid_argument(str_cat("input '", in.name, "' is a ", in.type_text,
                                      ", which ignis cannot make up; give it with --input NAME=FILE.pb (an ONNX ",
                                      in.dtype == DType::Sequence ? "SequenceProto" : in.dtype == DType::Optional ? "OptionalProto" : "MapProto",
                                      ")"));
    if (!in.has_shape || in.dtype == DType::Undefined)
      return invalid_argument(str_cat("input '", in.name, "' declares no type/shape; give it with --input"));
    Shape shape;
    bool leading = true;
    for (size_t d = 0; d < in.dims.size(); ++d) {
      int64_t v = in.dims[d];
      if (v < 0) {
        auto it = dims.find(in.dim_names[d]);
        if (it != dims.end()) v = it->second;
        else if (leading && opts.batch > 0) v = opts.batch;
        else v = 1;
        leading = false;
      }
      shape.push_back(v);
    }
    if (opts.batch > 0 && !in.dims.empty() && in.dims[0] >= 0 && in.dims[0] != opts.batch && in.dims[0] != 1)
      return invalid_argument(str_cat("input '", in.name, "' has a fixed batch of ", in.dims[0], "; --batch cannot change it"));
    generated.emplace_back(&in, shape);
  }
  IGNIS_RETURN_IF_ERROR(check_generated_sizes(session, inputs, generated));
  std::mt19937_64 rng(opts.seed);
  const auto& limits = session.model_info().index_limits;
  for (const auto& [in, shape] : generated) {
    auto limit = limits.find(in->name);
    inputs.emplace_back(in->name, random_tensor(in->name, in->dtype, shape, limit == limits.end() ? 100 : limit->second, rng));
  }
  return inputs;
}

std::string summarize(const Tensor& t) {
  std::ostringstream os;
  os << t.type_string();
  if (t.dtype() == DType::String && t.numel() > 0) {
    os << "  [";
    const int64_t show = std::min<int64_t>(t.numel(), 6);
    for (int64_t i = 0; i < show; ++i) os << (i ? ", " : "") << '"' << t.data_as<std::string>()[i] << '"';
    os << (t.numel() > show ? ", ...]" : "]");
  }
  if (t.numel() == 0 || !dtype_is_plain(t.dtype())) return os.str();
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = load_as_double(t.dtype(), t.data(), i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  os << "  min " << lo << " max " << hi << " mean " << sum / static_cast<double>(t.numel()) << "  [";
  const int64_t show = std::min<int64_t>(t.numel(), 6);
  for (int64_t i = 0; i < show; ++i) os << (i ? ", " : "") << load_as_double(t.dtype(), t.data(), i);
  os << (t.numel() > show ? ", ...]" : "]");
  if (t.rank() == 2 && dtype_is_float(t.dtype()) && t.dim(1) > 1) {
    os << "  argmax per row [";
    const int64_t rows = std::min<int64_t>(t.dim(0), 16);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t best = 0;
      for (int64_t c = 1; c < t.dim(1); ++c)
        if (load_as_double(t.dtype(), t.data(), r * t.dim(1) + c) > load_as_double(t.dtype(), t.data(), r * t.dim(1) + best))
          best = c;
      os << (r ? ", " : "") << best;
    }
    os << (t.dim(0) > rows ? ", ...]" : "]");
  }
  return os.str();
}

int64_t peak_rss_bytes() {
  // VmHWM belongs to this process image. getrusage's ru_maxrss survives exec on Linux, so a
  // process started from a large parent (e.g. Python's subprocess) would report the parent's.
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

int fail(const Status& s) {
  std::fprintf(stderr, "ignis: error: %s\n", s.to_string().c_str());
  return 1;
}

Result<std::map<std::string, int64_t>> parse_dim_specs(const std::vector<std::string>& specs) {
  std::map<std::string, int64_t> dims;
  for (const auto& spec : specs) {
    const size_t eq = spec.find('=');
    char* end = nullptr;
    errno = 0;
    const long long v = eq == std::string::npos ? -1 : std::strtoll(spec.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || eq == 0 || v < 0 || (end && *end != '\0') || errno == ERANGE)
      return invalid_argument(str_cat("--dim expects NAME=VALUE with 0 <= VALUE < 2^63, got '", spec, "'"));
    dims[spec.substr(0, eq)] = v;
  }
  return dims;
}

void apply_session_cli(SessionOptions& so, const TuningCliOptions& tuning, const InputOptions& inputs) {
  so.tuning = tuning.mode == "off" ? Tuning::Off : tuning.mode == "measure" ? Tuning::Measure : Tuning::Cached;
  so.tuning_cache = tuning.cache;
  if (auto dims = parse_dim_specs(inputs.dim_specs)) so.plan_dims = *dims;
  so.plan_batch = inputs.batch;
}

Precision parse_precision(const std::string& precision) {
  if (precision == "bf16") return Precision::Bf16;
  return precision == "fp16" ? Precision::F16 : Precision::F32;
}

OptLevel parse_level(const std::string& level) {
  if (level == "none") return OptLevel::None;
  if (level == "basic") return OptLevel::Basic;
  if (level == "extended") return OptLevel::Extended;
  return OptLevel::All;
}

}  // namespace ignis::cli
