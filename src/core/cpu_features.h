// SPDX-License-Identifier: Apache-2.0
// What the CPU running this process can execute, detected once.
#pragma once

#include <string>

namespace ignis {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vnni = false;
  bool avx512bf16 = false;
  bool avx_vnni = false;

  bool has_avx2_fma() const { return avx2 && fma; }
  std::string summary() const;  // "avx2 fma f16c"
};

const CpuFeatures& cpu_features();

}  // namespace ignis
