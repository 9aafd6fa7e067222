// SPDX-License-Identifier: Apache-2.0
// A minimal streaming JSON writer for protocol responses: appends to one string, inserts the
// commas itself, escapes strings and prints floats in their shortest round-trip form.
// Non-finite floats are written as NaN / Infinity / -Infinity (what Python's json reads).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ignis::serve {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }

  // An object member's name; the next value call writes its value.
  JsonWriter& key(std::string_view k) {
    comma();
    write_string(k);
    out_->push_back(':');
    after_key_ = true;
    return *this;
  }

  JsonWriter& value(std::string_view s) {
    comma();
    write_string(s);
    return *this;
  }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b) {
    comma();
    out_->append(b ? "true" : "false");
    return *this;
  }
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(int64_t v) {
    comma();
    append_number(v);
    return *this;
  }
  JsonWriter& value(uint64_t v) {
    comma();
    append_number(v);
    return *this;
  }
  JsonWriter& value(double v) {
    comma();
    append_float(v);
    return *this;
  }
  JsonWriter& value(float v) {
    comma();
    append_float(v);
    return *this;
  }
  JsonWriter& null() {
    comma();
    out_->append("null");
    return *this;
  }
  // Already-encoded JSON text.
  JsonWriter& raw(std::string_view json) {
    comma();
    out_->append(json);
    return *this;
  }

  template <class T>
  JsonWriter& member(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  template <class T>
  void append_number(T v) {
    char buf[32];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out_->append(buf, p);
  }

  template <class F>
  void append_float(F v) {
    if (std::isnan(v)) {
      out_->append("NaN");
    } else if (std::isinf(v)) {
      out_->append(v > 0 ? "Infinity" : "-Infinity");
    } else {
      char buf[40];
      auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
      out_->append(buf, p);
    }
  }

  // For callers writing many array elements: a separator unless first in the container.
  void comma() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out_->push_back(',');
      first_.back() = false;
    }
  }

  // Length of the well-formed UTF-8 sequence at s[i] (1 for ASCII), or 0 when there is none.
  static size_t utf8_sequence(std::string_view s, size_t i) {
    auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) return 1;
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (Unicode table 3-7)
    if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return 0;
    }
    if (i + n > s.size() || b(i + 1) < lo || b(i + 1) > hi) return 0;
    for (size_t k = 2; k < n; ++k)
      if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
    return n;
  }

  // Escapes as JSON needs; bytes that are not UTF-8 (a name from a URL, say) become U+FFFD so
  // that the document stays valid.
  void write_string(std::string_view s) {
    out_->push_back('"');
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      const auto u = static_cast<unsigned char>(c);
      if (u >= 0x80) {
        const size_t n = utf8_sequence(s, i);
        if (n == 0) {
          out_->append("\xEF\xBF\xBD");
        } else {
          out_->append(s.substr(i, n));
          i += n - 1;
        }
        continue;
      }
      switch (c) {
        case '"': out_->append("\\\""); break;
        case '\\': out_->append("\\\\"); break;
        case '\n': out_->append("\\n"); break;
        case '\r': out_->append("\\r"); break;
        case '\t': out_->append("\\t"); break;
        default:
          if (u < 0x20) {
            static const char* hex = "0123456789abcdef";
            out_->append("\\u00");
            out_->push_back(hex[u >> 4]);
            out_->push_back(hex[u & 15]);
          } else {
            out_->push_back(c);
          }
      }
    }
    out_->push_back('"');
  }

 private:
  JsonWriter& open(char c) {
    comma();
    out_->push_back(c);
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    out_->push_back(c);
    first_.pop_back();
    return *this;
  }

  std::string* out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

// `{"error":"<message>"}`, the protocol's error body.
inline std::string json_error_body(std::string_view message) {
  std::string out;
  JsonWriter(&out).begin_object().member("error", message).end_object();
  return out;
}

}  // namespace ignis::serve
