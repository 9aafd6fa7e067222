# SPDX-License-Identifier: Apache-2.0
"""`ignis bench` inputs: files given with --input/--inputs are used (and checked, naming the
input), and generated integer inputs that index an embedding table stay inside it.

    IGNIS_BIN=build/ignis python3 -m pytest -q tests/models/test_bench_cli.py

Needs only the ignis binary (IGNIS_BIN, default build/ignis), numpy and onnx.
"""

import json
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
    return exe


def bench(exe, *args):
    cmd = [str(exe), "bench", *map(str, args), "--runs", "2", "--warmup", "1", "--threads", "1"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def embedding_model(tmp_path_factory):
    """BERT-style front: Gather over a 30-row word table by input_ids, and over a 2-row
    token-type table by token_type_ids reached through Cast and Unsqueeze."""
    rng = np.random.default_rng(0)
    word = numpy_helper.from_array(rng.standard_normal((30, 4)).astype(np.float32), "word")
    types = numpy_helper.from_array(rng.standard_normal((2, 4)).astype(np.float32), "types")
    axes = numpy_helper.from_array(np.array([0], dtype=np.int64), "axes")
    nodes = [
        helper.make_node("Gather", ["word", "input_ids"], ["we"]),
        helper.make_node("Cast", ["token_type_ids"], ["tt32"], to=TensorProto.INT32),
        helper.make_node("Unsqueeze", ["tt32", "axes"], ["tt"]),
        helper.make_node("Gather", ["types", "tt"], ["te"]),
        helper.make_node("Add", ["we", "te"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "embeddings",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "batch", "seq", 4])],
        [word, types, axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = tmp_path_factory.mktemp("bench") / "embeddings.onnx"
    onnx.save(model, path)
    return path


def test_generated_token_type_ids_stay_inside_a_two_row_table(ignis, embedding_model):
    for seed in (0, 1, 2):
        r = bench(ignis, embedding_model, "--dim", "seq=64", "--seed", seed)
        assert r.returncode == 0, r.stderr


def test_input_file_is_used(ignis, embedding_model, tmp_path):
    ok = tmp_path / "tt_ok.npy"
    np.save(ok, np.ones((1, 64), dtype=np.int64))
    r = bench(ignis, embedding_model, "--input", f"token_type_ids={ok}", "--dim", "seq=64", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["runs"] == 2

    # An index past the 2-row table can only come from the file: the run must reject it.
    bad = tmp_path / "tt_bad.npy"
    np.save(bad, np.full((1, 64), 5, dtype=np.int64))
    r = bench(ignis, embedding_model, "--input", f"token_type_ids={bad}", "--dim", "seq=64")
    assert r.returncode == 1
    assert "out of range" in r.stderr, r.stderr


def test_input_file_sets_the_batch(ignis, tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((4, 1, 8, 8), dtype=np.float32))
    r = bench(ignis, "--input", f"input={x}", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["batch"] == 4


def test_inputs_folder_of_npy_files(ignis, embedding_model, tmp_path):
    np.save(tmp_path / "input_ids.npy", np.zeros((3, 16), dtype=np.int64))
    np.save(tmp_path / "token_type_ids.npy", np.ones((3, 16), dtype=np.int64))
    r = bench(ignis, embedding_model, "--inputs", tmp_path, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["batch"] == 3


@pytest.mark.parametrize("array, expected", [
    (np.zeros((1, 1, 5, 5), dtype=np.float32), "input 'input' must have shape"),
    (np.zeros((1, 1, 8, 8), dtype=np.float64), "input 'input' must be float32"),
])
def test_wrong_file_is_rejected_naming_the_input(ignis, tmp_path, array, expected):
    f = tmp_path / "x.npy"
    np.save(f, array)
    r = bench(ignis, "--input", f"input={f}")
    assert r.returncode == 1
    assert expected in r.stderr, r.stderr


def test_missing_file_and_unknown_name_are_clear_errors(ignis, tmp_path):
    r = bench(ignis, "--input", f"input={tmp_path / 'absent.npy'}")
    assert r.returncode == 1
    assert "input 'input'" in r.stderr and "absent.npy" in r.stderr, r.stderr

    f = tmp_path / "x.npy"
    np.save(f, np.zeros((1, 1, 8, 8), dtype=np.float32))
    r = bench(ignis, "--input", f"pixels={f}")
    assert r.returncode == 1
    assert "unknown input 'pixels'" in r.stderr, r.stderr

    r = bench(ignis, "--inputs", tmp_path / "empty_folder_absent")
    assert r.returncode == 1
    assert "does not exist" in r.stderr, r.stderr


def test_help_documents_inputs_and_generated_indices(ignis):
    r = subprocess.run([str(ignis), "bench", "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0
    assert "--input" in r.stdout and "NAME.npy" in r.stdout and "Gather" in r.stdout


def test_precision_fp16_is_accepted_and_bad_values_list_the_choices(ignis, embedding_model, tmp_path):
    out = bench(ignis, embedding_model, "--dim", "batch=1", "--dim", "seq=3", "--precision", "fp16", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1])["precision"] == "fp16"
    bad = bench(ignis, embedding_model, "--precision", "fp8")
    assert bad.returncode != 0
    assert "fp8" in bad.stderr and "f32" in bad.stderr and "bf16" in bad.stderr and "fp16" in bad.stderr, bad.stderr
