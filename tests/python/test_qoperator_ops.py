# SPDX-License-Identifier: Apache-2.0
"""onnxruntime's QOperator contrib ops that ignis expands into their QDQ form
(passes/expand_qoperator_ops.cc): QGemm, QLinearSoftmax, QLinearConcat, QLinearAveragePool,
QLinearSigmoid, QLinearLeakyRelu and QLinearWhere, each alone in a model, uint8 and int8,
against onnxruntime's own kernels on the same file, with optimization off and at level all
(where the fusions take the expanded form back to integer kernels).

onnxruntime's kernels round once from their integer sums (QGemm) or use tables of
exponentials (QLinearSoftmax); the QDQ form rounds through float32, so a value may land one
quantization step away: quantized outputs must be within one step everywhere and equal in at
least 90% of the elements."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ignis

MS = "com.microsoft"
LEVELS = {"none": ignis.GraphOptimizationLevel.ORT_DISABLE_ALL, "all": ignis.GraphOptimizationLevel.ORT_ENABLE_ALL}


def _type(dtype):
    return TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8


def _save(tmp_path, nodes, inputs, outputs, inits, opset=13):
    graph = helper.make_graph(nodes, "qop", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


def _scalar(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def _random_q(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def _run_all(ort, path, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    want = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = {}
    for level, value in LEVELS.items():
        opts = ignis.SessionOptions()
        opts.graph_optimization_level = value
        (got[level],) = ignis.InferenceSession(str(path), sess_options=opts).run(None, feeds)
    return want, got


def _assert_within_one_step(got, want, what):
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
    assert diff.max() <= 1, f"{what}: {int(diff.max())} steps off at {np.unravel_index(diff.argmax(), diff.shape)}"
    assert (diff == 0).mean() >= 0.9, f"{what}: only {(diff == 0).mean():.2f} of the values equal"


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("case", ["per_column", "per_tensor", "trans_b", "no_bias", "alpha", "float_output", "trans_a"])
def test_qgemm_matches_onnxruntime(ort, rng, tmp_path, dtype, case):
    m, k, n = 5, 37, 11
    trans_a, trans_b = case == "trans_a", case == "trans_b"
    a = _random_q(rng, (k, m) if trans_a else (m, k), dtype)
    b = _random_q(rng, (n, k) if trans_b else (k, n), np.int8)
    b_scale = (rng.uniform(0.002, 0.01, n) if case != "per_tensor" else np.array(0.005)).astype(np.float32)
    b_zp = np.zeros(b_scale.shape, np.int8)
    a_zp = 7 if dtype == np.uint8 else -3
    inputs = ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp"]
    inits = [_scalar("a_scale", 0.03, np.float32), _scalar("a_zp", a_zp, dtype), numpy_helper.from_array(b, "B"),
             numpy_helper.from_array(b_scale, "b_scale"), numpy_helper.from_array(b_zp, "b_zp")]
    if case != "no_bias":
        inputs.append("C")
        inits.append(numpy_helper.from_array(rng.integers(-2000, 2000, n).astype(np.int32), "C"))
    float_output = case == "float_output"
    if not float_output:
        if case == "no_bias":
            inputs.append("")
        inputs += ["y_scale", "y_zp"]
        inits += [_scalar("y_scale", 0.04, np.float32), _scalar("y_zp", 120 if dtype == np.uint8 else 5, dtype)]
    attrs = {"transA": int(trans_a), "transB": int(trans_b)}
    if case == "alpha":
        attrs["alpha"] = 0.5
    node = helper.make_node("QGemm", inputs, ["Y"], domain=MS, **attrs)
    out_type = TensorProto.FLOAT if float_output else _type(dtype)
    path = _save(tmp_path, [node], [helper.make_tensor_value_info("A", _type(dtype), list(a.shape))],
                 [helper.make_tensor_value_info("Y", out_type, [m, n])], inits)
    want, got = _run_all(ort, path, {"A": a})
    for level, y in got.items():
        if float_output:
            np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5, err_msg=level)
        else:
            _assert_within_one_step(y, want, f"QGemm {case} {dtype.__name__} level {level}")


def _unary_model(tmp_path, op, x_shape, dtype, attrs, x_zp, y_scale, y_zp, opset=13):
    node = helper.make_node(op, ["X", "x_scale", "x_zp", "y_scale", "y_zp"], ["Y"], domain=MS, **attrs)
    inits = [_scalar("x_scale", 0.05, np.float32), _scalar("x_zp", x_zp, dtype), _scalar("y_scale", y_scale, np.float32),
             _scalar("y_zp", y_zp, dtype)]
    return _save(tmp_path, [node], [helper.make_tensor_value_info("X", _type(dtype), list(x_shape))],
                 [helper.make_tensor_value_info("Y", _type(dtype), list(x_shape))], inits, opset)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("op,attrs,y_scale", [("QLinearSigmoid", {}, 1 / 256), ("QLinearLeakyRelu", {"alpha": 0.1}, 0.05)])
def test_elementwise_ops_match_onnxruntime(ort, rng, tmp_path, dtype, op, attrs, y_scale):
    x_zp, y_zp = (128, 0 if op == "QLinearSigmoid" else 100) if dtype == np.uint8 else (0, -128 if op == "QLinearSigmoid" else -20)
    x = _random_q(rng, (2, 3, 17), dtype)
    path = _unary_model(tmp_path, op, x.shape, dtype, attrs, x_zp, y_scale, y_zp)
    want, got = _run_all(ort, path, {"X": x})
    for level, y in got.items():
        _assert_within_one_step(y, want, f"{op} {dtype.__name__} level {level}")


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("axis", [-1, 1])
def test_qlinear_softmax_matches_onnxruntime(ort, rng, tmp_path, dtype, axis):
    x = _random_q(rng, (2, 5, 33), dtype)
    y_zp = 0 if dtype == np.uint8 else -128
    path = _unary_model(tmp_path, "QLinearSoftmax", x.shape, dtype, {"axis": axis, "opset": 13},
                        0 if dtype == np.uint8 else -10, 1 / 256, y_zp)
    want, got = _run_all(ort, path, {"X": x})
    for level, y in got.items():
        _assert_within_one_step(y, want, f"QLinearSoftmax axis {axis} {dtype.__name__} level {level}")


def test_qlinear_softmax_before_opset_13_normalizes_the_trailing_axes(ort, rng, tmp_path):
    # Softmax-12 semantics (the model is opset 12 too): axis 1 of [2, 5, 7] normalizes over 35 values.
    x = _random_q(rng, (2, 5, 7), np.uint8)
    path = _unary_model(tmp_path, "QLinearSoftmax", x.shape, np.uint8, {"axis": 1, "opset": 12}, 0, 1 / 256, 0,
                        opset=12)
    want, got = _run_all(ort, path, {"X": x})
    for level, y in got.items():
        _assert_within_one_step(y, want, f"QLinearSoftmax opset 12 level {level}")


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_qlinear_average_pool_matches_onnxruntime(ort, rng, tmp_path, dtype, count_include_pad):
    x = _random_q(rng, (1, 4, 9, 11), dtype)
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": count_include_pad}
    node = helper.make_node("QLinearAveragePool", ["X", "x_scale", "x_zp", "y_scale", "y_zp"], ["Y"], domain=MS, **attrs)
    zp = 10 if dtype == np.uint8 else -7
    inits = [_scalar("x_scale", 0.05, np.float32), _scalar("x_zp", zp, dtype), _scalar("y_scale", 0.03, np.float32),
             _scalar("y_zp", zp, dtype)]
    path = _save(tmp_path, [node], [helper.make_tensor_value_info("X", _type(dtype), list(x.shape))],
                 [helper.make_tensor_value_info("Y", _type(dtype), [1, 4, 5, 6])], inits)
    want, got = _run_all(ort, path, {"X": x})
    for level, y in got.items():
        _assert_within_one_step(y, want, f"QLinearAveragePool {dtype.__name__} level {level}")


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("same_scales", [False, True])
def test_qlinear_concat_matches_onnxruntime(ort, rng, tmp_path, dtype, same_scales):
    shapes = [(2, 3, 5), (2, 1, 5), (2, 4, 5)]
    xs = [_random_q(rng, s, dtype) for s in shapes]
    scales = [0.04, 0.04, 0.04] if same_scales else [0.02, 0.05, 0.031]
    zps = ([3, 3, 3] if same_scales else [0, 17, 130]) if dtype == np.uint8 else ([-1, -1, -1] if same_scales else [0, 9, -40])
    inputs = ["y_scale", "y_zp"]
    inits = [_scalar("y_scale", 0.04, np.float32), _scalar("y_zp", zps[0], dtype)]
    for i in range(3):
        inputs += [f"X{i}", f"s{i}", f"z{i}"]
        inits += [_scalar(f"s{i}", scales[i], np.float32), _scalar(f"z{i}", zps[i], dtype)]
    node = helper.make_node("QLinearConcat", inputs, ["Y"], domain=MS, axis=1)
    path = _save(tmp_path, [node], [helper.make_tensor_value_info(f"X{i}", _type(dtype), list(s)) for i, s in enumerate(shapes)],
                 [helper.make_tensor_value_info("Y", _type(dtype), [2, 8, 5])], inits)
    want, got = _run_all(ort, path, {f"X{i}": x for i, x in enumerate(xs)})
    for level, y in got.items():
        _assert_within_one_step(y, want, f"QLinearConcat {dtype.__name__} level {level}")


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_where_matches_onnxruntime(ort, rng, tmp_path, dtype):
    cond = rng.integers(0, 2, (3, 1, 6)).astype(bool)
    x = _random_q(rng, (3, 4, 6), dtype)
    y = _random_q(rng, (1, 4, 6), dtype)
    zp = (5, 200, 128) if dtype == np.uint8 else (5, -100, 0)
    inputs = ["cond", "X", "x_scale", "x_zp", "Y", "y_scale", "y_zp", "z_scale", "z_zp"]
    inits = [_scalar("x_scale", 0.02, np.float32), _scalar("x_zp", zp[0], dtype), _scalar("y_scale", 0.07, np.float32),
             _scalar("y_zp", zp[1], dtype), _scalar("z_scale", 0.05, np.float32), _scalar("z_zp", zp[2], dtype)]
    node = helper.make_node("QLinearWhere", inputs, ["Z"], domain=MS)
    path = _save(tmp_path, [node], [helper.make_tensor_value_info("cond", TensorProto.BOOL, list(cond.shape)),
                                    helper.make_tensor_value_info("X", _type(dtype), list(x.shape)),
                                    helper.make_tensor_value_info("Y", _type(dtype), list(y.shape))],
                 [helper.make_tensor_value_info("Z", _type(dtype), [3, 4, 6])], inits)
    want, got = _run_all(ort, path, {"cond": cond, "X": x, "Y": y})
    for level, z in got.items():
        _assert_within_one_step(z, want, f"QLinearWhere {dtype.__name__} level {level}")


def test_qgemm_with_an_unsupported_bias_shape_names_the_node(tmp_path):
    # C of one entry per row ([M, 1]) under per-column scales has no dequantized form.
    b_scale = np.array([0.01, 0.02, 0.03], np.float32)
    inits = [_scalar("a_scale", 0.03, np.float32), _scalar("a_zp", 0, np.uint8),
             numpy_helper.from_array(np.ones((4, 3), np.int8), "B"), numpy_helper.from_array(b_scale, "b_scale"),
             numpy_helper.from_array(np.zeros(3, np.int8), "b_zp"), numpy_helper.from_array(np.ones((2, 1), np.int32), "C")]
    node = helper.make_node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp", "C"], ["Y"], domain=MS,
                            name="head")
    path = _save(tmp_path, [node], [helper.make_tensor_value_info("A", TensorProto.UINT8, [2, 4])],
                 [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])], inits)
    with pytest.raises(Exception, match=r"node 'head' \(.*QGemm\).*per-column"):
        ignis.InferenceSession(str(path))
