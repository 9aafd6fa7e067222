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
  bool avx512vbmi = false;
  bool avx512bf16 = false;
  bool avx_vnni = false;

  // Identity, from CPUID: "AuthenticAMD"/"GenuineIntel", the display family and model (the
  // extended fields folded in), and the brand string ("AMD EPYC 9R14 ..."; may be empty).
  std::string vendor;
  int family = 0;
  int model = 0;
  std::string brand;

  bool has_avx2_fma() const { return avx2 && fma; }
  std::string summary() const;  // "avx2 fma f16c"
  // The microarchitecture where the family/model says it: "zen2" ... "zen5", "intel-avx512"
  // (two 512-bit FMA ports or one), or "" when unknown. Zen 4 executes AVX-512 as two 256-bit
  // halves; Zen 5 (server parts) has full-width units.
  std::string microarchitecture() const;
  // One line naming the CPU for tuning caches and benchmark tables:
  // "AMD EPYC 9R14 | AuthenticAMD family 25 model 17 (zen4) | avx2 fma ...".
  std::string identity() const;
};

const CpuFeatures& cpu_features();

}  // namespace ignis
