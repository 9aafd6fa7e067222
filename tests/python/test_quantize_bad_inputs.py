# SPDX-License-Identifier: Apache-2.0
"""`ignis quantize` on inputs it cannot honour: an accuracy budget that even the float model
misses fails and writes nothing; a model that is already quantized is refused in every mode;
a calibration sample that does not fit the model's input names the sample, the input, and
what was expected and got."""

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ignis

ROOT = Path(__file__).resolve().parents[2]


def _save(path, nodes, inits, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return path


def _two_matmuls(path, log=False):
    """x[n, 64] -> MatMul -> Relu -> MatMul -> y[n, 16]; with `log`, y = Log(MatMul), NaN for
    the negative products."""
    rng = np.random.default_rng(0)
    last = "z" if log else "y"
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", "w2"], [last], name="mm2"),
    ]
    if log:
        nodes.append(helper.make_node("Log", ["z"], ["y"], name="log"))
    inits = {
        "w1": rng.standard_normal((64, 32)).astype(np.float32),
        "w2": rng.standard_normal((32, 16)).astype(np.float32),
    }
    return _save(
        path, nodes, inits,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 16])],
    )


@pytest.fixture
def model(tmp_path):
    return _two_matmuls(tmp_path / "float.onnx")


@pytest.fixture
def samples(tmp_path):
    folder = tmp_path / "calibration"
    folder.mkdir()
    rng = np.random.default_rng(1)
    for i in range(4):
        np.save(folder / f"{i}.npy", rng.standard_normal((2, 64)).astype(np.float32))
    return folder


def _exe():
    exe = os.environ.get("IGNIS_BIN", str(ROOT / "build" / "ignis"))
    if not Path(exe).is_file():
        pytest.skip(f"{exe} not built (set IGNIS_BIN)")
    return exe


# --- an accuracy budget that cannot be met ---------------------------------------------------


def test_a_budget_the_float_model_misses_fails_and_keeps_the_old_output(tmp_path, model, samples):
    """A metric that is 1 whatever the model: no choice of nodes meets 0.5, not even all float."""
    out = tmp_path / "out.onnx"
    out.write_bytes(b"an earlier file")
    with pytest.raises(
        ignis.InvalidArgument,
        match=r"the accuracy budget --max-drop 0\.5 cannot be met: with 2 of 2 nodes float32 the loss is 1; "
        r"nothing was written",
    ):
        ignis.quantize(model, out, calibrate=samples, progress=False, max_drop=0.5, metric=lambda f, q: 1.0)
    assert out.read_bytes() == b"an earlier file"


def test_cli_budget_on_nan_outputs_exits_non_zero_without_claiming_it_holds(tmp_path, samples):
    """The float model's outputs hold NaN, so the cosine loss is NaN for every choice of nodes."""
    model = _two_matmuls(tmp_path / "nan.onnx", log=True)
    out = tmp_path / "out.onnx"
    res = subprocess.run(
        [_exe(), "quantize", str(model), "-o", str(out), "--calibrate", str(samples), "--max-drop", "0.01",
         "--metric", "cosine"],
        capture_output=True, text=True,
    )
    assert res.returncode != 0, res.stdout
    assert "the accuracy budget --max-drop 0.01 cannot be met: with 2 of 2 nodes float32 the loss is nan" in res.stderr
    assert "the float model's outputs are not finite on the calibration samples" in res.stderr
    assert "<= 0.01" not in res.stdout + res.stderr
    assert not out.exists()


def test_a_budget_met_only_with_every_node_float_writes_the_float_model(tmp_path, model, samples):
    """The metric is 0 only for the float model: every node stays float32, and the report says so."""
    def metric(float_outputs, quantized_outputs):
        return float(max(np.abs(f["y"] - q["y"]).max() for f, q in zip(float_outputs, quantized_outputs)))

    report = ignis.quantize(model, tmp_path / "out.onnx", calibrate=samples, progress=False, max_drop=0, metric=metric)
    assert report.accuracy_loss == 0
    assert report.decisions[-1] == "loss 0 <= 0 with 0 of 2 nodes quantized"
    assert sum("kept float32" in d for d in report.decisions) == 2


def test_cli_budget_met_only_with_every_node_float_reports_what_was_written(tmp_path, model, samples):
    """Any int8 node moves the cosine off 1, so --max-drop 0 keeps both nodes float32."""
    out = tmp_path / "out.onnx"
    res = subprocess.run(
        [_exe(), "quantize", str(model), "-o", str(out), "--calibrate", str(samples), "--max-drop", "0",
         "--metric", "cosine"],
        capture_output=True, text=True, check=True,
    )
    assert "0 activations quantized, calibrated on 4 samples" in res.stdout
    assert "GPTQ" not in res.stdout
    assert "loss 0 <= 0 with 0 of 2 nodes quantized" in res.stdout
    assert out.exists()


