# SPDX-License-Identifier: Apache-2.0
"""Offline optimization of the zoo models: `ignis optimize` output still runs elsewhere.

    python3 -m pytest tests/models/test_optimize.py      # add -s for more detail

For every zoo model present in models/ (a missing one is skipped with the reason shown):

  * `ignis optimize MODEL -o OUT --level extended --report` must succeed, the written file
    must pass the ONNX checker, and onnxruntime must give the same outputs on it as on the
    original model (the tolerance of test_parity.py). Levels basic and extended emit standard
    ONNX ops only, so this is the contract that lets optimized files leave ignis.
  * `ignis optimize MODEL --level all --report` must succeed; its node count is reported.
    Level all emits ai.ignis ops that only ignis runs: `ignis run` on the written file must
    match onnxruntime on the original (the ai.ignis ops survive export and import;
    test_parity.py already checks `ignis run` on the original model).

One line per model: `optimize MODEL: nodes A -> B (extended), C (all); onnxruntime on
optimized: max_abs=...`.

Environment: IGNIS_BIN (default build/ignis), IGNIS_MODELS_DIR (default models/),
IGNIS_OPTIMIZE_TIMEOUT (seconds per ignis call, default 1800).
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_parity import (  # noqa: E402
    MAKE_ZOO_HINT,
    MODELS_DIR,
    SEED,
    _ignis_bin,
    _zoo_names,
    compare,
    make_inputs,
    run_ignis,
    run_onnxruntime,
)
from test_parity import ATOL, RTOL  # noqa: E402

TIMEOUT = float(os.environ.get("IGNIS_OPTIMIZE_TIMEOUT", "1800"))
_WROTE = re.compile(r"^wrote .*: (\d+) -> (\d+) nodes \(level (\w+)\)$", re.MULTILINE)


def run_optimize(exe, model, out, level):
    """Runs `ignis optimize --report`; returns (nodes before, nodes after, report text)."""
    cmd = [str(exe), "optimize", str(model), "-o", str(out), "--level", level, "--report"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ignis optimize did not finish within {TIMEOUT:.0f} s: {' '.join(cmd)}")
    if res.returncode != 0:
        pytest.fail(f"ignis optimize exited with {res.returncode}: {' '.join(cmd)}\n"
                    f"--- stdout ---\n{res.stdout[-4000:]}\n--- stderr ---\n{res.stderr[-4000:]}")
    m = _WROTE.search(res.stdout)
    assert m, f"unexpected `ignis optimize` output:\n{res.stdout[-2000:]}"
    assert m.group(3) == level
    return int(m.group(1)), int(m.group(2)), res.stdout


def ignis_ops(report):
    """ai.ignis op counts after optimization, from the --report table."""
    ops = {}
    for line in report.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith("ai.ignis.") and parts[2].isdigit():
            ops[parts[0][len("ai.ignis."):]] = int(parts[2])
    return ops


@pytest.mark.parametrize("name", _zoo_names())
def test_optimized_model_matches_onnxruntime(name, tmp_path, parity_log):
    model = MODELS_DIR / f"{name}.onnx"
    sidecar = MODELS_DIR / f"{name}.json"
    if not (model.is_file() and sidecar.is_file()):
        reason = f"{model.name} or {sidecar.name} missing in {MODELS_DIR}; {MAKE_ZOO_HINT} --only {name}"
        parity_log(f"optimize {name}: SKIPPED ({reason})")
        pytest.skip(reason)
    exe = _ignis_bin()
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        reason = f"ignis binary not found at {exe} (build it, or set IGNIS_BIN)"
        parity_log(f"optimize {name}: SKIPPED ({reason})")
        pytest.skip(reason)
    onnx = pytest.importorskip("onnx")

    # The zoo models keep their weights inline, so the written files are self-contained.
    extended = tmp_path / f"{name}.extended.onnx"
    before, after_ext, _ = run_optimize(exe, model, extended, "extended")
    every = tmp_path / f"{name}.all.onnx"
    before_all, after_all, report_all = run_optimize(exe, model, every, "all")
    assert before_all == before
    assert after_ext <= before and after_all <= after_ext

    onnx.checker.check_model(str(extended))
    with open(sidecar) as f:
        spec = json.load(f)
    feeds = make_inputs(spec, seed=SEED)
    want, _ = run_onnxruntime(model, feeds)
    got, _ = run_onnxruntime(extended, feeds)

    problems = []

    def diff(label, outputs):
        worst_abs = 0.0
        for out_name, b in want.items():
            a = outputs.get(out_name)
            if a is None or a.shape != b.shape or a.dtype != b.dtype:
                problems.append(f"{label} {out_name}: {None if a is None else (a.shape, a.dtype)} vs "
                                f"{(b.shape, b.dtype)}")
                continue
            ok, d_abs, _, worst = compare(a, b)
            worst_abs = max(worst_abs, d_abs)
            if not ok:
                problems.append(f"{label} {out_name}: max_abs={d_abs:.3g} ({worst:.3g} x tolerance)")
        return worst_abs

    ort_abs = diff("onnxruntime on the extended-level model:", got)
    ignis_got, _ = run_ignis(exe, every, feeds, tmp_path / "run")
    ignis_abs = diff("ignis on the all-level model:", ignis_got)
    fused = ", ".join(f"{op} {n}" for op, n in sorted(ignis_ops(report_all).items()))
    parity_log(f"optimize {name}: nodes {before} -> {after_ext} (extended), {after_all} (all); "
               f"onnxruntime on optimized: max_abs={ort_abs:.3g}; ignis on all-level file: "
               f"max_abs={ignis_abs:.3g}" + (f" [all: {fused}]" if fused else ""))
    if problems:
        pytest.fail(f"{name}: outputs differ from onnxruntime on the original beyond |d| <= {ATOL} + "
                    f"{RTOL}*|ref|:\n  " + "\n  ".join(problems))
