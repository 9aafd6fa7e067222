# SPDX-License-Identifier: Apache-2.0
"""An EfficientNet-style block (SiLU activations, a depthwise convolution, squeeze-excitation)
quantized by onnxruntime's quantize_static (QDQ, uint8 activations, int8 weights per channel):
ignis runs each quantized SiLU and Sigmoid as one ai.ignis QLinearLookup
(fuse_qdq_into_lookup_table), the gate times its map as com.microsoft QLinearMul
(fuse_qdq_into_qlinear_mul) and the pool as QLinearGlobalAveragePool, so no float op is left
between the integer convolutions; the result stays within a few steps of the output's
quantization of what onnxruntime computes on the same file, with the QDQ pairs executed in
float32 and with its own int8 kernels. And com.microsoft QLinearMul alone against onnxruntime's
contrib kernel."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ignis

from test_quantize_static_residual import binary_op_matches_onnxruntime, quantize_qdq, within_steps_of_onnxruntime

SHAPE = [1, 8, 14, 14]


def _swish_block_model(path):
    """x -> Conv 1x1 (8 -> 24) -> SiLU -> depthwise 3x3 -> SiLU -> e; squeeze-excitation of e
    (GlobalAveragePool -> Conv 1x1 (24 -> 6) -> SiLU -> Conv 1x1 (6 -> 24) -> Sigmoid -> * e)
    -> Conv 1x1 (24 -> 8)."""
    rng = np.random.default_rng(0)
    inits = []

    def conv(x, y, cin, cout, k=1, group=1):
        w, b = f"{y}_w", f"{y}_b"
        inits.append(numpy_helper.from_array((rng.standard_normal([cout, cin // group, k, k]) * 0.3).astype(np.float32), w))
        inits.append(numpy_helper.from_array((rng.standard_normal(cout) * 0.1).astype(np.float32), b))
        return helper.make_node("Conv", [x, w, b], [y], pads=[k // 2] * 4, group=group)

    def silu(x, y):
        return [helper.make_node("Sigmoid", [x], [y + "_s"]), helper.make_node("Mul", [x, y + "_s"], [y])]

    nodes = [conv("x", "c0", 8, 24), *silu("c0", "a0"), conv("a0", "d0", 24, 24, 3, 24), *silu("d0", "e"),
             helper.make_node("GlobalAveragePool", ["e"], ["p"]), conv("p", "f1", 24, 6), *silu("f1", "g1"),
             conv("g1", "f2", 6, 24), helper.make_node("Sigmoid", ["f2"], ["gate"]),
             helper.make_node("Mul", ["e", "gate"], ["se"]), conv("se", "y", 24, 8)]
    graph = helper.make_graph(nodes, "swish_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 14, 14])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_swish_block_runs_on_integers_and_matches_onnxruntime(tmp_path, ort):
    _swish_block_model(tmp_path / "float.onnx")
    model = tmp_path / "qdq.onnx"
    quantize_qdq(tmp_path / "float.onnx", model, SHAPE)

    ignis.optimize(model, tmp_path / "optimized.onnx", level="all")
    ops = [(n.domain, n.op_type) for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node]
    # Three SiLUs and the gate's Sigmoid as tables, the gate's product and the pool in integers.
    assert ops.count(("ai.ignis", "QLinearLookup")) == 4, ops
    assert ops.count(("com.microsoft", "QLinearMul")) == 1, ops
    assert ops.count(("com.microsoft", "QLinearGlobalAveragePool")) == 1, ops
    assert not {("", "Sigmoid"), ("", "Mul"), ("", "GlobalAveragePool")} & set(ops), ops

    within_steps_of_onnxruntime(ort, model, SHAPE, 3, 0.1)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("shapes", [([2, 24, 5, 7], [2, 24, 1, 1]), ([2, 24, 1, 1], [2, 24, 5, 7]),
                                    ([3, 40], [3, 40]), ([3, 40], []), ([2, 3, 4], [3, 1])])
def test_qlinear_mul_matches_onnxruntime(tmp_path, ort, dtype, shapes):
    """The op alone: the x86 kernel for one shape, a per-channel gate and a scalar, the reference
    for other broadcasts."""
    binary_op_matches_onnxruntime(tmp_path, ort, "QLinearMul", dtype, *shapes)
