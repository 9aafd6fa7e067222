// SPDX-License-Identifier: Apache-2.0
// Tensor files: ONNX TensorProto .pb, and extension dispatch between .pb and .npy.
#include <fstream>
#include <iterator>
#include <vector>

#include "core/strings.h"
#include "ignis/tensor_io.h"
#include "onnx/import.h"

namespace ignis {

namespace {

// Reads `path` whole and hands its bytes to `parse`; errors name the file.
template <class Parse>
Result<Tensor> parse_file(const std::string& path, Parse parse) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(str_cat("cannot open '", path, "'"));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto r = parse(std::as_bytes(std::span<const char>(bytes)));
  if (!r) return Status(r.error().code(), str_cat("'", path, "': ", r.error().message()));
  return r;
}

}  // namespace

Result<Tensor> read_tensor_proto(const std::string& path, std::string* name) {
  return parse_file(path, [&](std::span<const std::byte> b) { return onnx_io::import_tensor_proto(b, name); });
}

Result<Tensor> read_onnx_value(const std::string& path, DType kind) {
  return parse_file(path, [&](std::span<const std::byte> b) { return onnx_io::import_value_proto(b, kind); });
}

Result<Tensor> read_tensor_file(const std::string& path) {
  auto ends_with = [&](const char* ext) {
    const std::string e(ext);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (ends_with(".npy")) return read_npy(path);
  if (ends_with(".pb")) return read_tensor_proto(path);
  return invalid_argument(str_cat("'", path, "': unknown tensor file type (expected .npy or .pb)"));
}

}  // namespace ignis
