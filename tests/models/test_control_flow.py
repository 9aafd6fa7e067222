# SPDX-License-Identifier: Apache-2.0
"""Control flow against onnxruntime: TorchScript models with a data-dependent If (branches of
different shapes), a Loop with an early exit, and a Loop whose body holds an If, each run on
inputs that take every path.

The models are exported by tools/export_control_flow.py under Debian's /usr/bin/python3 (where
torch lives) into a temporary folder; ignis runs through its command line as in test_parity.
"""
import subprocess
from pathlib import Path

import numpy as np
import pytest

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
