// SPDX-License-Identifier: Apache-2.0
// numpy .npz reader: a zip archive of NAME.npy members, stored (np.savez) or deflated
// (np.savez_compressed). The central directory at the end of the archive lists the members;
// numpy writes zip64 local headers, so sizes come from the central directory (with its zip64
// extra field when a size does not fit 32 bits), never from the local header.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/npy_stream.h"
#include "core/strings.h"
#include "ignis/tensor_io.h"

namespace ignis {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint64_t kMaxMemberBytes = uint64_t{1} << 36;  // as read_npy's array limit

uint64_t le(const std::string& b, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<size_t>(i)]);
  return v;
}

struct Member {
  std::string name;
  int method = 0;
  uint64_t compressed = 0, size = 0, local_offset = 0;
};

// Applies the zip64 extra field (id 1) of a central directory entry: it holds, in order,
// exactly the fields whose 32-bit slots read 0xFFFFFFFF.
void apply_zip64(const std::string& extra, Member* m) {
  size_t at = 0;
  while (at + 4 <= extra.size()) {
    const uint64_t id = le(extra, at, 2), len = le(extra, at + 2, 2);
    if (at + 4 + len > extra.size()) return;
    if (id == 1) {
      size_t f = at + 4;
      for (uint64_t* field : {&m->size, &m->compressed, &m->local_offset})
        if (*field == 0xFFFFFFFFu && f + 8 <= at + 4 + len) *field = le(extra, f, 8), f += 8;
      return;
    }
    at += 4 + len;
  }
}

Result<std::string> inflate_raw(const std::string& in, uint64_t size, const std::string& what) {
  std::string out(size, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return internal_error("zlib inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  const uint64_t produced = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != size) return invalid_argument(str_cat(what, ": corrupt deflate data"));
  return out;
}

}  // namespace

Result<std::vector<std::pair<std::string, Tensor>>> read_npz(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(str_cat("cannot open '", path, "'"));
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string bad = str_cat("'", path, "' is not a .npz file");
  // The end-of-directory record is the last 22 bytes plus a comment of up to 64 KiB.
  if (file.size() < 22) return invalid_argument(str_cat(bad, " (too short)"));
  size_t eod = std::string::npos;
  for (size_t at = file.size() - 22;; --at) {
    if (le(file, at, 4) == kEndOfDirectory) {
      eod = at;
      break;
    }
    if (at == 0 || file.size() - at > 22 + 65535) break;
  }
  if (eod == std::string::npos) return invalid_argument(str_cat(bad, " (no zip directory)"));
  const uint64_t entries = le(file, eod + 10, 2);
  size_t at = le(file, eod + 16, 4);

  std::vector<std::pair<std::string, Tensor>> out;
  for (uint64_t e = 0; e < entries; ++e) {
    if (at + 46 > file.size() || le(file, at, 4) != kDirectoryEntry) return invalid_argument(str_cat(bad, " (bad directory)"));
    Member m;
    m.method = static_cast<int>(le(file, at + 10, 2));
    m.compressed = le(file, at + 20, 4);
    m.size = le(file, at + 24, 4);
    const size_t name_len = le(file, at + 28, 2), extra_len = le(file, at + 30, 2), comment_len = le(file, at + 32, 2);
    m.local_offset = le(file, at + 42, 4);
    if (at + 46 + name_len + extra_len > file.size()) return invalid_argument(str_cat(bad, " (bad directory)"));
    m.name = file.substr(at + 46, name_len);
    apply_zip64(file.substr(at + 46 + name_len, extra_len), &m);
    at += 46 + name_len + extra_len + comment_len;

    const std::string what = str_cat("'", path, "' member '", m.name, "'");
    if (m.name.size() < 4 || m.name.compare(m.name.size() - 4, 4, ".npy") != 0)
      return invalid_argument(str_cat(what, " is not a .npy array"));
    if (m.local_offset + 30 > file.size() || le(file, m.local_offset, 4) != kLocalHeader)
      return invalid_argument(str_cat(what, ": bad local header"));
    const uint64_t data = m.local_offset + 30 + le(file, m.local_offset + 26, 2) + le(file, m.local_offset + 28, 2);
    if (data + m.compressed > file.size() || m.size > kMaxMemberBytes)
      return invalid_argument(str_cat(what, ": data runs past the end of the file"));
    std::string bytes = file.substr(data, m.compressed);
    if (m.method == 8) {
      IGNIS_ASSIGN_OR_RETURN(bytes, inflate_raw(bytes, m.size, what));
    } else if (m.method != 0) {
      return unsupported(str_cat(what, ": zip compression method ", m.method, " (np.savez and np.savez_compressed are read)"));
    }
    std::istringstream member(std::move(bytes));
    IGNIS_ASSIGN_OR_RETURN(Tensor t, read_npy_stream(member, what));
    out.emplace_back(m.name.substr(0, m.name.size() - 4), std::move(t));
  }
  return out;
}

}  // namespace ignis
