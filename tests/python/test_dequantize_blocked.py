# SPDX-License-Identifier: Apache-2.0
"""Blocked quantization (QuantizeLinear / DequantizeLinear with block_size, opset 21): the
reference kernels against onnxruntime on odd shapes (a short last block, blocks along inner and
outer axes), and 4-bit weight-only MatMuls in the standard-ONNX form, MatMul(A,
DequantizeLinear(W int4/uint4, scale, zero point, axis 0, block_size)), which
fuse_blocked_dq_into_matmul_nbits runs as com.microsoft MatMulNBits on the packed weights:
its results against onnxruntime's on the same file, and the same form as onnxruntime's own
MatMulNBitsQuantizer writes it (quant_format=QDQ)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ignis
from conftest import assert_close

OPSET = 21


def _save(path, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, "blocked", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    onnx.save(model, str(path))


def _ort_run(ort, path, feeds):
    """onnxruntime's answer with its graph optimizations off: at its default level it fuses the
    blocked DequantizeLinear + MatMul into MatMulNBits with accuracy_level 4 (A rounded to int8
    per block, errors of a few percent); ignis keeps A in float32, as the graph states."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(None, feeds)


def _int4_tensor(name, values, signed):
    """An INT4 / UINT4 initializer from integer values (onnx.helper packs them)."""
    dtype = TensorProto.INT4 if signed else TensorProto.UINT4
    return helper.make_tensor(name, dtype, list(values.shape), values.flatten().tolist())


def _blocked_matmul_model(path, rng, k, n, block, signed, zero_point, a_shape):
    """MatMul(A, DequantizeLinear(W [k, n], scale [ceil(k / block), n], zp?, axis 0, block))."""
    lo, hi = (-8, 8) if signed else (0, 16)
    blocks = (k + block - 1) // block
    w = rng.integers(lo, hi, size=(k, n))
    inits = [_int4_tensor("W", w, signed),
             numpy_helper.from_array(rng.uniform(0.01, 0.1, size=(blocks, n)).astype(np.float32), "scale")]
    dq_inputs = ["W", "scale"]
    if zero_point:
        inits.append(_int4_tensor("zp", rng.integers(lo, hi, size=(blocks, n)), signed))
        dq_inputs.append("zp")
    nodes = [helper.make_node("DequantizeLinear", dq_inputs, ["Wf"], axis=0, block_size=block),
             helper.make_node("MatMul", ["A", "Wf"], ["Y"])]
    _save(path, nodes, [helper.make_tensor_value_info("A", TensorProto.FLOAT, list(a_shape))],
          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)


@pytest.mark.parametrize("signed", [True, False], ids=["int4", "uint4"])
@pytest.mark.parametrize("zero_point", [True, False], ids=["zp", "no_zp"])
@pytest.mark.parametrize("k,n,block,a_shape", [
    (64, 16, 32, [1, 64]),        # whole blocks, one row (the GEMV case)
    (70, 19, 32, [5, 70]),        # a short last block, N off the 16-column groups
    (48, 33, 16, [2, 3, 48]),     # rank-3 A
    (200, 40, 128, [7, 200]),     # one long block and a short one
])
def test_blocked_int4_matmul_runs_as_matmul_nbits_and_matches_onnxruntime(
        tmp_path, ort, rng, signed, zero_point, k, n, block, a_shape):
    path = tmp_path / "model.onnx"
    _blocked_matmul_model(path, rng, k, n, block, signed, zero_point, a_shape)
    ignis.optimize(path, tmp_path / "optimized.onnx", level="all")
    ops = [(n.domain, n.op_type) for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node]
    assert ops == [("com.microsoft", "MatMulNBits")], ops

    a = rng.standard_normal(a_shape).astype(np.float32)
    (expected,) = _ort_run(ort, path, {"A": a})
    (actual,) = ignis.InferenceSession(str(path)).run(None, {"A": a})
    assert_close(actual, expected, "MatMulNBits from blocked DequantizeLinear")
    # Without the fusion (level basic folds the weights to float32) the answer is the same.
    basic = ignis.SessionOptions()
    basic.graph_optimization_level = ignis.GraphOptimizationLevel.ORT_ENABLE_BASIC
    (unfused,) = ignis.InferenceSession(str(path), sess_options=basic).run(None, {"A": a})
    assert_close(unfused, expected, "blocked DequantizeLinear folded to float32")


def test_bias_add_folds_into_matmul_nbits(tmp_path, ort, rng):
    """MatMul + Add(constant [N]) after a blocked DequantizeLinear: one MatMulNBits with bias;
    a bias of another shape ([1, N]) is left as an Add."""
    for bias_shape, fused in [([40], True), ([1, 40], False)]:
        w = rng.integers(-8, 8, size=(64, 40))
        inits = [_int4_tensor("W", w, True),
                 numpy_helper.from_array(rng.uniform(0.01, 0.1, size=(2, 40)).astype(np.float32), "scale"),
                 numpy_helper.from_array(rng.standard_normal(bias_shape).astype(np.float32), "bias")]
        nodes = [helper.make_node("DequantizeLinear", ["W", "scale"], ["Wf"], axis=0, block_size=32),
                 helper.make_node("MatMul", ["A", "Wf"], ["P"]), helper.make_node("Add", ["bias", "P"], ["Y"])]
        path = tmp_path / "bias.onnx"
        _save(path, nodes, [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 64])],
              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
        ignis.optimize(path, tmp_path / "optimized.onnx", level="all")
        ops = [n.op_type for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node]
        assert ops == (["MatMulNBits"] if fused else ["MatMulNBits", "Add"]), ops
        a = rng.standard_normal([2, 64]).astype(np.float32)
        (expected,) = _ort_run(ort, path, {"A": a})
        (actual,) = ignis.InferenceSession(str(path)).run(None, {"A": a})
        assert_close(actual, expected, f"MatMulNBits with bias {bias_shape}")


