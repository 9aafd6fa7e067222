// SPDX-License-Identifier: Apache-2.0
// A reader for protobuf's text format (the syntax of Triton's config.pbtxt) into a generic tree,
// so model configs are read without protobuf or a schema: the config layer maps the fields it
// knows and names the rest as ignored.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ignis/status.h"

namespace ignis::serve {

struct TextField;

// One message: its fields in file order. Repeated fields appear once per occurrence
// (`dims: [1, 2]` is expanded to two scalar fields named "dims").
struct TextMessage {
  std::vector<TextField> fields;

  // The fields named `name`, in order.
  std::vector<const TextField*> all(std::string_view name) const;
  // The last field named `name` (protobuf's rule for a repeated singular field), or null.
  const TextField* find(std::string_view name) const;
};

struct TextField {
  enum class Kind { Scalar, Message };
  std::string name;
  Kind kind = Kind::Scalar;
  // Scalars keep their spelling: identifiers (enum values, true/false) and numbers as written,
  // strings unquoted and unescaped; `quoted` tells them apart.
  std::string scalar;
  bool quoted = false;
  std::shared_ptr<TextMessage> message;  // for Kind::Message
  int line = 0;                          // 1-based, for messages

  std::optional<int64_t> as_int() const;
  std::optional<uint64_t> as_uint() const;
  std::optional<double> as_double() const;
  std::optional<bool> as_bool() const;
};

// Parses a whole text-format document. Errors name the line and what was expected.
Result<TextMessage> parse_text_message(std::string_view text);

}  // namespace ignis::serve
