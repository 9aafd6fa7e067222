#!/usr/bin/env bash
# Configures and builds ignis (Release, warnings as errors) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DIGNIS_WERROR=ON "${launcher[@]}" > /dev/null
cmake --build build -j "$(nproc)"
