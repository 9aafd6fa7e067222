// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the string ops (schemas in src/ir/ops/string.cc): StringNormalizer,
// RegexFullMatch (RE2), StringSplit, StringConcat and Equal on strings, and Cast's conversions
// between strings and numbers (string_internal.h).
//
// Where onnxruntime and the ONNX reference differ, the choices are:
// - Numbers print as the reference (numpy) prints them, which the node tests hold: the
//   shortest digits that read back as the same value (onnxruntime prints "%.8g", so float32
//   0.6048455 comes out "0.60484552" there), bools as "True" and "False"; but NaN and the
//   infinities as the spec's "NaN", "INF" and "-INF" (numpy: "nan", "inf").
// - Strings parse as decimal or scientific numbers with surrounding whitespace allowed, "INF",
//   "+INF", "-INF", "NaN" (and "infinity") in any case. A non-integer string cast to an integer
//   truncates ("2.7" -> 2, "1e3" -> 1000); "true"/"false" also cast to bool. Anything else is an
//   error naming the element (the spec leaves it undefined).
// - StringSplit follows the spec and the reference (src/core/text.h).
#include <re2/re2.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/text.h"
#include "kernels/ref/elementwise_internal.h"
#include "kernels/ref/string_internal.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

namespace {

using ew::double_to;
using ew::for_each_broadcast_row;

// ---- Cast to and from strings --------------------------------------------------------------

// The shortest decimal digits that read back as `v` (finite, > 0), and the decimal exponent of
// the first one: 0.0392 -> "392", -2.
template <class T>
void shortest_digits(T v, std::string& digits, int& exp10) {
  char buf[64];
  std::to_chars_result r{};
  if constexpr (std::is_floating_point_v<T>) {
    r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  } else {
    // No shortest form in <charconv> for the 16-bit floats: the fewest correctly rounded digits
    // that convert back to the same value.
    const double x = static_cast<double>(to_compute(v));
    for (int precision = 0; precision < 17; ++precision) {
      r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific, precision);
      double back = 0;
      std::from_chars(buf, r.ptr, back);
      if (double_to<T>(back).bits == v.bits) break;
    }
  }
  const std::string_view text(buf, static_cast<size_t>(r.ptr - buf));  // "3.92e-02"
  const size_t e = text.find('e');
  digits.clear();
  for (char c : text.substr(0, e))
    if (c != '.') digits += c;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+' ? 1 : 0), text.data() + text.size(), exp10);
}

// As numpy's str() prints a float: the shortest digits that read back as the value, positional
// ("0.5", "100000.0") when the value is 0 or 1e-4 <= |v| < 10^cutoff, scientific ("1e-05",
// "1.2345679e+08") otherwise, where cutoff is 16 for float64, 6 for float32 and 3 for the 16-bit
// floats. NaN and the infinities are the spec's "NaN", "INF" and "-INF".
template <class T>
std::string format_float(T v) {
  const double x = static_cast<double>(to_compute(v));
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x < 0 ? "-INF" : "INF";
  const std::string sign = std::signbit(x) ? "-" : "";
  if (x == 0) return sign + "0.0";
  const double cutoff = std::is_same_v<T, double> ? 1e16 : std::is_same_v<T, float> ? 1e6 : 1e3;
  std::string d;
  int e = 0;
  if constexpr (std::is_floating_point_v<T>) shortest_digits(std::abs(v), d, e);
  else shortest_digits(from_compute<T>(std::abs(to_compute(v))), d, e);
  const double a = std::abs(x);
  if (a >= 1e-4 && a < cutoff) {
    if (e < 0) return sign + "0." + std::string(static_cast<size_t>(-e - 1), '0') + d;
    const auto whole = static_cast<size_t>(e) + 1;
    if (d.size() <= whole) return sign + d + std::string(whole - d.size(), '0') + ".0";
    return sign + d.substr(0, whole) + "." + d.substr(whole);
  }
  const std::string mantissa = d.size() > 1 ? d.substr(0, 1) + "." + d.substr(1) : d;
  const int ae = std::abs(e);
  return str_cat(sign, mantissa, "e", e < 0 ? "-" : "+", ae < 10 ? "0" : "", ae);
}

