# SPDX-License-Identifier: Apache-2.0
"""ignis.quantize() and ignis.prune(): the files they write are checked against numpy
computations of the same schemes, and the compressed models run in ignis as they do in
onnxruntime (the reference)."""

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import ignis
import model_builders
from conftest import assert_close

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from make_inputs import make_inputs  # noqa: E402


def _write(tmp_path, name, model_bytes):
    path = tmp_path / name
    path.write_bytes(model_bytes)
    return path


def _initializers(path):
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}


def _nodes(path):
    return list(onnx.load(str(path)).graph.node)


def _run_both(path, feeds, ort):
    """ignis and onnxruntime outputs of `path`. onnxruntime runs at its basic level: from the
    extended level on it rewrites DequantizeLinear + MatMul into MatMulNBits, which also
    quantizes the activations and so computes something else than the model states."""
    actual = ignis.InferenceSession(str(path)).run(None, feeds)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    expected = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(None, feeds)
    return actual, expected


def test_int8_per_channel_matches_numpy_and_runs_like_onnxruntime(tmp_path, ort, rng):
    src = _write(tmp_path, "cnn.onnx", model_builders.cnn())
    out = tmp_path / "cnn.int8.onnx"
    report = ignis.quantize(src, out, min_elements=0)
    original = _initializers(src)
    written = _initializers(out)
    # k1 [8,3,3,3] and k2 [12,8,3,3] are Conv weights (channels on axis 0); fc [5,12] is Gemm's B
    # with transB=1 (axis 0). Biases and BatchNormalization parameters are not weights.
    assert sorted(c.value for c in report.changed) == ["fc", "k1", "k2"]
    for name in ("k1", "k2", "fc"):
        w = original[name]
        q, scale, zero = written[f"{name}_quantized"], written[f"{name}_scale"], written[f"{name}_zero_point"]
        assert q.dtype == np.int8 and zero.dtype == np.int8 and not zero.any()
        per_channel = np.abs(w.reshape(w.shape[0], -1)).max(axis=1) / 127
        np.testing.assert_allclose(scale, per_channel, rtol=1e-6)
        expected_q = np.clip(np.round(w / scale.reshape(-1, *([1] * (w.ndim - 1)))), -127, 127)
        np.testing.assert_array_equal(q, expected_q.astype(np.int8))
        assert name not in written
        change = next(c for c in report.changed if c.value == name)
        assert change.scheme == "int8 per-channel axis 0"
        assert change.max_abs_error <= scale.max() / 2 * (1 + 1e-6)
    dq = [n for n in _nodes(out) if n.op_type == "DequantizeLinear"]
    assert sorted(n.output[0] for n in dq) == ["fc", "k1", "k2"]
    assert report.file_bytes_after < report.file_bytes_before

    feeds = {"image": rng.standard_normal((2, 3, 16, 16), dtype=np.float32)}
    actual, expected = _run_both(out, feeds, ort)
    assert_close(actual[0], expected[0], "int8 cnn")


def test_int8_matmul_weight_uses_the_last_axis(tmp_path, ort, rng):
    src = _write(tmp_path, "mlp.onnx", model_builders.mlp())
    out = tmp_path / "mlp.int8.onnx"
    report = ignis.quantize(src, out, min_elements=0)
    assert {c.value: c.scheme for c in report.changed} == {
        "w1": "int8 per-channel axis 1",
        "w2": "int8 per-channel axis 1",
    }
    w1 = _initializers(src)["w1"]
    np.testing.assert_allclose(_initializers(out)["w1_scale"], np.abs(w1).max(axis=0) / 127, rtol=1e-6)
    feeds = {"x": rng.standard_normal((3, 16), dtype=np.float32)}
    actual, expected = _run_both(out, feeds, ort)
    for a, e in zip(actual, expected):
        assert_close(a, e, "int8 mlp")


