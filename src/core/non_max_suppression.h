// SPDX-License-Identifier: Apache-2.0
// NonMaxSuppression's greedy selection, shared by shape inference (whose output size is the
// number of boxes selected) and the kernel (which writes them).
#pragma once

#include <cstdint>
#include <vector>

namespace ignis {

struct NmsOptions {
  bool center_point_box = false;  // boxes as [x_center, y_center, width, height]
  int64_t max_per_class = 0;
  float iou_threshold = 0.0f;
  bool filter_scores = false;  // keep only scores above score_threshold
  float score_threshold = 0.0f;
};

// boxes [batches, count, 4], scores [batches, classes, count]. Per (batch, class): candidates
// by descending score (ties: lower index first), each kept unless its IoU with a box already
// kept for the class exceeds the threshold (zero-area boxes never suppress). Returns the
// selected (batch, class, box) triples, flattened, in output order.
std::vector<int64_t> non_max_suppression(const float* boxes, const float* scores, int64_t batches, int64_t classes,
                                         int64_t count, const NmsOptions& options);

}  // namespace ignis
