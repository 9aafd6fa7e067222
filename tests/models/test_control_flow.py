# SPDX-License-Identifier: Apache-2.0
"""Control flow against onnxruntime: TorchScript models with a data-dependent If (branches of
different shapes), a Loop with an early exit, and a Loop whose body holds an If, each run on
inputs that take every path.

The models are exported by tools/export_control_flow.py under Debian's /usr/bin/python3 (where
torch lives) into a temporary folder; ignis runs through its command line as in test_parity.

`ignis optimize` works inside the bodies too: at level extended its output must still pass the
ONNX checker and give onnxruntime the original's outputs; at level all, ignis must run it to
the same outputs. A model built here with If nodes on constant conditions (given, folded, and
inside a Loop body) must optimize to a graph with no If left.
"""
import subprocess
from pathlib import Path

import numpy as np
import pytest

from test_optimize import run_optimize
from test_parity import ROOT, _require_ignis, compare, run_ignis, run_onnxruntime

DEBIAN_PYTHON = "/usr/bin/python3"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    out = tmp_path_factory.mktemp("control_flow")
    probe = subprocess.run([DEBIAN_PYTHON, "-c", "import torch"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"{DEBIAN_PYTHON} has no torch to export the models")
    res = subprocess.run([DEBIAN_PYTHON, str(ROOT / "tools" / "export_control_flow.py"), str(out)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]
    return out


rng = np.random.default_rng(7)
CASES = [
    ("if_data_dependent", "then", {"x": np.abs(rng.standard_normal((3, 6))).astype(np.float32)}),
    ("if_data_dependent", "else", {"x": -np.abs(rng.standard_normal((3, 6))).astype(np.float32)}),
    ("loop_decoder", "4 steps", {"x": rng.standard_normal((2, 8)).astype(np.float32), "steps": np.array(4)}),
    ("loop_decoder", "0 steps", {"x": rng.standard_normal((2, 8)).astype(np.float32), "steps": np.array(0)}),
    ("loop_decoder", "early exit", {"x": (50 * rng.standard_normal((2, 8))).astype(np.float32), "steps": np.array(1000)}),
    ("loop_with_if", "mixed branches", {"x": rng.standard_normal((4, 5)).astype(np.float32), "steps": np.array(6)}),
    ("loop_collect", "5 steps", {"x": rng.standard_normal((2, 6)).astype(np.float32), "steps": np.array(5)}),
    ("loop_collect", "0 steps", {"x": rng.standard_normal((2, 6)).astype(np.float32), "steps": np.array(0)}),
]


@pytest.mark.parametrize("name,path,feeds", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_control_flow_matches_onnxruntime(models, name, path, feeds, tmp_path, parity_log):
    exe = _require_ignis(name, parity_log)
    model = Path(models) / f"{name}.onnx"
    want, _ = run_onnxruntime(model, feeds)
    got, _ = run_ignis(exe, model, feeds, tmp_path)
    assert sorted(got) == sorted(want), f"outputs {sorted(got)} != onnxruntime's {sorted(want)}"
    for out_name, expected in want.items():
        assert got[out_name].shape == expected.shape, f"{out_name}: shape {got[out_name].shape} != {expected.shape}"
        ok, max_abs, _, worst = compare(got[out_name], expected)
        assert ok, f"{name} ({path}) output {out_name}: max abs diff {max_abs}, {worst:.2f}x the tolerance"
    parity_log(f"control flow {name} ({path}): matches onnxruntime")


def _assert_matches(got, want, what):
    assert sorted(got) == sorted(want), f"{what}: outputs {sorted(got)} != {sorted(want)}"
    for out_name, expected in want.items():
        assert got[out_name].shape == expected.shape, f"{what} {out_name}: shape {got[out_name].shape} != {expected.shape}"
        ok, max_abs, _, worst = compare(got[out_name], expected)
        assert ok, f"{what} output {out_name}: max abs diff {max_abs}, {worst:.2f}x the tolerance"


def _check_optimized(exe, model, feeds_list, tmp_path):
    """Optimizes `model` at levels extended and all; checks both against onnxruntime on the
    original for every feed. Returns the extended model (an onnx.ModelProto) and node counts."""
    onnx = pytest.importorskip("onnx")
    extended = tmp_path / f"{model.stem}.extended.onnx"
    before, after, _ = run_optimize(exe, model, extended, "extended")
    onnx.checker.check_model(str(extended), full_check=True)
    every = tmp_path / f"{model.stem}.all.onnx"
    run_optimize(exe, model, every, "all")
    for k, feeds in enumerate(feeds_list):
        want, _ = run_onnxruntime(model, feeds)
        got, _ = run_onnxruntime(extended, feeds)
        _assert_matches(got, want, f"onnxruntime on the optimized {model.stem} (feeds {k})")
        got, _ = run_ignis(exe, every, feeds, tmp_path / f"run{k}")
        _assert_matches(got, want, f"ignis on the level-all {model.stem} (feeds {k})")
    return onnx.load(str(extended)), before, after


@pytest.mark.parametrize("name", sorted({c[0] for c in CASES}))
def test_optimized_control_flow_matches_onnxruntime(models, name, tmp_path, parity_log):
    exe = _require_ignis(name, parity_log)
    feeds_list = [c[2] for c in CASES if c[0] == name]
    _, before, after = _check_optimized(exe, Path(models) / f"{name}.onnx", feeds_list, tmp_path)
    parity_log(f"control flow {name} optimized ({before} -> {after} nodes): matches onnxruntime")


def _constant_if_model():
    """x [3, 4] -> y: an If on an initializer condition whose branch has its own initializer;
    an If on a condition that folds (3 > 2) whose branch returns an outer value through
    Identity; a Loop whose body branches on an outer constant, the branch returning its own
    initializer."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    f = TensorProto.FLOAT

    def out(name):
        return helper.make_tensor_value_info(name, f, None)

    then1 = helper.make_graph([helper.make_node("Add", ["x", "bias"], ["t1"])], "then1", [], [out("t1")],
                              [numpy_helper.from_array(np.full((4,), 0.5, np.float32), "bias")])
    else1 = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e1"])], "else1", [], [out("e1")])
    then2 = helper.make_graph([helper.make_node("Identity", ["y1"], ["t2"])], "then2", [], [out("t2")])
    else2 = helper.make_graph([helper.make_node("Neg", ["y1"], ["e2"])], "else2", [], [out("e2")])
    k = numpy_helper.from_array((np.arange(12, dtype=np.float32) / 10).reshape(3, 4), "k")
    then3 = helper.make_graph([], "then3", [], [out("k")], [k])
    else3 = helper.make_graph([helper.make_node("Sigmoid", ["h_in"], ["e3"])], "else3", [], [out("e3")])
    body = helper.make_graph(
        [helper.make_node("If", ["flag"], ["b"], then_branch=then3, else_branch=else3),
         helper.make_node("Add", ["h_in", "b"], ["h_mid"]),
         helper.make_node("Tanh", ["h_mid"], ["h_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", f, [3, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("h_out", f, [3, 4])])
    nodes = [
        helper.make_node("If", ["cond"], ["y1"], then_branch=then1, else_branch=else1),
        helper.make_node("Greater", ["three", "two"], ["cond2"]),
        helper.make_node("If", ["cond2"], ["y2"], then_branch=then2, else_branch=else2),
        helper.make_node("Loop", ["trips", "", "y2"], ["y3"], body=body),
        helper.make_node("Mul", ["y3", "y1"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(True), "cond"), numpy_helper.from_array(np.array(True), "flag"),
             numpy_helper.from_array(np.array(3.0, np.float32), "three"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(3, np.int64), "trips")]
    graph = helper.make_graph(nodes, "constant_if", [helper.make_tensor_value_info("x", f, [3, 4])],
                              [helper.make_tensor_value_info("y", f, [3, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def _count_ops(graph, op_type):
    """Nodes of `op_type` in `graph` and every body nested in it."""
    n = 0
    for node in graph.node:
        n += node.op_type == op_type
        for attr in node.attribute:
            if attr.HasField("g"):
                n += _count_ops(attr.g, op_type)
    return n


def test_constant_condition_if_optimizes_away(tmp_path, parity_log):
    exe = _require_ignis("constant_if", parity_log)
    onnx = pytest.importorskip("onnx")
    model = _constant_if_model()
    assert _count_ops(model.graph, "If") == 3
    path = tmp_path / "constant_if.onnx"
    onnx.save(model, str(path))
    rng = np.random.default_rng(3)
    feeds_list = [{"x": rng.standard_normal((3, 4)).astype(np.float32)} for _ in range(2)]
    optimized, before, after = _check_optimized(exe, path, feeds_list, tmp_path)
    assert _count_ops(optimized.graph, "If") == 0, onnx.printer.to_text(optimized.graph)
    assert _count_ops(optimized.graph, "Loop") == 1
    parity_log(f"control flow constant_if optimized ({before} -> {after} nodes, no If): matches onnxruntime")
