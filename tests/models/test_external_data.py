# SPDX-License-Identifier: Apache-2.0
"""Models whose weights live in an external data file, through `ignis run` and `ignis optimize`.

    python3 -m pytest tests/models/test_external_data.py

A small Conv/BatchNormalization/MatMul model is written by onnx itself, once in one file and
once with `save_as_external_data=True, all_tensors_to_one_file=True, size_threshold=0`:

  * with float tensors at 4-byte aligned offsets (ignis maps them in place), and
  * behind a 5-byte int8 tensor, so every float tensor sits at an unaligned offset (ignis
    copies them into aligned buffers);

`ignis run` must give bit-identical outputs for all three files, equal to onnxruntime's within
the parity tolerance; `ignis optimize` must read the external-data model; a truncated data file
and a location outside the model folder must fail with a message naming tensor and file.

Environment: IGNIS_BIN (default build/ignis).
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_parity import _ignis_bin, compare, run_ignis, run_onnxruntime  # noqa: E402

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _model(with_odd_prefix):
    """y = MatMul(Flatten(Relu(BN(Conv(x)))), M) + A + sum(Cast(q)). With `with_odd_prefix`, the
    5-byte int8 tensor q is the first initializer, so onnx writes every float after it at an
    offset of 1 mod 4."""
    rng = np.random.default_rng(7)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    inits = [
        numpy_helper.from_array(np.array([3, -1, 4, 1, -5], dtype=np.int8), "q"),
        numpy_helper.from_array(f32(8, 3, 3, 3), "W"),
        numpy_helper.from_array(f32(8), "B"),
        numpy_helper.from_array(f32(8), "scale"),
        numpy_helper.from_array(f32(8), "bias"),
        numpy_helper.from_array(f32(8), "mean"),
        numpy_helper.from_array(np.abs(f32(8)) + 0.5, "var"),
        numpy_helper.from_array(f32(8 * 6 * 6, 16), "M"),
        numpy_helper.from_array(f32(16), "A"),
    ]
    if not with_odd_prefix:
        inits = inits[1:] + inits[:1]
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("Flatten", ["r"], ["f"]),
        helper.make_node("MatMul", ["f", "M"], ["mm"]),
        helper.make_node("Add", ["mm", "A"], ["ma"]),
        helper.make_node("Cast", ["q"], ["qf"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["qf"], ["qs"], keepdims=0),
        helper.make_node("Add", ["ma", "qs"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "external_data",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _save_external(model, path, location="weights.bin"):
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=location, size_threshold=0)


def _float_offsets(path):
    """Offsets of the float initializers in the external data file, as onnx wrote them."""
    m = onnx.load(str(path), load_external_data=False)
    out = []
    for t in m.graph.initializer:
        kv = {e.key: e.value for e in t.external_data}
        if t.data_type == TensorProto.FLOAT:
            out.append(int(kv.get("offset", 0)))
    return out


@pytest.fixture(scope="module")
def exe():
    e = _ignis_bin()
    if not e.is_file():
        pytest.skip(f"ignis binary not found at {e} (build it, or set IGNIS_BIN)")
    return e


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("external_data")
    paths = {}
    for name, odd in (("aligned", False), ("unaligned", True)):
        d = root / name
        d.mkdir()
        onnx.save_model(_model(odd), str(d / "single.onnx"))
        _save_external(_model(odd), d / "model.onnx")
        paths[name] = d
    assert all(o % 4 == 0 for o in _float_offsets(paths["aligned"] / "model.onnx"))
    assert all(o % 4 == 1 for o in _float_offsets(paths["unaligned"] / "model.onnx"))
    return paths


def _feeds():
    return {"x": np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)}


@pytest.mark.parametrize("layout", ["aligned", "unaligned"])
def test_run_matches_the_single_file_model(exe, models, layout, tmp_path):
    d = models[layout]
    feeds = _feeds()
    single, _ = run_ignis(exe, d / "single.onnx", feeds, tmp_path / "single")
    external, _ = run_ignis(exe, d / "model.onnx", feeds, tmp_path / "external")
    assert np.array_equal(single["y"], external["y"])
    want = run_onnxruntime(d / "model.onnx", feeds)[0]["y"]
    ok, max_abs, _, _ = compare(external["y"], want)
    assert ok, f"ignis vs onnxruntime: max_abs={max_abs}"


def test_optimize_reads_external_data(exe, models, tmp_path):
    d = models["aligned"]
    out = tmp_path / "opt.onnx"
    res = subprocess.run([str(exe), "optimize", str(d / "model.onnx"), "-o", str(out), "--level", "extended"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    onnx.checker.check_model(str(out))
    feeds = _feeds()
    got, _ = run_ignis(exe, out, feeds, tmp_path / "run")
    want = run_onnxruntime(d / "single.onnx", feeds)[0]["y"]
    ok, max_abs, _, _ = compare(got["y"], want)
    assert ok, f"optimized model vs onnxruntime: max_abs={max_abs}"


def _run_fails(exe, model):
    res = subprocess.run([str(exe), "run", str(model)], capture_output=True, text=True, timeout=600)
    assert res.returncode != 0
    return res.stderr


def test_truncated_data_file_is_a_clear_error(exe, tmp_path):
    _save_external(_model(False), tmp_path / "model.onnx")
    data = tmp_path / "weights.bin"
    data.write_bytes(data.read_bytes()[:-2])  # q, the last tensor, loses 2 of its 5 bytes
    err = _run_fails(exe, tmp_path / "model.onnx")
    assert "tensor 'q'" in err and "exceeds file 'weights.bin'" in err, err


def test_location_outside_the_model_folder_is_refused(exe, tmp_path):
    (tmp_path / "sub").mkdir()
    _save_external(_model(False), tmp_path / "model.onnx")
    m = onnx.load(str(tmp_path / "model.onnx"), load_external_data=False)
    for e in m.graph.initializer[0].external_data:
        if e.key == "location":
            e.value = "../weights.bin"
    onnx.save_model(m, str(tmp_path / "sub" / "model.onnx"))
    err = _run_fails(exe, tmp_path / "sub" / "model.onnx")
    assert "tensor 'W': external data location '../weights.bin' leaves the model folder" in err, err
