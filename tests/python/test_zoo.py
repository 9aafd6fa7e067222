# SPDX-License-Identifier: Apache-2.0
"""The zoo models (generated into models/ by tools/make_zoo.py) through the Python API,
against onnxruntime on the inputs tools/make_inputs.py builds from each sidecar JSON.
A model that has not been generated is skipped with the reason shown."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import ignis

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = Path(os.environ.get("IGNIS_MODELS_DIR", ROOT / "models"))
ZOO = ["digits_cnn", "mobilenet_v2", "efficientnet_b0", "resnet50", "minilm", "bert_base"]
ATOL, RTOL = 1e-4, 1e-3  # as tests/models/test_parity.py

sys.path.insert(0, str(ROOT / "tools"))
from make_inputs import make_inputs  # noqa: E402


@pytest.mark.parametrize("name", ZOO)
def test_zoo_model_matches_onnxruntime(name, ort):
    model = MODELS_DIR / f"{name}.onnx"
    sidecar = MODELS_DIR / f"{name}.json"
    if not (model.is_file() and sidecar.is_file()):
        pytest.skip(f"{model} not generated (run: /usr/bin/python3 tools/make_zoo.py --out models)")
    feeds = make_inputs(json.loads(sidecar.read_text()), seed=0)

    sess = ignis.InferenceSession(str(model))
    reference = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    assert [(i.name, i.type) for i in sess.get_inputs()] == [(i.name, i.type) for i in reference.get_inputs()]
    actual = sess.run(None, feeds)
    expected = reference.run(None, feeds)
    for out, a, e in zip(sess.get_outputs(), actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape, out.name
        excess = np.abs(a.astype(np.float64) - e) - (ATOL + RTOL * np.abs(e.astype(np.float64)))
        assert excess.max() <= 0, f"{name}/{out.name}: worst |a-b| exceeds the tolerance by {excess.max():.3g}"


def test_committed_digits_cnn_classifies_its_test_split(ort):
    """assets/ is committed, so this real model always runs: whole test split, one batch."""
    data = np.load(ROOT / "assets" / "digits_test.npz")
    recorded = json.loads((ROOT / "assets" / "digits_cnn.json").read_text())
    model = str(ROOT / "assets" / "digits_cnn.onnx")
    sess = ignis.InferenceSession(model)
    (logits,) = sess.run(None, {sess.get_inputs()[0].name: data["x"]})
    (expected,) = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"input": data["x"]})
    np.testing.assert_allclose(logits, expected, rtol=RTOL, atol=ATOL)
    assert int((logits.argmax(axis=1) == data["y"]).sum()) == recorded["n_correct"]
