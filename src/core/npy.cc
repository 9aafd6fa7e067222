// SPDX-License-Identifier: Apache-2.0
// numpy .npy reader/writer (format versions 1-3, little-endian, C order).
#include <cstring>
#include <fstream>
#include <regex>

#include "core/npy_stream.h"
#include "core/strings.h"
#include "ignis/tensor_io.h"

namespace ignis {
namespace {

struct NpyType {
  const char* descr;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {
    {"<f4", DType::F32}, {"<f8", DType::F64}, {"<f2", DType::F16}, {"|i1", DType::I8},
    {"<i2", DType::I16}, {"<i4", DType::I32}, {"<i8", DType::I64}, {"|u1", DType::U8},
    {"<u2", DType::U16}, {"<u4", DType::U32}, {"<u8", DType::U64}, {"|b1", DType::Bool},
};

}  // namespace

Result<Tensor> read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(str_cat("cannot open '", path, "'"));
  return read_npy_stream(in, path);
}

Result<Tensor> read_npy_stream(std::istream& in, const std::string& path) {
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return invalid_argument(str_cat("'", path, "' is not a .npy file (bad magic)"));
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) return invalid_argument(str_cat("'", path, "': truncated header"));
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) return invalid_argument(str_cat("'", path, "': truncated header"));
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return unsupported(str_cat("'", path, "': .npy format version ", major, " is not supported"));
  }
  if (header_len > (1u << 20)) return invalid_argument(str_cat("'", path, "': header too large"));
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) return invalid_argument(str_cat("'", path, "': truncated header"));

  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']+)'")))
    return invalid_argument(str_cat("'", path, "': header has no descr"));
  std::string descr = m[1];
  if (descr == "<b1") descr = "|b1";
  if (descr == "<i1") descr = "|i1";
  if (descr == "<u1") descr = "|u1";
  DType dtype = DType::Undefined;
  for (const auto& t : kNpyTypes)
    if (descr == t.descr) dtype = t.dtype;
  if (dtype == DType::Undefined)
    return unsupported(str_cat("'", path, "': numpy dtype '", descr, "' is not supported (need little-endian numeric or bool)"));
  if (std::regex_search(header, m, std::regex("'fortran_order':\\s*True")))
    return unsupported(str_cat("'", path, "': Fortran-ordered arrays are not supported; save with np.ascontiguousarray"));
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    return invalid_argument(str_cat("'", path, "': header has no shape"));
  Shape shape;
  std::string dims = m[1];
  std::regex num("(\\d+)");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator(); ++it) {
    if (shape.rank() == Shape::kMaxRank) return unsupported(str_cat("'", path, "': rank above ", Shape::kMaxRank));
    shape.push_back(std::stoll((*it)[1]));
  }
  if (shape.numel() > (int64_t{1} << 36)) return invalid_argument(str_cat("'", path, "': implausibly large array"));
  Tensor t = Tensor::empty(dtype, shape);
  if (t.nbytes() > 0 && !in.read(static_cast<char*>(t.data()), static_cast<std::streamsize>(t.nbytes())))
    return invalid_argument(str_cat("'", path, "': data is shorter than shape ", shape.str(), " needs"));
  return t;
}

Status write_npy(const std::string& path, const Tensor& tensor) {
  const char* descr = nullptr;
  for (const auto& t : kNpyTypes)
    if (t.dtype == tensor.dtype()) descr = t.descr;
  if (!descr) return unsupported(str_cat("cannot write dtype ", dtype_name(tensor.dtype()), " to .npy"));
  std::string shape;
  for (int i = 0; i < tensor.rank(); ++i) shape += str_cat(tensor.dim(i), i + 1 == tensor.rank() && i == 0 ? "," : (i + 1 < tensor.rank() ? ", " : ""));
  std::string header = str_cat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (", shape, "), }");
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) return not_found(str_cat("cannot write '", path, "'"));
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char lb[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(lb, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(tensor.data()), static_cast<std::streamsize>(tensor.nbytes()));
  if (!out) return internal_error(str_cat("write to '", path, "' failed"));
  return Status::ok();
}

std::string tensor_file_name(const std::string& name) {
  std::string file = name;
  for (char& c : file)
    if (c == '/' || c == '\\' || c == ':') c = '_';
  return file;
}

}  // namespace ignis
