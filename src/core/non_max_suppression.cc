// SPDX-License-Identifier: Apache-2.0
#include "core/non_max_suppression.h"

#include <algorithm>

namespace ignis {
namespace {

struct Box {
  float y0, x0, y1, x1;  // min/max corners
};

Box corners(const float* b, bool center) {
  if (center) return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// IoU strictly above the threshold; degenerate (zero-area) boxes never suppress.
bool suppresses(const Box& a, const Box& b, float iou_threshold) {
  const float iy0 = std::max(a.y0, b.y0), iy1 = std::min(a.y1, b.y1);
  const float ix0 = std::max(a.x0, b.x0), ix1 = std::min(a.x1, b.x1);
  if (!(ix1 > ix0) || !(iy1 > iy0)) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float area_a = (a.x1 - a.x0) * (a.y1 - a.y0), area_b = (b.x1 - b.x0) * (b.y1 - b.y0);
  const float uni = area_a + area_b - inter;
  if (!(area_a > 0) || !(area_b > 0) || !(uni > 0)) return false;
  return inter / uni > iou_threshold;
}

}  // namespace

std::vector<int64_t> non_max_suppression(const float* boxes, const float* scores, int64_t batches, int64_t classes,
                                         int64_t count, const NmsOptions& o) {
  std::vector<int64_t> rows, order, selected;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = scores + (b * classes + c) * count;
      order.clear();
      for (int64_t i = 0; i < count; ++i)
        if (!o.filter_scores || s[i] > o.score_threshold) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return s[p] > s[q]; });
      selected.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(selected.size()) >= o.max_per_class) break;
        const Box cand = corners(boxes + (b * count + i) * 4, o.center_point_box);
        bool keep = true;
        for (int64_t j : selected)
          if (suppresses(cand, corners(boxes + (b * count + j) * 4, o.center_point_box), o.iou_threshold)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        selected.push_back(i);
        rows.insert(rows.end(), {b, c, i});
      }
    }
  return rows;
}

}  // namespace ignis
