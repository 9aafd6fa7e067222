// SPDX-License-Identifier: Apache-2.0
// External-data initializers (TensorProto.external_data): locations checked against the model
// folder, ranges checked against the file, and each data file memory-mapped once so weights are
// used in place and the OS pages them in on first use. No protobuf types here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis::onnx_io {

// Where a tensor's bytes live outside the model file.
struct ExternalLocation {
  std::string location;  // relative to the model's folder
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};

// One data file mapped whole, read-only and private (never written, so every page always reads
// as the file). Unmapped when the last holder goes; the file must not shrink while mapped.
class MappedFile;

// A validated range of a mapped file, kept mapped while `file` lives.
struct ExternalBytes {
  const std::byte* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const MappedFile> file;

  // Drops this range's pages from the process (they stay in the page cache, and a later read
  // faults them back in from the file); for ranges that were copied out of the mapping.
  void drop_pages() const;
};

// The external-data files of one import, each mapped at most once and shared by all tensors
// it holds. Not thread-safe (an import is single-threaded); what it returns is.
class ExternalData {
 public:
  // An empty `base_dir` refuses all external data (a model loaded from bytes without a folder).
  explicit ExternalData(std::string base_dir);
  ~ExternalData();
  ExternalData(const ExternalData&) = delete;
  ExternalData& operator=(const ExternalData&) = delete;

  // The `bytes` bytes at `loc`. Fails, naming `what` and the file, when the location leaves the
  // model folder, the file cannot be opened or mapped, or the range is not exactly `bytes` long
  // and inside the file.
  Result<ExternalBytes> bytes(const ExternalLocation& loc, int64_t bytes, const std::string& what);

  // A tensor of `dtype` (8 bits or more per element) and `shape` over the bytes at `loc`: the
  // mapping itself when it can be read in place (address aligned to the element size, native
  // little-endian order, not bool, which is normalized to 0/1), else a copy in an aligned buffer.
  Result<Tensor> tensor(const ExternalLocation& loc, DType dtype, const Shape& shape, const std::string& what);

  // Total size of the distinct data files opened so far.
  int64_t file_bytes() const;

 private:
  Result<std::shared_ptr<const MappedFile>> open(const std::string& path, const ExternalLocation& loc,
                                                 const std::string& what);

  std::string base_dir_;
  std::map<std::string, std::shared_ptr<const MappedFile>> files_;  // by path
};

}  // namespace ignis::onnx_io
