// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the tensor-family reference kernels (tensor.cc, tensor_index.cc). The
// data-movement kernels work on raw elements of 1, 2, 4 or 8 bytes, so one instantiation per
// element size serves every dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "core/thread_pool.h"
#include "ignis/status.h"
#include "ignis/tensor.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref::tensor_ops {

// Copies the strided view (dims, src_strides in elements, any sign, 0 = broadcast) of `src`
// into `dst`, which is dense and row-major in `dims`. Any number of dims.
void strided_copy(void* dst, const void* src, std::vector<int64_t> dims, std::vector<int64_t> src_strides, size_t esize,
                  ThreadPool* pool);

// A transpose view (dense output dims d, source strides s, coalesced) cut into strips: every
// run of at most `strip` indices [k0, k1) of output dim k, for every index of the dims other
// than k and the last. fn(dst_off, src_off, ok, k0, k1) gets the element offsets of that
// plane in the output and the source and ok, the output stride of dim k; strips are split
// over the pool.
using TransposeStripFn =
    std::function<void(int64_t dst_off, int64_t src_off, int64_t ok, int64_t k0, int64_t k1)>;
void for_each_transpose_strip(const std::vector<int64_t>& d, const std::vector<int64_t>& s, int k, int64_t strip,
                              ThreadPool* pool, const TransposeStripFn& fn);

// The same view with extent-1 dims dropped and neighbours contiguous in the source merged, into
// (d, s); false when some extent is 0 (nothing to copy).
bool coalesce_view(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides, std::vector<int64_t>& d,
                   std::vector<int64_t>& s);

// Transpose(in) as a strided view of `in`: the output dims and, per output dim, the source
// stride (`perm` from attrs, reversed dims when absent).
void transpose_view(const Tensor& in, const AttrMap& attrs, std::vector<int64_t>& dims, std::vector<int64_t>& strides);

// Reads element i of an int32/int64 index tensor, wraps a negative value once against `dim`
// and fails with OutOfRange (naming `op`) when it is outside [-dim, dim).
Status load_index(const Tensor& t, int64_t i, int64_t dim, const char* op, int64_t* out);

// Element strides (row-major) of a tensor's shape.
inline std::vector<int64_t> dense_strides(const Tensor& t) { return t.shape().strides(); }

// Calls f(U{}) with U the unsigned integer type of `esize` bytes (1, 2, 4 or 8).
template <class F>
void with_element_type(size_t esize, F&& f) {
  switch (esize) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    default: f(uint64_t{}); break;
  }
}

// Byte pointer helpers.
inline const std::byte* bytes_of(const Tensor& t) { return static_cast<const std::byte*>(t.data()); }
inline std::byte* bytes_of(Tensor& t) { return static_cast<std::byte*>(t.data()); }

// Adds one reference kernel of this family; `types` constrains input `type_input`.
inline void add_kernel(KernelRegistry& r, std::string_view op, int since, DTypeSet types, std::string_view id,
                       KernelFn fn, int until = kAnyOpVersion, int type_input = 0) {
  r.add({.domain = "",
         .op_type = op,
         .since_opset = since,
         .until_opset = until,
         .types = types,
         .type_input = type_input,
         .id = id,
         .fn = fn});
}

// Registers the indexing kernels (tensor_index.cc).
void register_tensor_index(KernelRegistry& r);

}  // namespace ignis::kernels::ref::tensor_ops