template <class T>
std::string format_value(T v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
  else if constexpr (std::is_integral_v<T>) return std::to_string(v);
  else return format_float(v);
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// The whole of `s` (trimmed, one leading '+' allowed) as a T, or nullopt.
template <class T>
std::optional<T> parse_whole(std::string_view s) {
  s = trim(s);
  if (s.size() > 1 && s[0] == '+' && s[1] != '-') s.remove_prefix(1);
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (end != s.data() + s.size() || s.empty()) return std::nullopt;
  if (ec == std::errc::result_out_of_range && std::is_floating_point_v<T>) {
    // Beyond the type's range: strtod gives inf or the (sub)normal nearest to 0, like a cast.
    const std::string z(s);
    return static_cast<T>(std::strtod(z.c_str(), nullptr));
  }
  if (ec != std::errc()) return std::nullopt;
  return v;
}

template <class T>
std::optional<T> parse_value(const std::string& s) {
  if constexpr (std::is_same_v<T, bool>) {
    const std::string_view t = trim(s);
    auto is = [&](std::string_view word) {
      if (t.size() != word.size()) return false;
      for (size_t i = 0; i < t.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(t[i])) != word[i]) return false;
      return true;
    };
    if (is("true")) return true;
    if (is("false")) return false;
    if (auto d = parse_whole<double>(s)) return *d != 0.0;
    return std::nullopt;
  } else if constexpr (std::is_integral_v<T>) {
    // Integers exactly (through the widest integer of T's signedness, narrowed modularly as
    // casts between integers are); other numbers truncated.
    using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    if (auto i = parse_whole<Wide>(s)) return static_cast<T>(*i);
    if constexpr (std::is_unsigned_v<T>) {
      if (auto i = parse_whole<int64_t>(s)) return static_cast<T>(*i);
    }
    if (auto d = parse_whole<double>(s)) return ew::float_to_int<T>(*d);
    return std::nullopt;
  } else if constexpr (std::is_same_v<T, float>) {
    return parse_whole<float>(s);  // rounded once, from the text
  } else {
    if (auto d = parse_whole<double>(s)) return double_to<T>(*d);
    return std::nullopt;
  }
}

}  // namespace

void cast_to_string(const Tensor& in, Tensor& out) {
  auto* y = out.data_as<std::string>();
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_as<const T>();
    for (int64_t i = 0; i < in.numel(); ++i) y[i] = format_value(x[i]);
  });
}

Status cast_from_string(const Tensor& in, Tensor& out) {
  const auto* x = in.data_as<const std::string>();
  Status status;
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data_as<T>();
    for (int64_t i = 0; i < in.numel(); ++i) {
      const std::optional<T> v = parse_value<T>(x[i]);
      if (!v) {
        status = invalid_argument(str_cat("element ", i, " \"", x[i], "\" is not a ", dtype_name(out.dtype()),
                                          " number"));
        return;
      }
      y[i] = *v;
    }
  });
  return status;
}

namespace {

// ---- StringNormalizer ----------------------------------------------------------------------

class StringNormalizerKernel final : public Kernel {
 public:
  explicit StringNormalizerKernel(StringNormalizerRules rules) : rules_(std::move(rules)) {}

  // The output holds the kept elements in order (its length was inferred from the same rules),
  // or one empty string when none is kept.
  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const auto* in = x.data_as<const std::string>();
    auto* out = ctx.output(0).data_as<std::string>();
    int64_t n = 0;
    for (int64_t i = 0; i < x.numel(); ++i)
      if (!rules_.is_stopword(in[i])) out[n++] = rules_.apply_case(in[i]);
    if (n == 0 && ctx.output(0).numel() == 1) out[0].clear();
    return Status::ok();
  }

 private:
  StringNormalizerRules rules_;
};

Result<std::unique_ptr<Kernel>> make_string_normalizer(const KernelInit& init) {
  IGNIS_ASSIGN_OR_RETURN(StringNormalizerRules rules, StringNormalizerRules::read(init.attrs));
  return std::unique_ptr<Kernel>(std::make_unique<StringNormalizerKernel>(std::move(rules)));
}

