// SPDX-License-Identifier: Apache-2.0
// Batch slicing: a run of steps that each compute every sample on its own (convolutions,
// pools, activations, elementwise ops on batch-indexed operands) runs image by image, or a
// few images at a time, instead of layer by layer over the whole batch. Layer by layer, a
// batch of 8 at 112x112 writes activations far larger than the caches, and each next layer
// reads them back from memory: mobilenet_v2's early layers ran 1.3x to 3x slower per image at
// batch 8 than at batch 1. Sliced, a step's output for one image is still in cache when the
// next step reads it, and the values that live only inside the run need one slice's memory.
// Later layers, whose activations are small, still run over the whole batch and keep its
// weight reuse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ir/graph.h"
#include "ignis/tensor.h"
#include "ir/op_schema.h"

namespace ignis::runtime {

struct SlicingOptions {
  bool enabled = false;
  // A step joins a sliced run when its batch-indexed inputs and outputs over the whole batch
  // take at least this many bytes: beyond about half a server L3, a batch's activations no
  // longer stay in cache from one layer to the next (mobilenet_v2 at batch 8 lost 1.3x to 3x
  // per image on such layers, and gained from batching on the smaller ones, whose weights
  // the batch reuses).
  size_t min_batch_bytes = size_t{16} << 20;
  // Samples per slice: as many as keep the run's widest step within this many bytes (at
  // least one).
  size_t slice_bytes = size_t{8} << 20;
};

// The thresholds for a last-level cache of `l3_bytes` (0 = unknown: the defaults above, which
// are a 32 MiB L3's): a run from half of it, slices of a quarter, within [4, 64] and [2, 32] MiB.
SlicingOptions slicing_options_for_cache(size_t l3_bytes);

// For the L3 CPU 0 shares (Linux sysfs), or IGNIS_BATCH_SLICING_L3 bytes when set; on unless
// IGNIS_BATCH_SLICING=0 (for A/B measurements).
SlicingOptions slicing_options_from_env();

// How a step can run on a slice of its batch.
struct PerSampleStep {
  int64_t batch = 0;
  std::vector<bool> sliced;  // per input: indexed by the batch (a view of the slice's samples)
  size_t image_bytes = 0;    // bytes of the sliced inputs and the outputs, per sample
};

// Whether `node` computes each sample of dimension 0 from that sample alone, in these types
// (`constants` per input: the plan's value of a constant input, null for the others, as the
// plan hands kernels at creation). Every non-constant input must
// be batch-indexed and every output must have the batch as dimension 0; nullopt otherwise.
std::optional<PerSampleStep> per_sample_step(const ir::Node& node, std::span<const ir::ValueType* const> inputs,
                                             std::span<const Tensor* const> constants,
                                             std::span<const ir::ValueType> outputs);

// Consecutive steps [first, last) run `slice` samples at a time over `batch`.
struct SliceRun {
  int first = 0, last = 0;
  int64_t batch = 0, slice = 1;
};

// The maximal runs of at least two consecutive per-sample steps of one batch (> 1) whose
// bytes over the batch reach options.min_batch_bytes.
std::vector<SliceRun> find_slice_runs(std::span<const std::optional<PerSampleStep>> steps,
                                      const SlicingOptions& options);

}  // namespace ignis::runtime
