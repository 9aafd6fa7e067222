// SPDX-License-Identifier: Apache-2.0
#include "core/onnx_op_versions.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ignis {

namespace {

struct VersionTable {
  std::map<std::string, int64_t, std::less<>> newest;                                // domain -> opset
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>, std::less<>> ops;  // ascending
};

const VersionTable& table() {
  static const VersionTable t = [] {
    VersionTable v;
    auto op = [&v](const char* domain, const char* name, std::initializer_list<int64_t> versions) {
      v.ops[{domain, name}] = std::vector<int64_t>(versions);
    };
#define IGNIS_ONNX_NEWEST_OPSET(domain, opset) v.newest[domain] = opset;
#define IGNIS_ONNX_OP(domain, name, ...) op(domain, name, {__VA_ARGS__});
#include "core/onnx_op_versions.inc"
#undef IGNIS_ONNX_OP
#undef IGNIS_ONNX_NEWEST_OPSET
    return v;
  }();
  return t;
}

}  // namespace

int64_t onnx_newest_opset(std::string_view domain) {
  const auto& t = table();
  auto it = t.newest.find(domain);
  return it == t.newest.end() ? 0 : it->second;
}

int64_t onnx_op_version(std::string_view domain, std::string_view op_type, int64_t opset) {
  const int64_t newest = onnx_newest_opset(domain);
  if (newest == 0 || opset > newest) return opset;
  const auto& ops = table().ops;
  auto it = ops.find(std::pair<std::string, std::string>(domain, op_type));
  if (it == ops.end()) return opset;
  const auto& v = it->second;
  auto up = std::upper_bound(v.begin(), v.end(), opset);  // first version newer than opset
  return up == v.begin() ? opset : *(up - 1);
}

}  // namespace ignis
