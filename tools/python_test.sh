#!/usr/bin/env bash
# Builds and installs the Python package into the python3 on PATH, then runs its tests:
#   bash tools/python_test.sh [pytest args...]
# The build is incremental: pip runs without build isolation (an isolated build environment
# makes scikit-build-core start from an empty build/python/<wheel tag>/ every time), so the
# build requirements are installed into python3 once, here.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -c "import scikit_build_core, pybind11" 2>/dev/null; then
  python3 -m pip install -q --root-user-action=ignore "scikit-build-core>=0.10" "pybind11>=2.12"
fi
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
fi
# With a release build in build/ (tools/build.sh), the package is compiled with the same compiler
# and flags, warnings as errors included, so that ccache serves the library's objects from that
# build instead of compiling the tree a second time (its cache key holds the compiler's path and
# every flag, not the build folder).
settings=()
if [ -f build/CMakeCache.txt ]; then
  cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' build/CMakeCache.txt)
  [ -n "$cxx" ] && settings+=(--config-settings=cmake.define.CMAKE_CXX_COMPILER="$cxx")
  grep -q '^IGNIS_WERROR:BOOL=ON' build/CMakeCache.txt && settings+=(--config-settings=cmake.define.IGNIS_WERROR=ON)
fi
start=$(date +%s)
python3 -m pip install -q --root-user-action=ignore --no-build-isolation "${settings[@]}" ./
echo "python package built and installed in $(( $(date +%s) - start ))s"
python3 -m pytest -q -rs tests/python "$@"