# --- an already-quantized model ----------------------------------------------------------------


@pytest.fixture
def quantized(tmp_path, model, samples):
    """The float model quantized by each mode that writes quantized ops."""
    paths = {}
    for name, kwargs in [("int8", dict(mode="int8")), ("dynamic", dict(mode="dynamic")),
                         ("int4", dict(mode="int4")), ("static", dict(calibrate=samples, progress=False))]:
        paths[name] = tmp_path / f"{name}.onnx"
        ignis.quantize(model, paths[name], **kwargs)
    return paths


FOUND = {
    "int8": r"it holds 1 DequantizeLinear node;",
    "dynamic": r"it holds 1 DynamicQuantizeLinear, 1 MatMulInteger nodes;",
    "int4": r"it holds 1 MatMulNBits node;",
    "static": r"it holds (\d+ (QuantizeLinear|DequantizeLinear)(, )?){2} nodes;",
}
AGAIN = [dict(mode="int8"), dict(mode="fp16"), dict(mode="dynamic"), dict(mode="int4"), dict(calibrate=True),
         dict(calibrate=True, mode="int4")]


@pytest.mark.parametrize("written_by", sorted(FOUND))
@pytest.mark.parametrize("again", AGAIN, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
def test_an_already_quantized_model_is_refused_in_every_mode(tmp_path, quantized, samples, written_by, again):
    kwargs = {k: samples if k == "calibrate" else v for k, v in again.items()}
    out = tmp_path / "again.onnx"
    source = quantized[written_by]
    expected = rf"'{re.escape(str(source))}' is already quantized: {FOUND[written_by]} quantize the float model instead"
    with pytest.raises(ignis.InvalidArgument, match=expected):
        ignis.quantize(source, out, progress=False, **kwargs)
    assert not out.exists()


def test_integer_ops_of_other_tools_are_named(tmp_path):
    """A ConvInteger model as onnxruntime's quantize_dynamic writes for Conv (uint8 input, int8 weight)."""
    w = np.ones((4, 3, 3, 3), np.int8)
    model = _save(
        tmp_path / "conv_integer.onnx",
        [helper.make_node("ConvInteger", ["x", "w"], ["y"], name="conv")],
        {"w": w},
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 4, 6, 6])],
    )
    with pytest.raises(ignis.InvalidArgument,
                       match=r"is already quantized: it holds 1 ConvInteger node; quantize the float model instead"):
        ignis.quantize(model, tmp_path / "out.onnx", mode="fp16", min_elements=0)


def test_cli_refuses_an_already_quantized_model(tmp_path, quantized):
    out = tmp_path / "again.onnx"
    res = subprocess.run([_exe(), "quantize", str(quantized["int8"]), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode != 0, res.stdout
    assert (f"'{quantized['int8']}' is already quantized: it holds 1 DequantizeLinear node; "
            "quantize the float model instead") in res.stderr
    assert not out.exists()


# --- calibration samples that do not fit the model -----------------------------------------


def _bad_sample(folder, layout, array):
    folder.mkdir()
    if layout == "npy":
        np.save(folder / "0.npy", array)
        return folder / "0.npy"
    if layout == "npz":
        np.savez(folder / "0.npz", x=array)
        return folder / "0.npz"
    sample = folder / "test_data_set_0"
    sample.mkdir()
    (sample / "input_0.pb").write_bytes(numpy_helper.from_array(array, "x").SerializeToString())
    return sample


@pytest.mark.parametrize("layout", ["npy", "npz", "pb"])
@pytest.mark.parametrize(
    "array, message",
    [
        (np.ones((2, 64), np.int64), "input 'x' must be float32, got int64"),
        (np.ones((2, 64), np.float64), "input 'x' must be float32, got float64"),
        (np.ones((2, 2, 64), np.float32), r"input 'x' must have shape \[n, 64\], got \[2, 2, 64\]"),
        (np.ones((2, 63), np.float32), r"input 'x' must have shape \[n, 64\], got \[2, 63\]"),
    ],
)
@pytest.mark.parametrize("mode", ["static", "int4"])
def test_a_sample_that_does_not_fit_names_the_file_the_input_and_the_mismatch(tmp_path, model, layout, array,
                                                                              message, mode):
    sample = _bad_sample(tmp_path / "data", layout, array)
    out = tmp_path / "out.onnx"
    with pytest.raises(ignis.InvalidArgument, match=rf"calibration sample '{re.escape(str(sample))}': {message}"):
        ignis.quantize(model, out, calibrate=tmp_path / "data", mode=mode, progress=False)
    assert not out.exists()
