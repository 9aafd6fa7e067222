# SPDX-License-Identifier: Apache-2.0
"""`ignis run`, `inspect` and `bench` on models with string, sequence and optional values:
strings are generated and shown, containers must come from ONNX value files (--input
NAME=FILE.pb), and nothing crashes.

    IGNIS_BIN=build/ignis python3 -m pytest -q tests/models/test_cli_values.py
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_parity import _ignis_bin  # noqa: E402

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


@pytest.fixture(scope="module")
def ignis():
    exe = _ignis_bin()
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        pytest.skip(f"ignis binary {exe} does not exist (build it or set IGNIS_BIN)")
    return str(exe)


def _seq_type(shape):
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, shape))


def _save(tmp_path, nodes, inputs, outputs):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = tmp_path / "model.onnx"
    onnx.save(m, path)
    return str(path)


def _run(*args):
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def test_generated_strings_and_sequence_outputs(ignis, tmp_path):
    model = _save(
        tmp_path,
        [helper.make_node("SplitToSequence", ["x"], ["parts"], axis=0), helper.make_node("Identity", ["s"], ["t"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2]),
         helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
        [helper.make_value_info("parts", _seq_type([1, 2])), helper.make_tensor_value_info("t", TensorProto.STRING, [2])],
    )
    r = _run(ignis, "run", model)
    assert r.returncode == 0, r.stderr
    assert "sequence<float32>[3 items]" in r.stdout
    assert '["w' in r.stdout  # the generated strings are shown
    r = _run(ignis, "inspect", model)
    assert r.returncode == 0 and "seq(tensor(float))" in r.stdout, r.stdout + r.stderr
    r = _run(ignis, "bench", model, "--warmup", "1", "--runs", "3")
    assert r.returncode == 0, r.stderr
    # A sequence has no .npy form: a clear error, not a crash.
    r = _run(ignis, "run", model, "-o", str(tmp_path / "out"))
    assert r.returncode == 1 and "cannot write dtype sequence" in r.stderr, r.stderr


def test_sequence_input_comes_from_a_sequence_proto(ignis, tmp_path):
    model = _save(
        tmp_path,
        [helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0)],
        [helper.make_value_info("seq", _seq_type(["n"]))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m"])],
    )
    r = _run(ignis, "run", model)
    assert r.returncode != 0 and "SequenceProto" in r.stderr and "seq" in r.stderr, r.stderr
    items = [np.array([1, 2], np.float32), np.array([3, 4, 5], np.float32)]
    seq = numpy_helper.from_list(items, name="seq")
    (tmp_path / "seq.pb").write_bytes(seq.SerializeToString())
    out = tmp_path / "out"
    r = _run(ignis, "run", model, "--input", f"seq={tmp_path / 'seq.pb'}", "-o", str(out))
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(out / "y.npy"), np.concatenate(items))
