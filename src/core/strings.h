// SPDX-License-Identifier: Apache-2.0
// Small string helpers for error messages (g++ 12 has no std::format).
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace ignis {

template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

template <class Range>
std::string str_join(const Range& items, const char* sep = ", ") {
  std::ostringstream os;
  bool first = true;
  for (const auto& x : items) {
    if (!first) os << sep;
    os << x;
    first = false;
  }
  return os.str();
}

// "[1, 2, 3]"
template <class Range>
std::string str_list(const Range& items) {
  return "[" + str_join(items) + "]";
}

}  // namespace ignis