def test_int8_per_tensor_and_old_opsets(tmp_path, rng):
    src = _write(tmp_path, "mlp.onnx", model_builders.mlp())
    out = tmp_path / "mlp.t.onnx"
    report = ignis.quantize(src, out, per_channel=False, min_elements=0)
    assert {c.scheme for c in report.changed} == {"int8 per-tensor"}
    w1 = _initializers(src)["w1"]
    scale = _initializers(out)["w1_scale"]
    assert scale.shape == () and np.isclose(scale, np.abs(w1).max() / 127, rtol=1e-6)

    model = onnx.load_from_string(model_builders.mlp())
    model.opset_import[0].version = 12  # per-axis DequantizeLinear arrived in opset 13
    old = tmp_path / "mlp12.onnx"
    old.write_bytes(model.SerializeToString())
    report = ignis.quantize(old, tmp_path / "mlp12.int8.onnx", min_elements=0)
    assert {c.scheme for c in report.changed} == {"int8 per-tensor"}


def test_fp16_weights_are_cast_back(tmp_path, ort, rng):
    src = _write(tmp_path, "cnn.onnx", model_builders.cnn())
    out = tmp_path / "cnn.fp16.onnx"
    report = ignis.quantize(src, out, mode="fp16", min_elements=0)
    original, written = _initializers(src), _initializers(out)
    for c in report.changed:
        np.testing.assert_array_equal(written[f"{c.value}_fp16"], original[c.value].astype(np.float16))
    casts = [n for n in _nodes(out) if n.op_type == "Cast"]
    assert sorted(n.output[0] for n in casts) == sorted(c.value for c in report.changed)
    feeds = {"image": rng.standard_normal((1, 3, 16, 16), dtype=np.float32)}
    actual, expected = _run_both(out, feeds, ort)
    assert_close(actual[0], expected[0], "fp16 cnn")


def test_min_elements_keeps_small_weights(tmp_path):
    src = _write(tmp_path, "cnn.onnx", model_builders.cnn())
    report = ignis.quantize(src, tmp_path / "q.onnx", min_elements=100)
    # k1 has 216 elements, k2 864, fc 60.
    assert sorted(c.value for c in report.changed) == ["k1", "k2"]
    assert any(s.startswith("fc: 60 elements") for s in report.skipped)


def test_element_pruning_zeroes_the_smallest_magnitudes(tmp_path, ort, rng):
    src = _write(tmp_path, "cnn.onnx", model_builders.cnn())
    out = tmp_path / "cnn.p.onnx"
    report = ignis.prune(src, out, sparsity=0.3, min_elements=0)
    original, written = _initializers(src), _initializers(out)
    assert sorted(c.value for c in report.changed) == ["fc", "k1", "k2"]
    for c in report.changed:
        w, p = original[c.value], written[c.value]
        zeroed = p == 0
        assert zeroed.sum() == round(0.3 * w.size)
        np.testing.assert_array_equal(p[~zeroed], w[~zeroed])
        assert np.abs(w[zeroed]).max() <= np.abs(w[~zeroed]).min()
        assert c.zeros_after == zeroed.sum()
    for name in ("kb1", "scale", "fcb"):
        np.testing.assert_array_equal(written[name], original[name])
    feeds = {"image": rng.standard_normal((2, 3, 16, 16), dtype=np.float32)}
    actual, expected = _run_both(out, feeds, ort)
    assert_close(actual[0], expected[0], "pruned cnn")


def test_channel_pruning_zeroes_whole_channels_of_smallest_norm(tmp_path):
    src = _write(tmp_path, "cnn.onnx", model_builders.cnn())
    out = tmp_path / "cnn.c.onnx"
    ignis.prune(src, out, sparsity=0.25, granularity="channel", min_elements=0)
    w, p = _initializers(src)["k2"], _initializers(out)["k2"]  # 12 output channels on axis 0
    norms = np.sqrt((w.reshape(12, -1).astype(np.float64) ** 2).sum(axis=1))
    dropped = np.argsort(norms, kind="stable")[:3]
    for ch in range(12):
        if ch in dropped:
            assert not p[ch].any()
        else:
            np.testing.assert_array_equal(p[ch], w[ch])
    fc_w, fc_p = _initializers(src)["fc"], _initializers(out)["fc"]  # Gemm transB: channels on axis 0
    zero_rows = ~fc_p.any(axis=1)
    assert zero_rows.sum() == 1  # round(0.25 * 5)
    np.testing.assert_array_equal(fc_p[~zero_rows], fc_w[~zero_rows])


