# SPDX-License-Identifier: Apache-2.0
"""Parity on the broad model set: ignis against onnxruntime, as test_parity does for the zoo.

    /usr/bin/python3 tools/make_broad_set.py --out models/broad     # not committed
    IGNIS_BIN=build/ignis python3 -m pytest -q tests/models/test_broad_set.py -rs

Every model tools/make_broad_set.py knows is a case; one not generated is skipped with the
command that makes it.  Inputs come from the sidecar (tools/make_inputs.py, seed 0); the
tolerance is test_parity's (|d| <= 1e-4 + 1e-3 |onnxruntime|, integer outputs exact).

Environment: IGNIS_BIN, IGNIS_BROAD_DIR (default: models/broad).
"""

import json
import os
import sys

import pytest

from test_parity import ROOT, SEED, _require_ignis, check_outputs, make_inputs, run_ignis, run_onnxruntime

sys.path.insert(0, str(ROOT / "tools"))
from make_broad_set import MODELS  # noqa: E402

BROAD_DIR = ROOT / os.environ.get("IGNIS_BROAD_DIR", "models/broad")


@pytest.mark.parametrize("name", list(MODELS))
def test_broad_parity(name, tmp_path, parity_log):
    model, sidecar = BROAD_DIR / f"{name}.onnx", BROAD_DIR / f"{name}.json"
    if not (model.is_file() and sidecar.is_file()):
        reason = (f"{model.name} not in {BROAD_DIR}; generate with: /usr/bin/python3 "
                  f"tools/make_broad_set.py --out {BROAD_DIR} --only {name}")
        parity_log(f"parity {name}: SKIPPED ({reason})")
        pytest.skip(reason)
    exe = _require_ignis(name, parity_log)
    with open(sidecar) as f:
        feeds = make_inputs(json.load(f), seed=SEED)
    want, t_ort = run_onnxruntime(model, feeds)
    got, t_ignis = run_ignis(exe, model, feeds, tmp_path)
    check_outputs(name, got, want, parity_log, f"ignis {t_ignis:.2f} s, onnxruntime {t_ort:.3f} s")
