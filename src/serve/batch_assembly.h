// SPDX-License-Identifier: Apache-2.0
// Turning several requests into one engine run and back: their inputs are concatenated along
// the batch dimension into reused buffers (each request padded up to the batch's largest
// extent on the dimensions that vary, when shape buckets put requests of different lengths
// together), and each output is cut back to the rows, and extents, of each request.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ignis/session.h"
#include "serve/infer_request.h"

namespace ignis::serve {

struct BatchLayout {
  std::vector<int64_t> rows;  // per request
  int64_t total_rows = 0;
  std::vector<std::vector<int64_t>> dims;  // per input (request order): the batch tensor's dims
  size_t real_elements = 0;                // over every input: the requests' own elements...
  size_t batch_elements = 0;               // ...and the batch tensors' (padding included)
  bool padded = false;
};

// Buffers one thread reuses from batch to batch.
using BatchBuffers = std::vector<std::vector<std::byte>>;

// The extent a batch uses on dimension `dim` of input `input`, given its requests' largest
// there: that extent, or a shape bucket's edge above it.
using PaddedExtent = std::function<int64_t(const std::string& input, size_t dim, int64_t largest)>;

// The batch inputs of `requests`, which share input names, dtypes and ranks, in the same order.
// Padding takes `pad_values[name]`, else 0 (strings: empty). Numeric tensors view `buffers`;
// string ones own their elements.
NamedTensors assemble_batch(const std::vector<const InferRequest*>& requests,
                            const std::map<std::string, double>& pad_values, BatchBuffers* buffers,
                            BatchLayout* layout, const PaddedExtent& padded_extent = nullptr);

// An output dimension that follows an input's dimension (the model names both alike, e.g.
// "seq"): a padded batch's output is cut back to the request's own extent there.
struct DimLink {
  size_t output_dim = 0;
  std::string input;
  size_t input_dim = 0;
};

// Whether `output` of a batch laid out as `layout` can be split: its first dimension is the
// batch's rows and each linked dimension has the batch's extent of its input.
bool splittable(const Tensor& output, const BatchLayout& layout, const std::vector<DimLink>& links,
                const InferRequest& first);

// Request j's part of a batch output (`owner` keeps `output` alive): its rows, viewed in place,
// or copied out when a linked dimension is cut back to the request's extent.
Tensor request_output(const Tensor& output, const std::shared_ptr<void>& owner, const BatchLayout& layout, size_t j,
                      const std::vector<DimLink>& links, const InferRequest& request);

}  // namespace ignis::serve
