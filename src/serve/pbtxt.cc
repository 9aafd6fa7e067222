// SPDX-License-Identifier: Apache-2.0
#include "serve/pbtxt.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

#include "core/strings.h"

namespace ignis::serve {

std::vector<const TextField*> TextMessage::all(std::string_view name) const {
  std::vector<const TextField*> out;
  for (const auto& f : fields)
    if (f.name == name) out.push_back(&f);
  return out;
}

const TextField* TextMessage::find(std::string_view name) const {
  const TextField* last = nullptr;
  for (const auto& f : fields)
    if (f.name == name) last = &f;
  return last;
}

std::optional<int64_t> TextField::as_int() const {
  if (kind != Kind::Scalar || quoted || scalar.empty()) return std::nullopt;
  int64_t v = 0;
  const char* b = scalar.data();
  const char* e = b + scalar.size();
  int base = 10;
  bool neg = false;
  if (*b == '-') neg = true, ++b;
  if (e - b > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) base = 16, b += 2;
  uint64_t u = 0;
  auto [p, ec] = std::from_chars(b, e, u, base);
  if (ec != std::errc() || p != e) return std::nullopt;
  if (neg) {
    if (u > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    v = static_cast<int64_t>(0 - u);
  } else {
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    v = static_cast<int64_t>(u);
  }
  return v;
}

std::optional<uint64_t> TextField::as_uint() const {
  auto v = as_int();
  if (!v || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

std::optional<double> TextField::as_double() const {
  if (kind != Kind::Scalar || quoted || scalar.empty()) return std::nullopt;
  std::string s = scalar;
  if (!s.empty() && (s.back() == 'f' || s.back() == 'F') && s.find_first_of("xX") == std::string::npos) s.pop_back();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::optional<bool> TextField::as_bool() const {
  if (kind != Kind::Scalar || quoted) return std::nullopt;
  if (scalar == "true" || scalar == "True" || scalar == "t" || scalar == "1") return true;
  if (scalar == "false" || scalar == "False" || scalar == "f" || scalar == "0") return false;
  return std::nullopt;
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Result<TextMessage> document() {
    TextMessage m;
    IGNIS_RETURN_IF_ERROR(fields(&m, '\0', 0));
    return m;
  }

 private:
  static constexpr int kMaxDepth = 64;

  Status error(const std::string& what) const { return invalid_argument(str_cat("line ", line_, ": ", what)); }

  void skip_space() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  static bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

  std::string identifier() {
    skip_space();
    const size_t b = pos_;
    while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
    return std::string(s_.substr(b, pos_ - b));
  }

  // Fields until `close` ('}' or '>'; '\0' = end of input).
  Status fields(TextMessage* m, char close, int depth) {
    if (depth > kMaxDepth) return error("messages nested too deeply");
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) {
        if (close == '\0') return Status::ok();
        return error(str_cat("expected '", close, "' before the end of the file"));
      }
      if (close != '\0' && s_[pos_] == close) {
        ++pos_;
        return Status::ok();
      }
      if (s_[pos_] == '[') return error("extension fields ('[...]') are not supported");
      const int field_line = line_;
      std::string name = identifier();
      if (name.empty()) return error(str_cat("expected a field name, found '", s_[pos_], "'"));
      const bool colon = eat(':');
      skip_space();
      if (pos_ >= s_.size()) return error(str_cat("field '", name, "' has no value"));
      if (s_[pos_] == '[') {
        ++pos_;
        if (!eat(']')) {
          for (;;) {
            IGNIS_RETURN_IF_ERROR(value(m, name, colon, field_line, depth, /*in_list=*/true));
            if (eat(']')) break;
            if (!eat(',')) return error(str_cat("expected ',' or ']' in the list of '", name, "'"));
          }
        }
      } else {
        IGNIS_RETURN_IF_ERROR(value(m, name, colon, field_line, depth, /*in_list=*/false));
      }
      skip_space();
      if (pos_ < s_.size() && (s_[pos_] == ',' || s_[pos_] == ';')) ++pos_;
    }
  }

  Status value(TextMessage* m, const std::string& name, bool colon, int field_line, int depth, bool in_list) {
    skip_space();
    TextField f;
    f.name = name;
    f.line = field_line;
    const char c = pos_ < s_.size() ? s_[pos_] : '\0';
    if (c == '{' || c == '<') {
      ++pos_;
      f.kind = TextField::Kind::Message;
      f.message = std::make_shared<TextMessage>();
      IGNIS_RETURN_IF_ERROR(fields(f.message.get(), c == '{' ? '}' : '>', depth + 1));
    } else {
      if (!colon && !in_list) return error(str_cat("expected ':' after '", name, "'"));
      if (c == '"' || c == '\'') {
        f.quoted = true;
        // Adjacent string literals concatenate.
        while (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) {
          IGNIS_RETURN_IF_ERROR(string_literal(&f.scalar));
          skip_space();
        }
      } else {
        const size_t b = pos_;
        if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
        while (pos_ < s_.size() && (ident_char(s_[pos_]) || s_[pos_] == '.' ||
                                    ((s_[pos_] == '-' || s_[pos_] == '+') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E'))))
          ++pos_;
        f.scalar = std::string(s_.substr(b, pos_ - b));
        if (f.scalar.empty() || f.scalar == "-" || f.scalar == "+")
          return error(str_cat("field '", name, "' has no value"));
        if (f.scalar[0] == '+') f.scalar.erase(0, 1);
      }
    }
    m->fields.push_back(std::move(f));
    return Status::ok();
  }

  Status string_literal(std::string* out) {
    const char quote = s_[pos_++];
    while (pos_ < s_.size() && s_[pos_] != quote) {
      char c = s_[pos_++];
      if (c == '\n') return error("newline inside a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) break;
      c = s_[pos_++];
      switch (c) {
        case 'n': out->push_back('\n'); break;
        case 't': out->push_back('\t'); break;
        case 'r': out->push_back('\r'); break;
        case '\\': out->push_back('\\'); break;
        case '\'': out->push_back('\''); break;
        case '"': out->push_back('"'); break;
        case 'x': {
          int v = 0, n = 0;
          while (n < 2 && pos_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[pos_]))) {
            const char h = s_[pos_++];
            v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
            ++n;
          }
          if (n == 0) return error("\\x without hex digits");
          out->push_back(static_cast<char>(v));
          break;
        }
        default:
          if (c >= '0' && c <= '7') {
            int v = c - '0', n = 1;
            while (n < 3 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7') v = v * 8 + (s_[pos_++] - '0'), ++n;
            out->push_back(static_cast<char>(v & 0xff));
          } else {
            return error(str_cat("unknown escape '\\", c, "' in a string"));
          }
      }
    }
    if (pos_ >= s_.size()) return error("unterminated string");
    ++pos_;
    return Status::ok();
  }

  std::string_view s_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

Result<TextMessage> parse_text_message(std::string_view text) { return Parser(text).document(); }

}  // namespace ignis::serve
