// SPDX-License-Identifier: Apache-2.0
#include "kernels/x86/broadcast_layout.h"

namespace ignis::kernels::x86 {

bool make_broadcast_layout(const Shape& out, const Shape& a, const Shape& b, BroadcastLayout& l) {
  const int r = out.rank();
  int64_t ca = 1, cb = 1;  // contiguous strides of a and b at the current dim
  for (int d = r - 1; d >= 0; --d) {
    const int da = d - (r - a.rank()), db = d - (r - b.rank());
    const int64_t ea = da >= 0 ? a[da] : 1, eb = db >= 0 ? b[db] : 1;
    const int64_t sa = ea == out[d] ? ca : 0, sb = eb == out[d] ? cb : 0;
    ca *= ea;
    cb *= eb;
    if (out[d] == 1) continue;
    if (l.rank > 0 && sa == l.sa[l.rank - 1] * l.dims[l.rank - 1] && sb == l.sb[l.rank - 1] * l.dims[l.rank - 1]) {
      l.dims[l.rank - 1] *= out[d];
      continue;
    }
    if (l.rank == 3) return false;
    l.dims[l.rank] = out[d];
    l.sa[l.rank] = sa;
    l.sb[l.rank] = sb;
    ++l.rank;
  }
  return true;
}

}  // namespace ignis::kernels::x86
