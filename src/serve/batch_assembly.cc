// SPDX-License-Identifier: Apache-2.0
#include "serve/batch_assembly.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

#include "serve/padding.h"

namespace ignis::serve {
namespace {

size_t product(const std::vector<int64_t>& dims, size_t from = 0) {
  return std::accumulate(dims.begin() + static_cast<std::ptrdiff_t>(from), dims.end(), size_t{1},
                         [](size_t a, int64_t d) { return a * static_cast<size_t>(d); });
}

// The input of `request` named `name`, or -1.
int input_index(const InferRequest& request, const std::string& name) {
  for (size_t i = 0; i < request.inputs.size(); ++i)
    if (request.inputs[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

NamedTensors assemble_batch(const std::vector<const InferRequest*>& requests,
                            const std::map<std::string, double>& pad_values, BatchBuffers* buffers,
                            BatchLayout* layout, const PaddedExtent& padded_extent) {
  const InferRequest& first = *requests.front();
  *layout = BatchLayout{};
  for (const InferRequest* r : requests) {
    layout->rows.push_back(r->inputs.empty() ? 1 : r->inputs[0].shape[0]);
    layout->total_rows += layout->rows.back();
  }
  if (buffers->size() < first.inputs.size()) buffers->resize(first.inputs.size());
  NamedTensors inputs;
  inputs.reserve(first.inputs.size());
  for (size_t i = 0; i < first.inputs.size(); ++i) {
    const InferInput& in0 = first.inputs[i];
    // The batch's extent on each dimension: the largest of its requests'.
    std::vector<int64_t> dims = in0.shape;
    dims[0] = layout->total_rows;
    for (const InferRequest* r : requests)
      for (size_t d = 1; d < dims.size(); ++d) dims[d] = std::max(dims[d], r->inputs[i].shape[d]);
    if (padded_extent)
      for (size_t d = 1; d < dims.size(); ++d) dims[d] = padded_extent(in0.name, d, dims[d]);
    const bool strings = in0.dtype == DType::String;
    const size_t elem = element_bytes(in0.dtype);
    const size_t row_elems = product(dims, 1);
    bool padded = false;
    for (const InferRequest* r : requests) padded = padded || !std::equal(dims.begin() + 1, dims.end(), r->inputs[i].shape.begin() + 1);
    // Numbers go to this thread's reused buffer; strings to a new tensor of empty strings (the
    // padding), as std::string objects cannot live in raw bytes.
    Tensor batch = strings ? Tensor::empty(DType::String, Shape(dims)) : Tensor();
    std::vector<std::byte>& buf = (*buffers)[i];
    const size_t bytes = static_cast<size_t>(layout->total_rows) * row_elems * elem;
    if (!strings && buf.size() < bytes) buf.resize(bytes);
    std::byte* out = strings ? static_cast<std::byte*>(batch.data()) : buf.data();
    if (padded) {
      if (!strings) {
        auto pv = pad_values.find(in0.name);
        fill_elements(out, bytes / std::max<size_t>(elem, 1), in0.dtype, pv == pad_values.end() ? 0.0 : pv->second);
      }
      layout->padded = true;
    }
    for (size_t j = 0; j < requests.size(); ++j) {
      const Tensor& t = requests[j]->inputs[i].tensor;
      const std::vector<int64_t>& shape = requests[j]->inputs[i].shape;
      std::vector<int64_t> dst_dims = dims;
      dst_dims[0] = layout->rows[j];
      if (!padded && !strings) {
        if (t.nbytes() > 0) std::memcpy(out, t.data(), t.nbytes());
      } else {
        copy_box(static_cast<const std::byte*>(t.data()), shape, out, dst_dims, shape, elem, strings);
      }
      out += static_cast<size_t>(layout->rows[j]) * row_elems * elem;
      layout->real_elements += product(shape);
    }
    layout->batch_elements += static_cast<size_t>(layout->total_rows) * row_elems;
    inputs.emplace_back(in0.name, strings ? std::move(batch) : Tensor::view(in0.dtype, Shape(dims), buf.data()));
    layout->dims.push_back(std::move(dims));
  }
  return inputs;
}

bool splittable(const Tensor& output, const BatchLayout& layout, const std::vector<DimLink>& links,
                const InferRequest& first) {
  const Shape& s = output.shape();
  if (s.rank() < 1 || s[0] != layout.total_rows) return false;
  for (const DimLink& l : links) {
    const int i = input_index(first, l.input);
    if (i < 0 || static_cast<int>(l.output_dim) >= s.rank()) return false;
    if (s[static_cast<int>(l.output_dim)] != layout.dims[static_cast<size_t>(i)][l.input_dim]) return false;
  }
  return true;
}

Tensor request_output(const Tensor& output, const std::shared_ptr<void>& owner, const BatchLayout& layout, size_t j,
                      const std::vector<DimLink>& links, const InferRequest& request) {
  const auto span = output.shape().dims();
  std::vector<int64_t> dims(span.begin(), span.end());
  const size_t elem = element_bytes(output.dtype());
  const int64_t first_row = std::accumulate(layout.rows.begin(), layout.rows.begin() + static_cast<std::ptrdiff_t>(j), int64_t{0});
  const std::byte* base = static_cast<const std::byte*>(output.data()) +
                          static_cast<size_t>(first_row) * product(dims, 1) * elem;
  std::vector<int64_t> box = dims;
  box[0] = layout.rows[j];
  for (const DimLink& l : links) {
    const int i = input_index(request, l.input);
    box[l.output_dim] = request.inputs[static_cast<size_t>(i)].shape[l.input_dim];
  }
  std::vector<int64_t> block = dims;  // the request's rows of the batch output
  block[0] = layout.rows[j];
  if (box == block) return Tensor::wrap(output.dtype(), Shape(block), const_cast<std::byte*>(base), owner);
  Tensor cut = Tensor::empty(output.dtype(), Shape(box));
  copy_box(base, block, static_cast<std::byte*>(cut.data()), box, box, elem, output.dtype() == DType::String);
  return cut;
}

}  // namespace ignis::serve