// ---- RegexFullMatch ------------------------------------------------------------------------

// The pattern is compiled once, when the kernel is made; RE2 matches from many threads.
class RegexFullMatchKernel final : public Kernel {
 public:
  explicit RegexFullMatchKernel(std::unique_ptr<const RE2> re) : re_(std::move(re)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const auto* in = x.data_as<const std::string>();
    bool* out = ctx.output(0).data_as<bool>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = RE2::FullMatch(in[i], *re_);
    return Status::ok();
  }

 private:
  std::unique_ptr<const RE2> re_;
};

Result<std::unique_ptr<Kernel>> make_regex_full_match(const KernelInit& init) {
  RE2::Options options;
  options.set_log_errors(false);
  const std::string pattern = init.attrs.get_string("pattern");
  auto re = std::make_unique<const RE2>(pattern, options);
  if (!re->ok())
    return invalid_argument(
        str_cat("attribute 'pattern' \"", pattern, "\" is not a valid RE2 regular expression: ", re->error()));
  return std::unique_ptr<Kernel>(std::make_unique<RegexFullMatchKernel>(std::move(re)));
}

// ---- StringSplit ---------------------------------------------------------------------------

Status string_split(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const std::string delimiter = ctx.attrs().get_string("delimiter");
  std::optional<int64_t> maxsplit;
  if (ctx.attrs().has("maxsplit")) maxsplit = ctx.attrs().get_int("maxsplit");
  const int64_t width = y.dim(y.rank() - 1);
  const auto* in = x.data_as<const std::string>();
  auto* parts_out = y.data_as<std::string>();
  int64_t* counts = ctx.has_output(1) ? ctx.output(1).data_as<int64_t>() : nullptr;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto parts = split_string(in[i], delimiter, maxsplit);
    for (size_t k = 0; k < parts.size(); ++k) parts_out[i * width + static_cast<int64_t>(k)] = parts[k];
    if (counts != nullptr) counts[i] = static_cast<int64_t>(parts.size());
  }
  return Status::ok();
}

// ---- StringConcat, Equal -------------------------------------------------------------------

// out[i] = fn(a[.], b[.]) with a and b broadcast to out's shape.
template <class Out, class Fn>
void broadcast_strings(KernelContext& ctx, Fn&& fn) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& out = ctx.output(0);
  const auto* pa = a.data_as<const std::string>();
  const auto* pb = b.data_as<const std::string>();
  Out* po = out.data_as<Out>();
  for_each_broadcast_row<2>(
      ctx.pool(), out.shape(), {a.shape(), b.shape()},
      [&](int64_t o, const std::array<int64_t, 2>& off, int64_t len, const std::array<int64_t, 2>& st) {
        for (int64_t i = 0; i < len; ++i) po[o + i] = fn(pa[off[0] + i * st[0]], pb[off[1] + i * st[1]]);
      });
}

Status string_concat(KernelContext& ctx) {
  broadcast_strings<std::string>(ctx, [](const std::string& a, const std::string& b) { return a + b; });
  return Status::ok();
}

Status equal_strings(KernelContext& ctx) {
  broadcast_strings<bool>(ctx, [](const std::string& a, const std::string& b) { return a == b; });
  return Status::ok();
}

}  // namespace

void register_string(KernelRegistry& r) {
  const DTypeSet strings{DType::String};
  r.add({.op_type = "StringNormalizer", .since_opset = 10, .types = strings, .id = "ref/stringnormalizer",
         .factory = make_string_normalizer});
  r.add({.op_type = "RegexFullMatch", .since_opset = 20, .types = strings, .id = "ref/regexfullmatch",
         .factory = make_regex_full_match});
  r.add({.op_type = "StringSplit", .since_opset = 20, .types = strings, .id = "ref/stringsplit", .fn = string_split});
  r.add({.op_type = "StringConcat", .since_opset = 20, .types = strings, .id = "ref/stringconcat",
         .fn = string_concat});
  r.add({.op_type = "Equal", .since_opset = 19, .types = strings, .id = "ref/equal_string", .fn = equal_strings});
}

}  // namespace ignis::kernels::ref
