// SPDX-License-Identifier: Apache-2.0
// Maps external-data files and hands out tensors over them.
//
// Ownership: a tensor used in place holds one MappedRange (its bytes) which holds the file's
// MappedFile. Weights whose every reader keeps a prepacked copy are released after planning
// (runtime::release_initializer_data), and a model's data file usually holds all its weights, so
// a per-file reference count alone would keep every released weight resident until the session
// ends: for a large model, a second copy beside the prepacked one. Instead the last handle of a
// range drops the range's pages with MADV_DONTNEED, and the last range of a file unmaps it.
// Dropping pages is safe on this mapping even where a page is shared with a neighbouring tensor
// still in use: it is read-only and private, nothing was ever written to it, so the neighbour's
// next read faults the page back in from the file (or the page cache) with the same bytes.
#include "onnx/external_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/strings.h"

namespace ignis::onnx_io {

class MappedFile {
 public:
  MappedFile(const std::byte* base, size_t size) : base_(base), size_(size) {}
  ~MappedFile() {
    if (base_ != nullptr) ::munmap(const_cast<std::byte*>(base_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* base() const { return base_; }
  size_t size() const { return size_; }

  // [data, data + n) lies inside the mapping. madvise wants a page-aligned start and rounds the
  // length up to whole pages, which stay inside the mapping (it covers whole pages too).
  void drop_pages(const std::byte* data, size_t n) const {
    if (n == 0 || base_ == nullptr) return;
    static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t begin = reinterpret_cast<uintptr_t>(data) / page * page;
    const uintptr_t end = reinterpret_cast<uintptr_t>(data) + n;
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }

 private:
  const std::byte* base_;  // null for an empty file (nothing to map)
  size_t size_;
};

namespace {

// The owner of a tensor read in place: see the file comment.
struct MappedRange {
  explicit MappedRange(ExternalBytes b) : bytes(std::move(b)) {}
  ~MappedRange() { bytes.drop_pages(); }
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;
  ExternalBytes bytes;
};

}  // namespace

void ExternalBytes::drop_pages() const {
  if (file) file->drop_pages(data, size);
}

ExternalData::ExternalData(std::string base_dir) : base_dir_(std::move(base_dir)) {}
ExternalData::~ExternalData() = default;

Result<std::shared_ptr<const MappedFile>> ExternalData::open(const std::string& path, const ExternalLocation& loc,
                                                             const std::string& what) {
  auto it = files_.find(path);
  if (it != files_.end()) return it->second;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return not_found(str_cat(what, ": external data file '", path, "' cannot be opened"));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return not_found(str_cat(what, ": external data file '", path, "' cannot be read"));
  if (!S_ISREG(st.st_mode))
    return invalid_model(str_cat(what, ": external data location '", loc.location, "' is not a regular file"));
  const auto size = static_cast<size_t>(st.st_size);
  const std::byte* base = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
      return not_found(str_cat(what, ": external data file '", path, "' cannot be mapped (", std::strerror(errno), ")"));
    base = static_cast<const std::byte*>(p);
  }
  auto file = std::make_shared<const MappedFile>(base, size);
  files_.emplace(path, file);
  return file;
}

Result<ExternalBytes> ExternalData::bytes(const ExternalLocation& loc, int64_t bytes, const std::string& what) {
  if (base_dir_.empty())
    return invalid_model(str_cat(what, ": external data needs the model's folder; load from a file path"));
  if (loc.location.empty()) return invalid_model(str_cat(what, ": external data without a location"));
  const std::filesystem::path rel(loc.location);
  if (rel.is_absolute() || rel.lexically_normal().string().rfind("..", 0) == 0)
    return invalid_model(str_cat(what, ": external data location '", loc.location, "' leaves the model folder"));
  const std::string path = (std::filesystem::path(base_dir_) / rel).lexically_normal().string();
  IGNIS_ASSIGN_OR_RETURN(auto file, open(path, loc, what));
  const auto size = static_cast<int64_t>(file->size());
  if (loc.offset < 0 || loc.offset > size)
    return invalid_model(str_cat(what, ": external data offset ", loc.offset, " is past the end of '", loc.location,
                                 "' (", size, " bytes)"));
  const int64_t length = loc.length < 0 ? size - loc.offset : loc.length;
  if (length > size - loc.offset)
    return invalid_model(str_cat(what, ": external data range exceeds file '", loc.location, "': ", length,
                                 " bytes at offset ", loc.offset, ", file has ", size));
  if (length != bytes)
    return invalid_model(str_cat(what, ": external data in '", loc.location, "' has ", length, " bytes, expected ", bytes));
  ExternalBytes out;
  out.data = file->base() == nullptr ? nullptr : file->base() + loc.offset;
  out.size = static_cast<size_t>(length);
  out.file = std::move(file);
  return out;
}

int64_t ExternalData::file_bytes() const {
  int64_t n = 0;
  for (const auto& [path, file] : files_) n += static_cast<int64_t>(file->size());
  return n;
}

Result<Tensor> ExternalData::tensor(const ExternalLocation& loc, DType dtype, const Shape& shape,
                                    const std::string& what) {
  const size_t esize = dtype_size(dtype);
  const auto nbytes = static_cast<int64_t>(static_cast<size_t>(shape.numel()) * esize);
  IGNIS_ASSIGN_OR_RETURN(ExternalBytes b, bytes(loc, nbytes, what));
  if (nbytes == 0) return Tensor::empty(dtype, shape);
  const bool in_place = std::endian::native == std::endian::little && dtype != DType::Bool &&
                        reinterpret_cast<uintptr_t>(b.data) % esize == 0;
  if (in_place) {
    auto owner = std::make_shared<MappedRange>(b);
    // Writable in type only: nothing writes into initializers (the passes build new tensors),
    // and the mapping is read-only, so a stray write faults instead of corrupting a weight.
    return Tensor::wrap(dtype, shape, const_cast<std::byte*>(b.data), std::move(owner));
  }
  Tensor t = Tensor::empty(dtype, shape);
  std::memcpy(t.data(), b.data, b.size);
  b.drop_pages();
  if (dtype == DType::Bool) {
    auto* p = t.data_as<uint8_t>();
    for (int64_t i = 0; i < nbytes; ++i) p[i] = p[i] != 0;
  }
  return t;
}

}  // namespace ignis::onnx_io
