// SPDX-License-Identifier: Apache-2.0
#include "serve/padding.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"

namespace ignis::serve {
namespace {

// Recurses over the leading dimensions; the innermost one is a single memcpy.
void copy_run(const std::byte* src, std::byte* dst, int64_t count, size_t element_bytes, bool strings) {
  if (strings)
    std::copy_n(reinterpret_cast<const std::string*>(src), count, reinterpret_cast<std::string*>(dst));
  else
    std::memcpy(dst, src, static_cast<size_t>(count) * element_bytes);
}

void copy_box_dim(const std::byte* src, const int64_t* src_stride, std::byte* dst, const int64_t* dst_stride,
                  const int64_t* box, size_t rank, size_t element_bytes, bool strings) {
  if (rank == 1) {
    copy_run(src, dst, box[0], element_bytes, strings);
    return;
  }
  for (int64_t i = 0; i < box[0]; ++i)
    copy_box_dim(src + i * src_stride[0], src_stride + 1, dst + i * dst_stride[0], dst_stride + 1, box + 1, rank - 1,
                 element_bytes, strings);
}

}  // namespace

size_t element_bytes(DType dtype) { return dtype == DType::String ? sizeof(std::string) : dtype_size(dtype); }

void copy_box(const std::byte* src, std::span<const int64_t> src_dims, std::byte* dst,
              std::span<const int64_t> dst_dims, std::span<const int64_t> box, size_t element_bytes, bool strings) {
  const size_t rank = box.size();
  if (rank == 0) {
    copy_run(src, dst, 1, element_bytes, strings);
    return;
  }
  if (std::any_of(box.begin(), box.end(), [](int64_t e) { return e == 0; })) return;
  // Byte strides of each dimension.
  std::vector<int64_t> src_stride(rank), dst_stride(rank);
  int64_t s = static_cast<int64_t>(element_bytes), d = s;
  for (size_t i = rank; i-- > 0;) {
    src_stride[i] = s;
    dst_stride[i] = d;
    s *= src_dims[i];
    d *= dst_dims[i];
  }
  // Trailing dimensions copied whole in both tensors merge into one contiguous run.
  size_t inner = rank;
  while (inner > 1 && box[inner - 1] == src_dims[inner - 1] && box[inner - 1] == dst_dims[inner - 1]) --inner;
  std::vector<int64_t> merged_box(box.begin(), box.begin() + static_cast<std::ptrdiff_t>(inner));
  for (size_t i = inner; i < rank; ++i) merged_box[inner - 1] *= box[i];
  copy_box_dim(src, src_stride.data(), dst, dst_stride.data(), merged_box.data(), inner, element_bytes, strings);
}

void fill_elements(std::byte* dst, size_t count, DType dtype, double value) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T v = from_compute<T>(value);
    T* p = reinterpret_cast<T*>(dst);
    std::fill(p, p + count, v);
  });
}

int64_t bucket_extent(std::span<const int64_t> edges, int64_t extent) {
  auto it = std::lower_bound(edges.begin(), edges.end(), extent);
  return it == edges.end() ? extent : *it;
}

}  // namespace ignis::serve
