# SPDX-License-Identifier: Apache-2.0
"""Running ignis and its peers on one model, for bench/compare and bench/broad.py.

Every run is a fresh process (`ignis bench --json`, or bench/peer_runner.py for onnxruntime
and OpenVINO) that prints one JSON line with the same fields; `measure` interleaves the
engines over rounds, alternating their order, and keeps the medians.
"""

import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
from make_inputs import make_inputs  # noqa: E402


def have(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def write_inputs(spec, folder, seed=0, batch=None):
    """Writes one NAME.npy per model input of the sidecar `spec` (tools/make_inputs.py)."""
    import numpy as np
    for k, v in make_inputs(spec, seed=seed, batch=batch).items():
        np.save(os.path.join(folder, k + ".npy"), v)


def input_args(folder):
    """`--input NAME=FILE` for every .npy in folder, as the ignis CLI takes them."""
    args = []
    for f in sorted(os.listdir(folder)):
        if f.endswith(".npy"):
            args += ["--input", f"{f[:-4]}={os.path.join(folder, f)}"]
    return args


# Every engine keeps warming up for this long before it is timed: on an idle machine the CPU's
# clock ramps up over the first fraction of a second, and a fast engine started in a fresh
# process would otherwise time the ramp (mobilenet_v2 in ignis: 2.8 ms after 3 warm-up runs,
# 1.7 ms after 300), while a peer whose Python import kept the CPU busy would not.
WARMUP_SECONDS = 1.0


def tuning_args(cache):
    """ignis's kernel choice in a benchmark: the tuning cache `ignis tune` measured for this
    run (tune_ignis), else the built-in rules; never a cache left in the user's home."""
    return ["--tuning-cache", cache] if cache else ["--tuning", "off"]


def symbolic_dims(model, folder):
    """`--dim NAME=VALUE` for each symbolic dim of the model's inputs, as the arrays in folder have it."""
    import numpy as np
    import onnx
    args = {}
    for inp in onnx.load(model, load_external_data=False).graph.input:
        path = os.path.join(folder, inp.name + ".npy")
        if not os.path.exists(path):
            continue
        shape = np.load(path, mmap_mode="r").shape
        for axis, d in enumerate(inp.type.tensor_type.shape.dim):
            if d.dim_param and axis < len(shape):
                args[d.dim_param] = shape[axis]
    return [a for k, v in args.items() for a in ("--dim", f"{k}={v}")]


def tune_ignis(binary, model, folder, threads, cache, precision="f32"):
    """`ignis tune` on the shapes of the inputs in folder, into the tuning cache file `cache`
    (added to when it exists); returns the seconds it took."""
    start = time.monotonic()
    subprocess.run([binary, "tune", model, "--threads", str(threads), "--precision", precision, "--cache", cache]
                   + symbolic_dims(model, folder), check=True, capture_output=True, text=True)
    return time.monotonic() - start


def run_ignis(binary, model, folder, threads, runs, level="all", profile=None, precision="f32", tuning_cache=None):
    cmd = [binary, "bench", model, "--json", "--threads", str(threads), "--runs", str(runs), "--level", level,
           "--precision", precision, "--warmup-seconds", str(WARMUP_SECONDS)] + tuning_args(tuning_cache)
    if profile:
        cmd += ["--profile", profile]
    out = subprocess.run(cmd + input_args(folder), check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_peer(engine, model, folder, threads, runs, precision="default"):
    cmd = [sys.executable, os.path.join(HERE, "peer_runner.py"), "--engine", engine, "--model", model,
           "--inputs", folder, "--threads", str(threads), "--runs", str(runs), "--warmup-seconds", str(WARMUP_SECONDS)]
    if precision != "default":
        cmd += ["--precision", precision]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def measure(runners, rounds):
    """runners: engine -> f(round) returning one run's JSON (or None when it could not run).
    Runs every engine once per round, reversing the order on odd rounds, and returns
    engine -> medians over the rounds (None for an engine that never ran)."""
    engines = list(runners)
    results = {e: [] for e in engines}
    for r in range(rounds):
        for e in (engines if r % 2 == 0 else list(reversed(engines))):
            results[e].append(runners[e](r))
    summary = {}
    for e, rs in results.items():
        rs = [x for x in rs if x is not None]
        if not rs:
            summary[e] = None
            continue
        summary[e] = {
            "p50_ms": statistics.median(x["latency_ms"]["p50"] for x in rs),
            "p99_ms": statistics.median(x["latency_ms"]["p99"] for x in rs),
            "throughput_per_s": statistics.median(x["throughput_per_s"] for x in rs),
            "create_ms": statistics.median(x["session_create_ms"] for x in rs),
            "peak_rss_mib": statistics.median(x["peak_rss_bytes"] for x in rs) / 2**20,
        }
    return summary