def test_blocks_that_matmul_nbits_cannot_take_stay_float(tmp_path, ort, rng):
    """block_size 24 (not a power of two) and blocks along N (axis 1): no fusion, same answer."""
    for axis, block, scale_shape in [(0, 24, (3, 8)), (1, 4, (64, 2))]:
        w = rng.integers(-8, 8, size=(64, 8))
        inits = [_int4_tensor("W", w, True),
                 numpy_helper.from_array(rng.uniform(0.01, 0.1, size=scale_shape).astype(np.float32), "scale")]
        nodes = [helper.make_node("DequantizeLinear", ["W", "scale"], ["Wf"], axis=axis, block_size=block),
                 helper.make_node("MatMul", ["A", "Wf"], ["Y"])]
        path = tmp_path / f"axis{axis}.onnx"
        _save(path, nodes, [helper.make_tensor_value_info("A", TensorProto.FLOAT, [3, 64])],
              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
        ignis.optimize(path, tmp_path / "optimized.onnx", level="all")
        ops = [n.op_type for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node]
        assert "MatMulNBits" not in ops, ops
        a = rng.standard_normal([3, 64]).astype(np.float32)
        (expected,) = _ort_run(ort, path, {"A": a})
        (actual,) = ignis.InferenceSession(str(path)).run(None, {"A": a})
        assert_close(actual, expected, f"blocked DequantizeLinear along axis {axis}")


@pytest.mark.parametrize("axis,block", [(0, 2), (1, 3), (2, 4), (-1, 5)])
def test_blocked_quantize_dequantize_of_a_runtime_tensor_matches_onnxruntime(tmp_path, ort, rng, axis, block):
    """QuantizeLinear then DequantizeLinear of a graph input with blocked uint8 scales and zero
    points along each axis of a [5, 7, 9] tensor (blocks that do not divide the axis)."""
    shape = [5, 7, 9]
    dims = list(shape)
    dims[axis] = (shape[axis] + block - 1) // block
    scale = numpy_helper.from_array(rng.uniform(0.02, 0.2, size=dims).astype(np.float32), "scale")
    zp = numpy_helper.from_array(rng.integers(0, 256, size=dims).astype(np.uint8), "zp")
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"], axis=axis, block_size=block),
             helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["y"], axis=axis, block_size=block)]
    path = tmp_path / "qdq.onnx"
    _save(path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
          [helper.make_tensor_value_info("q", TensorProto.UINT8, shape),
           helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], [scale, zp])
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    expected = _ort_run(ort, path, {"x": x})
    actual = ignis.InferenceSession(str(path)).run(None, {"x": x})
    assert_close(actual[0], expected[0], "blocked QuantizeLinear")
    assert_close(actual[1], expected[1], "blocked DequantizeLinear")


def test_wrong_blocked_scale_shape_is_a_clear_error(tmp_path, rng):
    w = rng.integers(-8, 8, size=(64, 8))
    inits = [_int4_tensor("W", w, True), numpy_helper.from_array(np.ones((3, 8), np.float32), "scale")]
    nodes = [helper.make_node("DequantizeLinear", ["W", "scale"], ["Y"], axis=0, block_size=32)]
    graph = helper.make_graph(nodes, "bad", [], [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    path = tmp_path / "bad.onnx"
    onnx.save(model, str(path))
    with pytest.raises(Exception, match=r"must have shape \[2, 8\] for blocks of 32 along axis 0"):
        ignis.InferenceSession(str(path)).run(None, {})


def test_onnxruntime_qdq_int4_quantizer_output_runs_as_matmul_nbits(tmp_path, ort, rng):
    """A two-layer MLP through onnxruntime's MatMulNBitsQuantizer with quant_format=QDQ (blocked
    int4 DequantizeLinear before each MatMul): ignis fuses both and matches onnxruntime."""
    quantizer = pytest.importorskip("onnxruntime.quantization.matmul_nbits_quantizer")
    from onnxruntime.quantization import QuantFormat

    w1 = (rng.standard_normal((96, 64)) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((64, 40)) * 0.2).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", 96])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", 40])],
                              [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    q = quantizer.MatMulNBitsQuantizer(model, block_size=32, is_symmetric=False, quant_format=QuantFormat.QDQ)
    q.process()
    path = tmp_path / "int4_qdq.onnx"
    q.model.save_model_to_file(str(path))
    written = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert written.count("DequantizeLinear") == 2, written

    ignis.optimize(path, tmp_path / "optimized.onnx", level="all")
    ops = [n.op_type for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node]
    assert ops.count("MatMulNBits") == 2 and "DequantizeLinear" not in ops, ops
    for m in (1, 6):
        x = rng.standard_normal((m, 96)).astype(np.float32)
        (expected,) = _ort_run(ort, path, {"x": x})
        (actual,) = ignis.InferenceSession(str(path)).run(None, {"x": x})
        assert_close(actual, expected, f"onnxruntime's QDQ int4 MLP, {m} rows")
