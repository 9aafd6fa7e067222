# SPDX-License-Identifier: Apache-2.0
"""Batched runs of the zoo CNNs, whose wide early layers run slice by slice: the outputs match
onnxruntime on the same batch, and the slicing really happened (the activation arena of the
sliced plan is smaller than the layer-by-layer one, IGNIS_BATCH_SLICING=0)."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ignis

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = Path(os.environ.get("IGNIS_MODELS_DIR", ROOT / "models"))
IGNIS_BIN = os.environ.get("IGNIS_BIN", str(ROOT / "build" / "ignis"))
ATOL, RTOL = 1e-4, 1e-3  # as test_zoo.py
BATCH = 8


def model_path(name):
    path = MODELS_DIR / f"{name}.onnx"
    if not path.is_file():
        pytest.skip(f"{path} not generated (run: /usr/bin/python3 tools/make_zoo.py --out models)")
    return path


@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet50", "efficientnet_b0"])
def test_batched_cnn_matches_onnxruntime(name, ort):
    path = model_path(name)
    sess = ignis.InferenceSession(str(path))
    inp = sess.get_inputs()[0]
    x = np.random.default_rng(3).standard_normal((BATCH, 3, 224, 224)).astype(np.float32)
    (actual,) = sess.run(None, {inp.name: x})
    (expected,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {inp.name: x})
    assert actual.shape == expected.shape
    excess = np.abs(actual.astype(np.float64) - expected) - (ATOL + RTOL * np.abs(expected.astype(np.float64)))
    assert excess.max() <= 0, f"{name}: worst |a-b| exceeds the tolerance by {excess.max():.3g}"
    # Each sample alone gives the same answer as within the batch.
    for b in (0, BATCH - 1):
        (one,) = sess.run(None, {inp.name: x[b:b + 1]})
        np.testing.assert_allclose(one[0], actual[b], rtol=RTOL, atol=ATOL)


def arena_bytes(path, slicing):
    # The thresholds of a 32 MiB L3 (the defaults), whatever this CPU's: with a 48 MiB L3 a run
    # starts only from 24 MiB activations, and mobilenet_v2 at batch 8 slices fewer layers.
    env = dict(os.environ, IGNIS_BATCH_SLICING=slicing, IGNIS_BATCH_SLICING_L3=str(32 << 20))
    out = subprocess.run([IGNIS_BIN, "bench", str(path), "--batch", str(BATCH), "-n", "1", "--warmup", "0", "--json"],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["activation_arena_bytes"]


def test_sliced_plan_uses_less_activation_memory():
    if not Path(IGNIS_BIN).is_file():
        pytest.skip(f"{IGNIS_BIN} not built")
    path = model_path("mobilenet_v2")
    sliced, layerwise = arena_bytes(path, "1"), arena_bytes(path, "0")
    # Values that live only inside the sliced run need one sample's bytes instead of the batch's.
    assert sliced < 0.8 * layerwise, (sliced, layerwise)
