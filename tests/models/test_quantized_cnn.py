# SPDX-License-Identifier: Apache-2.0
"""Statically quantized CNNs: ignis against onnxruntime on the same QDQ file.

    IGNIS_BIN=build/ignis python3 -m pytest -q tests/models/test_quantized_cnn.py

The zoo's resnet50, mobilenet_v2 and efficientnet_b0 (built by `/usr/bin/python3
tools/make_zoo.py --out models/`; skipped when missing) are quantized with onnxruntime's
quantize_static: QDQ format, uint8 activations, int8 weights per channel, calibrated (min/max)
on four random inputs from a fixed seed. ignis runs them as QLinearConv / QLinearMatMul
(fuse_qdq_into_qlinear), and efficientnet_b0's SiLUs and gates as QLinearLookup / QLinearMul,
with an exact integer sum requantized in float32 as onnxruntime's int8 kernels do. Where the
two fuse different ops (efficientnet_b0's activations) a value may round one step differently,
and those steps propagate. The tolerance is onnxruntime's own spread: the same file run with
graph optimizations disabled (every QDQ pair executed in float32) differs from its int8 path
by some amount; ignis must stay within 1.5 times that amount, in its largest and in its mean
absolute difference, and agree on the top class. resnet50 and mobilenet_v2 run the same int8
ops as onnxruntime and give its logits exactly (measured: max difference 0 against a spread
of 0.15 / mean 0.037 on resnet50; before the requantization followed onnxruntime's float32
arithmetic, 0.12 / 0.025): their mean difference must stay below a tenth of the spread.
(efficientnet_b0: 0.076 / 0.015 against 0.066 / 0.015.)

Environment: IGNIS_BIN (default build/ignis), IGNIS_MODELS_DIR (default models/).
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qdq_runs import ignis_bin, run_ignis, run_ort  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from ort_int8 import onnxruntime_int8_is_exact  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = Path(os.environ.get("IGNIS_MODELS_DIR", ROOT / "models"))
CALIBRATION_SEED = 0
INPUT_SEED = 1
MARGIN = 1.5
# Models whose int8 ops are all ones onnxruntime runs too, in the same arithmetic.
SAME_OPS_MARGIN = {"resnet50": 0.1, "mobilenet_v2": 0.1}


def _quantize(src, dst, input_name, shape):
    q = pytest.importorskip("onnxruntime.quantization")

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(CALIBRATION_SEED)
            self.feeds = iter([{input_name: rng.standard_normal(shape).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.feeds, None)

    q.quantize_static(str(src), str(dst), Reader(), quant_format=q.QuantFormat.QDQ, per_channel=True,
                      activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8)


@pytest.mark.parametrize("name", ["resnet50", "mobilenet_v2", "efficientnet_b0"])
def test_qdq_model_matches_onnxruntime(name, tmp_path):
    onnx = pytest.importorskip("onnx")
    src = MODELS_DIR / f"{name}.onnx"
    if not src.is_file():
        pytest.skip(f"{src} is missing: generate with /usr/bin/python3 tools/make_zoo.py --out models/")
    ignis_bin()  # skips before quantizing when the binary is missing
    graph_input = onnx.load(str(src), load_external_data=False).graph.input[0]
    shape = [d.dim_value or 1 for d in graph_input.type.tensor_type.shape.dim]
    model = tmp_path / f"{name}_qdq.onnx"
    _quantize(src, model, graph_input.name, shape)

    x = np.random.default_rng(INPUT_SEED).standard_normal(shape).astype(np.float32)
    feeds = {graph_input.name: x}
    ort_int8 = run_ort(model, feeds, optimize=True)
    ort_float = run_ort(model, feeds, optimize=False)
    got = run_ignis(model, {graph_input.name: x}, tmp_path)

    spread = np.abs(ort_int8 - ort_float)
    # Where onnxruntime's int8 kernels saturate (tests/python/ort_int8.py), its float32 run of
    # the file is the reference, with the same yardstick.
    exact = onnxruntime_int8_is_exact()
    want = ort_int8 if exact else ort_float
    diff = np.abs(got - want)
    print(f"{name}: ignis vs onnxruntime {'int8' if exact else 'float QDQ'} max {diff.max():.4f} mean "
          f"{diff.mean():.5f}; onnxruntime int8 vs float QDQ max {spread.max():.4f} mean {spread.mean():.5f}",
          file=sys.stderr)
    assert got.shape == want.shape
    assert np.argmax(got, axis=-1).tolist() == np.argmax(want, axis=-1).tolist()
    assert diff.max() <= MARGIN * spread.max()
    assert diff.mean() <= MARGIN * spread.mean()
    if exact and name in SAME_OPS_MARGIN:
        assert diff.mean() <= SAME_OPS_MARGIN[name] * spread.mean()
