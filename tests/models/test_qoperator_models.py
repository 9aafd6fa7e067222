# SPDX-License-Identifier: Apache-2.0
"""Models in onnxruntime's QOperator format: ignis against onnxruntime on the same file.

    IGNIS_BIN=build/ignis python3 -m pytest -q tests/models/test_qoperator_models.py

onnxruntime's quantize_static with QuantFormat.QOperator writes integer ops instead of QDQ
pairs: QLinearConv, QLinearMatMul, com.microsoft QLinearAdd / QLinearMul /
QLinearGlobalAveragePool (which ignis runs as they are) and com.microsoft QGemm /
QLinearSoftmax / QLinearConcat / ... (which it expands into their QDQ form,
passes/expand_qoperator_ops.cc, and fuses back into integer kernels). The zoo's digits CNN,
mobilenet_v2 and all-MiniLM-L6-v2 (real weights; built by `/usr/bin/python3 tools/make_zoo.py
--out models/`, skipped when missing) are quantized so (uint8 activations, int8 weights per
channel, min/max over four inputs from a fixed seed) and run by both engines.

The CNNs' integer ops are onnxruntime's arithmetic except the classifier's QGemm, which ignis
rounds through float32 (its QDQ form) where onnxruntime requantizes the integer sum once: the
logits may differ by one quantization step of the QGemm's output, no more, and the top class
must agree. MiniLM's QLinearSoftmax is onnxruntime's table of exponentials against ignis's
float32 softmax, one step apart at most per value; its hidden states must stay within a tenth
of the quantization error itself (onnxruntime's QOperator run against the float model) in
their mean difference, and its sentence embedding within 0.001 in cosine of onnxruntime's.
(Measured on AMD EPYC Zen 4: the three models gave onnxruntime's outputs exactly.)

Environment: IGNIS_BIN (default build/ignis), IGNIS_MODELS_DIR (default models/).
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qdq_runs import run_ignis, run_ort  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from ort_int8 import onnxruntime_int8_is_exact  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = Path(os.environ.get("IGNIS_MODELS_DIR", ROOT / "models"))
SEQ = 64


def _image_feeds(model, seed):
    onnx = pytest.importorskip("onnx")
    graph_input = onnx.load(str(model), load_external_data=False).graph.input[0]
    shape = [d.dim_value or 1 for d in graph_input.type.tensor_type.shape.dim]
    return {graph_input.name: np.random.default_rng(seed).standard_normal(shape).astype(np.float32)}


def _token_feeds(model, seed):
    rng = np.random.default_rng(seed)
    return {"input_ids": rng.integers(1000, 20000, (1, SEQ), dtype=np.int64),
            "attention_mask": np.ones((1, SEQ), dtype=np.int64)}


def _quantize_qoperator(src, dst, feeds):
    q = pytest.importorskip("onnxruntime.quantization")

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.it = iter([feeds(src, seed) for seed in range(4)])

        def get_next(self):
            return next(self.it, None)

    q.quantize_static(str(src), str(dst), Reader(), quant_format=q.QuantFormat.QOperator, per_channel=True,
                      activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8)


def _prepare(name, feeds, tmp_path):
    src = MODELS_DIR / f"{name}.onnx"
    if not src.is_file():
        pytest.skip(f"{src} is missing: generate with /usr/bin/python3 tools/make_zoo.py --out models/")
    if not onnxruntime_int8_is_exact():
        pytest.skip("onnxruntime's int8 kernels saturate on this CPU (tests/python/ort_int8.py): no reference")
    model = tmp_path / f"{name}_qoperator.onnx"
    _quantize_qoperator(src, model, feeds)
    return src, model


def _output_step(model):
    """The scale of the model's final DequantizeLinear: one quantization step of its output."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    m = onnx.load(str(model))
    (dq,) = [n for n in m.graph.node if n.op_type == "DequantizeLinear" and n.output[0] == m.graph.output[0].name]
    (scale,) = [numpy_helper.to_array(t) for t in m.graph.initializer if t.name == dq.input[1]]
    return float(scale)


@pytest.mark.parametrize("name", ["digits_cnn", "mobilenet_v2"])
def test_qoperator_cnn_matches_onnxruntime(name, tmp_path):
    src, model = _prepare(name, _image_feeds, tmp_path)
    ops = {n.op_type for n in pytest.importorskip("onnx").load(str(model)).graph.node}
    assert "QGemm" in ops and "QLinearConv" in ops, ops
    feeds = _image_feeds(src, 100)
    want = run_ort(model, feeds, optimize=True)
    got = run_ignis(model, feeds, tmp_path)
    step = _output_step(model)
    diff = np.abs(got - want)
    print(f"{name}: ignis vs onnxruntime max {diff.max():.5f} mean {diff.mean():.6f}, output step {step:.5f}",
          file=sys.stderr)
    assert got.shape == want.shape
    assert diff.max() <= 1.001 * step
    assert np.argmax(got, axis=-1).tolist() == np.argmax(want, axis=-1).tolist()


def test_qoperator_minilm_matches_onnxruntime(tmp_path):
    src, model = _prepare("minilm", _token_feeds, tmp_path)
    ops = {n.op_type for n in pytest.importorskip("onnx").load(str(model)).graph.node}
    assert "QLinearSoftmax" in ops and "QLinearMatMul" in ops, ops
    feeds = _token_feeds(src, 100)
    want = run_ort(model, feeds, optimize=True)
    float_model = run_ort(src, feeds, optimize=True)
    got = run_ignis(model, feeds, tmp_path)

    def embedding_cosine(a, b):
        a, b = a.mean(axis=1).ravel(), b.mean(axis=1).ravel()
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))

    diff = np.abs(got - want)
    quantization_error = np.abs(want - float_model)
    print(f"minilm: ignis vs onnxruntime max {diff.max():.4f} mean {diff.mean():.5f}; onnxruntime QOperator vs "
          f"float max {quantization_error.max():.4f} mean {quantization_error.mean():.5f}; embedding cosine "
          f"{embedding_cosine(got, want):.5f}", file=sys.stderr)
    assert got.shape == want.shape
    assert diff.mean() <= 0.1 * quantization_error.mean()
    assert embedding_cosine(got, want) >= 0.999
