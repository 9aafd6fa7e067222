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

  void write_string(std::string_view s) {
    out_->push_back('"');
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
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
