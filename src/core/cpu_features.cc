// SPDX-License-Identifier: Apache-2.0
#include "core/cpu_features.h"

#include <algorithm>
#include <cstring>

namespace ignis {

std::string CpuFeatures::summary() const {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(avx2, "avx2");
  add(fma, "fma");
  add(f16c, "f16c");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512vnni, "avx512vnni");
  add(avx512vbmi, "avx512vbmi");
  add(avx512bf16, "avx512bf16");
  add(avx_vnni, "avxvnni");
  return s.empty() ? "baseline" : s;
}

std::string CpuFeatures::microarchitecture() const {
  if (vendor == "AuthenticAMD") {
    switch (family) {
      case 0x17: return model >= 0x30 ? "zen2" : "zen1";
      case 0x19: return model < 0x10 || (model >= 0x20 && model < 0x60) ? "zen3" : "zen4";
      case 0x1a: return "zen5";
      default: return "";
    }
  }
  if (vendor == "GenuineIntel" && avx512f) return "intel-avx512";
  if (vendor == "GenuineIntel") return "intel";
  return "";
}

std::string CpuFeatures::identity() const {
  const std::string uarch = microarchitecture();
  std::string s = brand.empty() ? "unknown cpu" : brand;
  s += " | " + (vendor.empty() ? std::string("unknown vendor") : vendor) + " family " + std::to_string(family) +
       " model " + std::to_string(model);
  if (!uarch.empty()) s += " (" + uarch + ")";
  return s + " | " + summary();
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512vnni = __builtin_cpu_supports("avx512vnni");
    f.avx512vbmi = __builtin_cpu_supports("avx512vbmi");
    f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
    unsigned eax, ebx, ecx, edx;
    auto cpuid = [&](unsigned leaf) {
      __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(leaf), "c"(0));
    };
    cpuid(0);
    const unsigned max_leaf = eax;
    char vendor[13] = {};
    std::memcpy(vendor, &ebx, 4);
    std::memcpy(vendor + 4, &edx, 4);
    std::memcpy(vendor + 8, &ecx, 4);
    f.vendor = vendor;
    if (max_leaf >= 1) {
      cpuid(1);
      f.f16c = (ecx >> 29) & 1;
      const int base_family = static_cast<int>((eax >> 8) & 0xf), base_model = static_cast<int>((eax >> 4) & 0xf);
      f.family = base_family == 0xf ? base_family + static_cast<int>((eax >> 20) & 0xff) : base_family;
      f.model = base_family == 0x6 || base_family == 0xf ? (static_cast<int>((eax >> 16) & 0xf) << 4) | base_model
                                                         : base_model;
    }
    cpuid(0x80000000u);
    if (eax >= 0x80000004u) {
      char brand[49] = {};
      for (unsigned i = 0; i < 3; ++i) {
        cpuid(0x80000002u + i);
        const unsigned regs[4] = {eax, ebx, ecx, edx};
        std::memcpy(brand + 16 * i, regs, 16);
      }
      std::string b(brand);
      while (!b.empty() && b.back() == ' ') b.pop_back();
      f.brand = b.substr(std::min(b.size(), b.find_first_not_of(' ')));
    }
#endif
    return f;
  }();
  return features;
}

}  // namespace ignis
