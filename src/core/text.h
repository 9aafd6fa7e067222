// SPDX-License-Identifier: Apache-2.0
// What the string ops' shape inference and kernels both need, so the two agree on output
// shapes: StringSplit's splitting and StringNormalizer's stopwords and case change (UTF-8,
// case rules of a locale).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/attribute.h"
#include "ignis/status.h"

namespace ignis {

// StringSplit of one string. An empty `delimiter` splits at runs of ASCII whitespace and drops
// leading and trailing whitespace (also after the last split, as the spec says); otherwise each
// delimiter ends a part, so consecutive delimiters delimit empty parts and "" is one empty part
// (Python's str.split, which the ONNX reference runs). At most `maxsplit` splits when it is set
// and not negative; the rest of the string is the last part.
std::vector<std::string_view> split_string(std::string_view s, std::string_view delimiter,
                                           std::optional<int64_t> maxsplit);

// Upper- and lowercasing of UTF-8 text, code point by code point, with the simple (one to one)
// case mappings of a locale. Bytes that are not valid UTF-8 are kept as they are.
class CaseMapper {
 public:
  // `locale` as ONNX names it ("en_US"): its UTF-8 variant is used when installed, else C.UTF-8
  // (Unicode's mappings, without a language's special rules), else ASCII letters only.
  explicit CaseMapper(const std::string& locale);
  std::string upper(std::string_view s) const { return map(s, true); }
  std::string lower(std::string_view s) const { return map(s, false); }

 private:
  struct Locale;
  std::string map(std::string_view s, bool upper) const;
  std::shared_ptr<const Locale> locale_;  // null: ASCII only
};

// StringNormalizer's attributes, read and checked once: which elements are stopwords and how
// the kept ones change case.
class StringNormalizerRules {
 public:
  enum class Case { None, Lower, Upper };
  // InvalidArgument naming the attribute when one is malformed.
  static Result<StringNormalizerRules> read(const AttrMap& attrs);

  bool has_stopwords() const { return !stopwords_.empty(); }
  // Whole-element match, ignoring case (compared lowercased) unless is_case_sensitive.
  bool is_stopword(std::string_view s) const;
  std::string apply_case(std::string_view s) const;

 private:
  explicit StringNormalizerRules(const std::string& locale) : mapper_(locale) {}
  Case action_ = Case::None;
  bool case_sensitive_ = false;
  CaseMapper mapper_;
  std::unordered_set<std::string> stopwords_;  // lowercased unless case_sensitive_
};

}  // namespace ignis
