# SPDX-License-Identifier: Apache-2.0
"""What the quantized-model tests (test_quantized_cnn.py, test_quantized_transformer.py,
test_qoperator_models.py) share: the ignis binary under test, its run of a file on given
inputs, and onnxruntime's two runs of a QDQ file (int8 kernels, or every QDQ pair in float32
with graph optimizations disabled)."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def ignis_bin():
    p = Path(os.environ.get("IGNIS_BIN", "build/ignis"))
    if not p.is_absolute() and not p.exists():
        p = ROOT / p
    if not (p.is_file() and os.access(p, os.X_OK)):
        pytest.skip(f"ignis binary not found at {p} (build it, or set IGNIS_BIN)")
    return p


def run_ort(model, feeds, optimize):
    ort = pytest.importorskip("onnxruntime")
    so = ort.SessionOptions()
    so.log_severity_level = 3
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


def run_ignis(model, feeds, work, output=None):
    """`ignis run` of model on feeds ({name: array}, saved as .npy in work): the output named
    `output`, or the only one."""
    args = [str(ignis_bin()), "run", str(model), "--output-dir", str(work / "out")]
    for name, value in feeds.items():
        np.save(work / f"{name}.npy", value)
        args += ["--input", f"{name}={work / f'{name}.npy'}"]
    res = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]
    if output is not None:
        return np.load(work / "out" / f"{output}.npy")
    (path,) = sorted((work / "out").glob("*.npy"))
    return np.load(path)
