# SPDX-License-Identifier: Apache-2.0
"""Calibration reads the activations it observes in the blocked channel layout where the float
model runs blocked (16 channels a block): a 24-channel activation then has 8 padding lanes in
its last block. They hold zeros (a Sigmoid-fused convolution's too), which leave a min/max
range as it is (it includes 0) but would add a third more zeros to a histogram, moving a
percentile threshold. Expected: min/max ranges as onnxruntime computes the float model's values
on the same samples, and percentile ranges equal to those of the same calibration with every
tensor in NCHW (IGNIS_LAYOUT=nchw)."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ignis

SHAPE = [1, 8, 16, 16]


def _model(path):
    """x -> 1x1 (8 -> 24, weights and bias negative) -> Sigmoid -> s -> four 1x1 (24 -> 24) with
    ReLU -> GlobalAveragePool -> y."""
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def conv(x, y, cin, cout, w=None, b=None):
        w = (rng.standard_normal([cout, cin, 1, 1]) * 0.5).astype(np.float32) if w is None else w
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32) if b is None else b
        inits.extend([numpy_helper.from_array(w, f"{y}_w"), numpy_helper.from_array(b, f"{y}_b")])
        nodes.append(helper.make_node("Conv", [x, f"{y}_w", f"{y}_b"], [y]))

    conv("x", "c0", 8, 24, -np.abs(rng.standard_normal([24, 8, 1, 1])).astype(np.float32) * 0.1,
         np.full(24, -4.0, np.float32))
    nodes.append(helper.make_node("Sigmoid", ["c0"], ["s"]))
    previous = "s"
    for i in range(4):
        conv(previous, f"c{i + 1}", 24, 24)
        nodes.append(helper.make_node("Relu", [f"c{i + 1}"], [f"r{i + 1}"]))
        previous = f"r{i + 1}"
    nodes.append(helper.make_node("GlobalAveragePool", [previous], ["y"]))
    graph = helper.make_graph(nodes, "sigmoid_run", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _quantize_params(model):
    """{tensor quantized: (scale, zero point)} of each QuantizeLinear in the file."""
    graph = onnx.load(str(model)).graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    return {n.input[0]: (float(inits[n.input[1]]), int(inits[n.input[2]]))
            for n in graph.node if n.op_type == "QuantizeLinear"}


def test_blocked_activations_leave_their_padding_lanes_out_of_the_range(tmp_path, ort, monkeypatch):
    _model(tmp_path / "float.onnx")
    folder = tmp_path / "calibration"
    folder.mkdir()
    rng = np.random.default_rng(1)
    samples = [rng.uniform(0.0, 1.0, SHAPE).astype(np.float32) for _ in range(8)]
    for i, x in enumerate(samples):
        np.save(folder / f"{i:02d}.npy", x)

    # The observed ranges as onnxruntime computes the float model's values.
    observed = ["s", "r1", "r2", "r3"]
    model = onnx.load(str(tmp_path / "float.onnx"))
    model.graph.output.extend([helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in observed])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    values = [session.run(observed, {"x": x}) for x in samples]
    top = {n: max(float(v[k].max()) for v in values) for k, n in enumerate(observed)}
    assert top["s"] < 0.05  # far below the padding lanes' 0.5

    def quantize(layout, method):
        if layout == "nchw":
            monkeypatch.setenv("IGNIS_LAYOUT", "nchw")
        else:
            monkeypatch.delenv("IGNIS_LAYOUT", raising=False)
        out = tmp_path / f"{layout}_{method}.onnx"
        ignis.quantize(tmp_path / "float.onnx", out, calibrate=folder, method=method, percentile=60.0, progress=False)
        return _quantize_params(out)

    for layout in ("blocked", "nchw"):
        params = quantize(layout, "minmax")
        for name in observed:
            # Non-negative values: the range is [0, max], 255 steps of int8 from -128.
            scale, zero = params[name]
            assert zero == -128, (layout, name, zero)
            np.testing.assert_allclose(scale, top[name] / 255, rtol=1e-5, err_msg=f"{layout}: {name}")

    blocked, nchw = quantize("blocked", "percentile"), quantize("nchw", "percentile")
    for name in observed:
        assert blocked[name][0] < top[name] / 255  # the percentile clipped the range
        # One histogram bin (1/2048 of the largest |x|) of rounding apart at most.
        np.testing.assert_allclose(blocked[name][0], nchw[name][0], rtol=2e-3, err_msg=name)
