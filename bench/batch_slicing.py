#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Batch slicing A/B: time per image at batch 1 and at larger batches, with the wide early
layers run slice by slice (the default) and layer by layer (IGNIS_BATCH_SLICING=0).

Each configuration runs `ignis bench` in a fresh process; rounds alternate the configurations
so that machine load falls on all of them alike; the figure is the median over rounds of each
process's median latency, divided by the batch.

  python3 bench/batch_slicing.py [--models mobilenet_v2 resnet50] [--batches 1 8] [--rounds 3]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def bench_once(ignis, model, batch, threads, seconds, slicing):
    env = dict(os.environ, IGNIS_BATCH_SLICING="1" if slicing else "0")
    cmd = [ignis, "bench", model, "--batch", str(batch), "-t", str(threads), "-s", str(seconds), "--json"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    r = json.loads(out.stdout)
    return r["latency_ms"]["p50"], r["activation_arena_bytes"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ignis", default=os.path.join(ROOT, "build", "ignis"))
    ap.add_argument("--models", nargs="+", default=["mobilenet_v2", "resnet50"])
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()

    configs = [(b, s) for b in a.batches for s in ((True,) if b == 1 else (False, True))]
    results = {}
    for model in a.models:
        path = model if model.endswith(".onnx") else os.path.join(ROOT, "models", model + ".onnx")
        times = {c: [] for c in configs}
        for _ in range(a.rounds):
            for c in configs:
                p50, _ = bench_once(a.ignis, path, c[0], a.threads, a.seconds, c[1])
                times[c].append(p50 / c[0])
        med = {c: statistics.median(v) for c, v in times.items()}
        results[model] = {f"b{b}{'' if b == 1 else ('_sliced' if s else '_layerwise')}": round(med[(b, s)], 4)
                          for (b, s) in configs}
    print(f"CPU: {cpu_model()}, {a.threads} threads, {a.rounds} rounds; ms per image (median of rounds)")
    for model, r in results.items():
        line = "  ".join(f"{k} {v:.3f}" for k, v in r.items())
        print(f"{model:16s} {line}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cpu": cpu_model(), "threads": a.threads, "rounds": a.rounds, "ms_per_image": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
