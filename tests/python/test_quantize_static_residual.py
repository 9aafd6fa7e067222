# SPDX-License-Identifier: Apache-2.0
"""A residual CNN block quantized by onnxruntime's quantize_static (QDQ, uint8 activations, int8
weights per channel, as bench/quantized_cnn.py quantizes the zoo's CNNs): ignis runs its residual
Adds as com.microsoft QLinearAdd (fuse_qdq_into_qlinear_add) and its convolutions as
QLinearConv, and the result stays within a step or two of the output's quantization of what
onnxruntime computes on the same file, both with the QDQ pairs executed in float32 (its
optimizations off: the unfused model) and with its own int8 kernels. Each integer op rounds
once where the QDQ graph rounds its float sums too, so single values may move by one step of
their layer's scale, and such steps propagate through the next layer."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ignis
from ort_int8 import onnxruntime_int8_is_exact

SHAPE = [1, 8, 12, 12]


def _residual_model(path):
    """x -> Conv 3x3 -> Relu -> MaxPool 2x2 -> p; p -> Conv 3x3 -> Relu -> Conv 1x1 -> + p -> Relu,
    twice (the second block adds the first block's output)."""
    rng = np.random.default_rng(0)

    def weight(name, shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)

    def bias(name, n):
        return numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("MaxPool", ["r0"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
    ]
    inits = [weight("w0", [16, 8, 3, 3]), bias("b0", 16)]
    skip = "p"
    for i in (1, 2):
        nodes += [
            helper.make_node("Conv", [skip, f"w{i}a", f"b{i}a"], [f"c{i}a"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", [f"c{i}a"], [f"r{i}a"]),
            helper.make_node("Conv", [f"r{i}a", f"w{i}b", f"b{i}b"], [f"c{i}b"]),
            helper.make_node("Add", [f"c{i}b", skip], [f"s{i}"]),
            helper.make_node("Relu", [f"s{i}"], [f"y{i}"]),
        ]
        inits += [weight(f"w{i}a", [16, 16, 3, 3]), bias(f"b{i}a", 16), weight(f"w{i}b", [16, 16, 1, 1]), bias(f"b{i}b", 16)]
        skip = f"y{i}"
    graph = helper.make_graph(nodes, "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info(skip, TensorProto.FLOAT, [1, 16, 6, 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def quantize_qdq(src, dst, shape=SHAPE):
    """onnxruntime's quantize_static on input x: QDQ, uint8 activations, int8 weights per channel,
    calibrated on 8 normal inputs of `shape` from a fixed seed."""
    q = pytest.importorskip("onnxruntime.quantization")

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.feeds = iter([{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.feeds, None)

    q.quantize_static(str(src), str(dst), Reader(), quant_format=q.QuantFormat.QDQ, per_channel=True,
                      activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8)


def _output_scale(model):
    """The scale of the DequantizeLinear that writes the graph output."""
    graph = onnx.load(str(model)).graph
    (node,) = [n for n in graph.node if n.output[0] == graph.output[0].name]
    assert node.op_type == "DequantizeLinear"
    (scale,) = [numpy_helper.to_array(t) for t in graph.initializer if t.name == node.input[1]]
    return float(scale)


def test_residual_adds_run_as_qlinear_add_and_match_onnxruntime(tmp_path, ort):
    _residual_model(tmp_path / "float.onnx")
    model = tmp_path / "qdq.onnx"
    quantize_qdq(tmp_path / "float.onnx", model)

    ignis.optimize(model, tmp_path / "optimized.onnx", level="all")
    ops = [(n.domain, n.op_type) for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node]
    assert ops.count(("com.microsoft", "QLinearAdd")) == 2, ops
    assert ("", "Add") not in ops and ops.count(("", "QLinearConv")) == 5, ops

    within_steps_of_onnxruntime(ort, model, SHAPE, 2, 0.05)


def within_steps_of_onnxruntime(ort, model, shape, max_steps, max_fraction):
    """ignis on the QDQ file against onnxruntime on it, with the QDQ pairs run in float32 (its
    optimizations off) and with its int8 kernels (where they are exact:
    ort_int8.onnxruntime_int8_is_exact), on 4 normal inputs: at most `max_steps` steps
    of the output's scale apart, and more than half a step on at most `max_fraction` of the
    values."""
    step = _output_scale(model)
    unfused = ort.SessionOptions()
    unfused.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    ort_float = ort.InferenceSession(str(model), unfused, providers=["CPUExecutionProvider"])
    ort_int8 = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    session = ignis.InferenceSession(str(model))
    rng = np.random.default_rng(2)
    for _ in range(4):
        feeds = {"x": rng.standard_normal(shape).astype(np.float32)}
        (got,) = session.run(None, feeds)
        for reference in (ort_float, ort_int8) if onnxruntime_int8_is_exact() else (ort_float,):
            (want,) = reference.run(None, feeds)
            steps = np.abs(got - want) / step
            assert steps.max() <= max_steps + 0.01, steps.max()
            assert np.mean(steps > 0.5) <= max_fraction, np.mean(steps > 0.5)


def binary_op_matches_onnxruntime(tmp_path, ort, op, dtype, a_shape, b_shape):
    """com.microsoft `op` (QLinearAdd, QLinearMul) alone on random bytes in ignis against
    onnxruntime's contrib kernel: at most one step apart, on at most 5% of the values (both do
    float32 arithmetic, arranged differently, so values near a rounding boundary may land one
    step apart); and saturation is exercised where B has enough values to reach it."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    a = rng.integers(info.min, info.max + 1, a_shape).astype(dtype)
    b = rng.integers(info.min, info.max + 1, b_shape).astype(dtype)
    tensor_type = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    inits = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("as", 0.013), ("bs", 0.021), ("cs", 0.03))]
    inits += [numpy_helper.from_array(np.array(v, dtype), n) for n, v in (("az", 7), ("bz", -5 if dtype == np.int8 else 130), ("cz", 3))]
    node = helper.make_node(op, ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"], domain="com.microsoft")
    graph = helper.make_graph([node], op,
                              [helper.make_tensor_value_info("a", tensor_type, a.shape),
                               helper.make_tensor_value_info("b", tensor_type, b.shape)],
                              [helper.make_tensor_value_info("c", tensor_type, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    path = tmp_path / (op + ".onnx")
    onnx.save(model, str(path))
    feeds = {"a": a, "b": b}
    (want,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    (got,) = ignis.InferenceSession(str(path)).run(None, feeds)
    assert got.dtype == want.dtype and got.shape == want.shape
    diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
    assert diff.max() <= 1 and np.mean(diff > 0) <= 0.05, (diff.max(), np.mean(diff > 0))
    if b.size >= 24:  # with a few values of B the results may all stay in range
        saturated = np.mean(got == info.max) + np.mean(got == info.min)
        assert 0 < saturated < 0.9  # saturation is exercised, but not everywhere


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("b_shape", [[2, 3, 40], [3, 1]])
def test_qlinear_add_matches_onnxruntime(tmp_path, ort, dtype, b_shape):
    """The op alone: ignis's reference kernel where B broadcasts, the x86 one otherwise."""
    binary_op_matches_onnxruntime(tmp_path, ort, "QLinearAdd", dtype, [2, 3, 40], b_shape)
