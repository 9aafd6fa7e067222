# SPDX-License-Identifier: Apache-2.0
"""QDQ models whose MaxPool, Reshape, Transpose, Slice, Concat, nearest Resize, Flatten and
DepthToSpace sit between DequantizeLinear and QuantizeLinear at one scale and zero point, as
onnxruntime's quantize_static writes them: ignis runs these ops on the quantized bytes
(eliminate_qdq_around_data_movement), which is exact, so its outputs equal onnxruntime's
bit for bit (onnxruntime drops the same pairs; its unoptimized run, every op in float32,
gives the same values too).

    IGNIS_BIN=build/ignis python3 -m pytest -q tests/models/test_qdq_data_movement.py

The models are built here with onnx.helper, uint8 and int8 activations.
"""
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_parity import _ignis_bin, run_ignis

SCALE = 0.037


def _qdq_model(zero_type, zero_point):
    """x [1, 4, 10, 10] -> Q -> DQ -> MaxPool -> Q -> DQ -> Reshape -> Q -> DQ -> Transpose -> Q
    -> {DQ -> Slice -> Q, DQ} -> DQ -> Concat -> Q -> DQ -> Resize(nearest) -> Q -> DQ ->
    DepthToSpace -> Q -> DQ -> Flatten -> Q -> DQ -> y, every pair at the same parameters."""
    inits = [numpy_helper.from_array(np.array(SCALE, np.float32), "s"),
             numpy_helper.from_array(np.array(zero_point, zero_type), "z"),
             numpy_helper.from_array(np.array([1, 4, 5, 5], np.int64), "shape"),
             numpy_helper.from_array(np.array([1], np.int64), "starts"),
             numpy_helper.from_array(np.array([4], np.int64), "ends"),
             numpy_helper.from_array(np.array([1], np.int64), "axes"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    nodes = []
    count = [0]

    def qdq(value):
        """Q then DQ of `value`; returns the dequantized name."""
        count[0] += 1
        q, d = f"{value}_q{count[0]}", f"{value}_d{count[0]}"
        nodes.append(helper.make_node("QuantizeLinear", [value, "s", "z"], [q]))
        nodes.append(helper.make_node("DequantizeLinear", [q, "s", "z"], [d]))
        return d

    v = qdq("x")
    nodes.append(helper.make_node("MaxPool", [v], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    v = qdq("pool")
    nodes.append(helper.make_node("Reshape", [v, "shape"], ["reshaped"]))
    v = qdq("reshaped")
    nodes.append(helper.make_node("Transpose", [v], ["t"], perm=[0, 1, 3, 2]))
    # Two readers of the transposed bytes, each through its own DequantizeLinear.
    nodes.append(helper.make_node("QuantizeLinear", ["t", "s", "z"], ["tq"]))
    nodes.append(helper.make_node("DequantizeLinear", ["tq", "s", "z"], ["td1"]))
    nodes.append(helper.make_node("DequantizeLinear", ["tq", "s", "z"], ["td2"]))
    nodes.append(helper.make_node("Slice", ["td1", "starts", "ends", "axes"], ["sl"]))
    v = qdq("sl")
    nodes.append(helper.make_node("Concat", [v, "td2"], ["cat"], axis=1))
    v = qdq("cat")
    nodes.append(helper.make_node("Resize", [v, "", "scales"], ["up"], mode="nearest"))
    v = qdq("up")
    nodes.append(helper.make_node("DepthToSpace", [v], ["d2s"], blocksize=1))
    v = qdq("d2s")
    nodes.append(helper.make_node("Flatten", [v], ["flat"]))
    nodes.append(helper.make_node("QuantizeLinear", ["flat", "s", "z"], ["flat_q"]))
    nodes.append(helper.make_node("DequantizeLinear", ["flat_q", "s", "z"], ["y"]))
    graph = helper.make_graph(nodes, "qdq_data_movement",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 10, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 700])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def _run_ort(model_path, feeds, optimize):
    ort = pytest.importorskip("onnxruntime")
    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


@pytest.mark.parametrize("zero_type,zero_point", [(np.uint8, 128), (np.uint8, 3), (np.int8, -5)])
def test_qdq_data_movement_matches_onnxruntime(zero_type, zero_point, tmp_path):
    exe = _ignis_bin()
    if not exe.is_file():
        pytest.skip(f"ignis binary not found at {exe} (build it, or set IGNIS_BIN)")
    path = tmp_path / "qdq.onnx"
    onnx.save(_qdq_model(zero_type, zero_point), path)
    # Values over more than the quantized range, so the first QuantizeLinear saturates some.
    feeds = {"x": np.random.default_rng(5).uniform(-6, 6, (1, 4, 10, 10)).astype(np.float32)}

    got, _ = run_ignis(exe, path, feeds, tmp_path)
    want = _run_ort(path, feeds, optimize=True)
    assert got["y"].shape == want.shape
    np.testing.assert_array_equal(got["y"], want)
    np.testing.assert_array_equal(got["y"], _run_ort(path, feeds, optimize=False))

    # The standard-ONNX rewrite: only the input's QuantizeLinear and the output's
    # DequantizeLinear remain, and onnxruntime runs the rewritten uint8/int8 graph to the
    # same values.
    opt = tmp_path / "opt.onnx"
    res = subprocess.run([str(exe), "optimize", str(path), "-o", str(opt), "--level", "extended"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    ops = [n.op_type for n in onnx.load(str(opt)).graph.node]
    assert ops.count("QuantizeLinear") == 1 and ops.count("DequantizeLinear") == 1, ops
    np.testing.assert_array_equal(_run_ort(opt, feeds, optimize=False), want)


def _qlinear_gap_model(zero_type, x_zero_point, y_zero_point, channels_last, shape):
    inits = [numpy_helper.from_array(np.array(0.021, np.float32), "xs"),
             numpy_helper.from_array(np.array(x_zero_point, zero_type), "xz"),
             numpy_helper.from_array(np.array(0.013, np.float32), "ys"),
             numpy_helper.from_array(np.array(y_zero_point, zero_type), "yz")]
    node = helper.make_node("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft",
                            channels_last=channels_last)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(zero_type))
    out = [1] * len(shape)
    out[0] = shape[0]
    out[-1 if channels_last else 1] = shape[-1 if channels_last else 1]
    graph = helper.make_graph([node], "qlinear_gap", [helper.make_tensor_value_info("x", elem, shape)],
                              [helper.make_tensor_value_info("y", elem, out)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("zero_type,x_zero_point,y_zero_point,channels_last,shape", [
    (np.uint8, 128, 120, 0, [2, 5, 7, 7]),
    (np.uint8, 3, 0, 1, [1, 6, 6, 9]),
    (np.int8, -5, 7, 0, [1, 4, 3, 5, 2]),
    (np.int8, 0, -128, 1, [2, 11, 3]),
])
def test_qlinear_global_average_pool_matches_onnxruntime(zero_type, x_zero_point, y_zero_point, channels_last, shape,
                                                          tmp_path):
    """The reference kernel against onnxruntime's own (an integer sum requantized once)."""
    exe = _ignis_bin()
    if not exe.is_file():
        pytest.skip(f"ignis binary not found at {exe} (build it, or set IGNIS_BIN)")
    path = tmp_path / "gap.onnx"
    onnx.save(_qlinear_gap_model(zero_type, x_zero_point, y_zero_point, channels_last, shape), path)
    info = np.iinfo(zero_type)
    feeds = {"x": np.random.default_rng(9).integers(info.min, info.max + 1, shape).astype(zero_type)}
    got, _ = run_ignis(exe, path, feeds, tmp_path)
    want = _run_ort(path, feeds, optimize=True)
    assert got["y"].dtype == want.dtype and got["y"].shape == want.shape
    np.testing.assert_array_equal(got["y"], want)
