// SPDX-License-Identifier: Apache-2.0
#include "core/text.h"

#include <locale.h>
#include <wctype.h>

#include <limits>
#include <map>
#include <mutex>

#include "core/strings.h"

namespace ignis {

namespace {

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// The code point that starts at s[i] and its length in bytes; -1 (length 1) when the bytes
// there are not a well-formed UTF-8 sequence (overlong forms and surrogates included).
int32_t decode_utf8(std::string_view s, size_t i, size_t& len) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  len = 1;
  if (b0 < 0x80) return b0;
  int32_t cp = 0;
  int32_t min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return -1;
  }
  if (i + len > s.size()) {
    len = 1;
    return -1;
  }
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      len = 1;
      return -1;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    len = 1;
    return -1;
  }
  return cp;
}

void append_utf8(int32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::vector<std::string_view> split_string(std::string_view s, std::string_view delimiter,
                                           std::optional<int64_t> maxsplit) {
  const int64_t limit = maxsplit && *maxsplit >= 0 ? *maxsplit : std::numeric_limits<int64_t>::max();
  std::vector<std::string_view> parts;
  int64_t splits = 0;
  if (delimiter.empty()) {
    size_t i = 0;
    const size_t n = s.size();
    for (;;) {
      while (i < n && is_ascii_space(s[i])) ++i;
      if (i == n) break;
      if (splits == limit) {
        size_t end = n;
        while (is_ascii_space(s[end - 1])) --end;
        parts.push_back(s.substr(i, end - i));
        break;
      }
      size_t j = i;
      while (j < n && !is_ascii_space(s[j])) ++j;
      parts.push_back(s.substr(i, j - i));
      i = j;
      ++splits;
    }
    return parts;
  }
  size_t start = 0;
  for (; splits < limit; ++splits) {
    const size_t at = s.find(delimiter, start);
    if (at == std::string_view::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + delimiter.size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

// A POSIX locale, opened once per name for the whole process (there are few).
struct CaseMapper::Locale {
  locale_t handle;
  explicit Locale(locale_t h) : handle(h) {}
  ~Locale() { freelocale(handle); }
  Locale(const Locale&) = delete;
  Locale& operator=(const Locale&) = delete;
};

CaseMapper::CaseMapper(const std::string& locale) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Locale>> opened;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = opened.find(locale); it != opened.end()) {
    locale_ = it->second;
    return;
  }
  std::vector<std::string> names;
  if (locale.find('.') != std::string::npos) names.push_back(locale);
  else if (!locale.empty()) names.insert(names.end(), {locale + ".UTF-8", locale + ".utf8"});
  names.insert(names.end(), {"C.UTF-8", "C.utf8"});
  for (const std::string& name : names) {
    if (locale_t h = newlocale(LC_CTYPE_MASK, name.c_str(), static_cast<locale_t>(nullptr))) {
      locale_ = std::make_shared<const Locale>(h);
      break;
    }
  }
  opened.emplace(locale, locale_);
}

std::string CaseMapper::map(std::string_view s, bool upper) const {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0, len = 0; i < s.size(); i += len) {
    const int32_t cp = decode_utf8(s, i, len);
    if (cp < 0) {
      out += s[i];
    } else if (!locale_) {
      const bool flip = upper ? (cp >= 'a' && cp <= 'z') : (cp >= 'A' && cp <= 'Z');
      append_utf8(flip ? cp ^ 0x20 : cp, out);
    } else {
      const auto c = static_cast<wint_t>(cp);
      append_utf8(static_cast<int32_t>(upper ? towupper_l(c, locale_->handle) : towlower_l(c, locale_->handle)), out);
    }
  }
  return out;
}

Result<StringNormalizerRules> StringNormalizerRules::read(const AttrMap& attrs) {
  using Kind = Attribute::Kind;
  static constexpr std::pair<std::string_view, Kind> kKinds[] = {
      {"case_change_action", Kind::String}, {"is_case_sensitive", Kind::Int},
      {"locale", Kind::String},             {"stopwords", Kind::Strings}};
  for (const auto& [name, kind] : kKinds)
    if (const Attribute* a = attrs.find(name); a && a->kind != kind)
      return invalid_argument(str_cat("attribute '", name, "' must be ", attribute_kind_name(kind), ", got ",
                                      attribute_kind_name(a->kind)));
  const std::string action = attrs.get_string("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return invalid_argument(str_cat("attribute 'case_change_action' must be NONE, LOWER or UPPER, got '", action, "'"));
  StringNormalizerRules r(attrs.get_string("locale", "en_US"));
  r.action_ = action == "LOWER" ? Case::Lower : action == "UPPER" ? Case::Upper : Case::None;
  r.case_sensitive_ = attrs.get_int("is_case_sensitive", 0) != 0;
  for (const std::string& w : attrs.get_strings("stopwords"))
    r.stopwords_.insert(r.case_sensitive_ ? w : r.mapper_.lower(w));
  return r;
}

bool StringNormalizerRules::is_stopword(std::string_view s) const {
  if (stopwords_.empty()) return false;
  return stopwords_.count(case_sensitive_ ? std::string(s) : mapper_.lower(s)) > 0;
}

std::string StringNormalizerRules::apply_case(std::string_view s) const {
  switch (action_) {
    case Case::Lower: return mapper_.lower(s);
    case Case::Upper: return mapper_.upper(s);
    case Case::None: break;
  }
  return std::string(s);
}

}  // namespace ignis