def test_zoo_mobilenet_int8_runs_like_onnxruntime(tmp_path, ort):
    model = ROOT / "models" / "mobilenet_v2.onnx"
    sidecar = ROOT / "models" / "mobilenet_v2.json"
    if not (model.is_file() and sidecar.is_file()):
        pytest.skip(f"{model} not generated (run: /usr/bin/python3 tools/make_zoo.py --out models)")
    out = tmp_path / "m.int8.onnx"
    report = ignis.quantize(model, out)
    assert report.file_bytes_after < 0.3 * report.file_bytes_before
    feeds = make_inputs(json.loads(sidecar.read_text()), seed=0)
    actual, expected = _run_both(out, feeds, ort)
    assert_close(actual[0], expected[0], "mobilenet_v2 int8")


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda src, out: ignis.quantize(src, out, mode="int2"), ignis.InvalidArgument, "mode 'int2'"),
        (lambda src, out: ignis.quantize(src, out, min_elements=-1), ignis.InvalidArgument, "min_elements"),
        (lambda src, out: ignis.prune(src, out, sparsity=1.0), ignis.InvalidArgument, "sparsity must be in [0, 1)"),
        (lambda src, out: ignis.prune(src, out, sparsity=float("nan")), ignis.InvalidArgument, "sparsity"),
        (lambda src, out: ignis.prune(src, out, granularity="row"), ignis.InvalidArgument, "granularity 'row'"),
        (lambda src, out: ignis.quantize(src.parent / "missing.onnx", out), FileNotFoundError, "missing.onnx"),
        (lambda src, out: ignis.prune(src, src.parent / "no_dir" / "x.onnx"), FileNotFoundError, "no_dir"),
    ],
)
def test_bad_arguments_raise_clear_errors(tmp_path, call, error, message):
    src = _write(tmp_path, "mlp.onnx", model_builders.mlp())
    with pytest.raises(error) as info:
        call(src, tmp_path / "out.onnx")
    assert message in str(info.value)


def test_corrupt_model_is_rejected(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage that is not protobuf\xff\xff")
    with pytest.raises(ignis.IgnisError):
        ignis.quantize(bad, tmp_path / "out.onnx")


@pytest.mark.parametrize(
    "compress, max_lost",
    [
        (lambda src, out: ignis.quantize(src, out, min_elements=0), 0.01),
        (lambda src, out: ignis.quantize(src, out, mode="fp16", min_elements=0), 0.0),
        (lambda src, out: ignis.prune(src, out, sparsity=0.3, min_elements=0), 0.02),
    ],
    ids=["int8", "fp16", "prune30"],
)
def test_committed_digits_cnn_keeps_its_accuracy(tmp_path, compress, max_lost):
    """The trained digits CNN (assets/) on its whole test split, before and after compression."""
    data = np.load(ROOT / "assets" / "digits_test.npz")
    src = ROOT / "assets" / "digits_cnn.onnx"
    out = tmp_path / "digits.onnx"
    report = compress(src, out)
    assert len(report.changed) == 3

    def accuracy(path):
        sess = ignis.InferenceSession(str(path))
        (logits,) = sess.run(None, {sess.get_inputs()[0].name: data["x"]})
        return float((logits.argmax(axis=1) == data["y"]).mean())

    before, after = accuracy(src), accuracy(out)
    assert after >= before - max_lost, f"accuracy {before:.4f} -> {after:.4f}"
