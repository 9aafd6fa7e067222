# SPDX-License-Identifier: Apache-2.0
"""ReLU6 (Clip(0, 6)) after a convolution under `ignis.quantize(calibrate=...)`: the QDQ pair
goes after the Clip only, as onnxruntime's quantize_static places it (which then drops the
Clip), with the range onnxruntime computes for it; at level all the int8 convolution absorbs
the Clip (its output's saturation already clamps there), and the result stays with
onnxruntime's on the same file."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ignis

SHAPE = [1, 3, 12, 12]
CLIP_OUTPUTS = ["r1", "r2"]


def _relu6_model(path):
    """x -> Conv 3x3 (3 -> 8) -> Clip(0, 6) -> r1 -> depthwise 3x3 -> Clip(0, 6) -> r2 -> Conv 1x1
    (8 -> 16) -> y. Weights large enough that the convolutions often exceed 6."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(np.float32(0.0), "lo"), numpy_helper.from_array(np.float32(6.0), "hi")]

    def conv(x, y, cin, cout, k, group=1):
        w, b = f"{y}_w", f"{y}_b"
        inits.append(numpy_helper.from_array((rng.standard_normal([cout, cin // group, k, k]) * 1.5).astype(np.float32), w))
        inits.append(numpy_helper.from_array((rng.standard_normal(cout) * 0.5).astype(np.float32), b))
        return helper.make_node("Conv", [x, w, b], [y], pads=[k // 2] * 4, group=group)

    nodes = [conv("x", "c1", 3, 8, 3), helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"]),
             conv("r1", "c2", 8, 8, 3, 8), helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"]),
             conv("r2", "y", 8, 16, 1)]
    graph = helper.make_graph(nodes, "relu6", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 12, 12])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _samples(n=16):
    rng = np.random.default_rng(1)
    return [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(n)]


def _quantize_params(model):
    """{tensor quantized: (scale, zero point)} of each QuantizeLinear in the file."""
    graph = onnx.load(str(model)).graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    return {n.input[0]: (float(inits[n.input[1]]), int(inits[n.input[2]]))
            for n in graph.node if n.op_type == "QuantizeLinear"}


def test_relu6_is_quantized_after_the_clip_and_folds_into_the_int8_convolution(tmp_path, ort):
    q = pytest.importorskip("onnxruntime.quantization")
    _relu6_model(tmp_path / "float.onnx")
    folder = tmp_path / "calibration"
    folder.mkdir()
    for i, x in enumerate(_samples()):
        np.save(folder / f"{i:02d}.npy", x)
    ours = tmp_path / "ignis.onnx"
    ignis.quantize(tmp_path / "float.onnx", ours, calibrate=folder, smooth=0, progress=False)
    params = _quantize_params(ours)
    # The input and each Clip output; never a convolution's output before its Clip.
    assert sorted(params) == sorted(["x"] + CLIP_OUTPUTS)

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.feeds = iter([{"x": x} for x in _samples()])

        def get_next(self):
            return next(self.feeds, None)

    theirs = tmp_path / "onnxruntime.onnx"
    q.quantize_static(str(tmp_path / "float.onnx"), str(theirs), Reader(), quant_format=q.QuantFormat.QDQ,
                      per_channel=True, activation_type=q.QuantType.QInt8, weight_type=q.QuantType.QInt8)
    reference = _quantize_params(theirs)
    # onnxruntime drops each Clip and quantizes the convolution's output with the Clip output's
    # range: the same scale and zero point as ignis's pair after the Clip.
    for conv, clip in (("c1", "r1"), ("c2", "r2")):
        want = reference.get(clip, reference.get(conv))
        assert want is not None, reference
        assert params[clip][0] == pytest.approx(want[0], rel=1e-6), clip
        assert params[clip][1] == want[1], clip
        assert params[clip][1] == -128  # the range starts at 0

    ignis.optimize(ours, tmp_path / "optimized.onnx", level="all")
    ops = [n.op_type for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node]
    assert ops.count("QLinearConv") == 2 and "Clip" not in ops, ops

    # The file as onnxruntime runs its QDQ pairs in float32 (optimizations off).
    unfused = ort.SessionOptions()
    unfused.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    ort_session = ort.InferenceSession(str(ours), unfused, providers=["CPUExecutionProvider"])
    session = ignis.InferenceSession(str(ours))
    rng = np.random.default_rng(2)
    for _ in range(4):
        feeds = {"x": rng.standard_normal(SHAPE).astype(np.float32)}
        (want,) = ort_session.run(None, feeds)
        (got,) = session.run(None, feeds)
        np.testing.assert_allclose(got, want, atol=0.02 * np.abs(want).max())
