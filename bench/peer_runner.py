#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times one engine on one model in this process and prints one JSON line.

    python3 bench/peer_runner.py --engine onnxruntime|openvino --model M.onnx --inputs DIR
                                 --threads 2 --runs 20 [--warmup 3]

Reports the same fields as `ignis bench --json`: session_create_ms, latency_ms (p50, p90,
p99, mean, min), throughput_per_s and peak_rss_bytes (VmHWM of this process), so that
bench/compare can put the engines side by side.  Inputs are the .npy files in DIR, named
after the model's inputs.
"""

import argparse
import glob
import json
import os
import sys
import time

import numpy as np


def peak_rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def load_inputs(folder):
    return {os.path.basename(p)[:-4]: np.load(p) for p in sorted(glob.glob(os.path.join(folder, "*.npy")))}


def make_onnxruntime(model, threads):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    return lambda feeds: sess.run(None, feeds)


def make_openvino(model, threads, precision="default"):
    import openvino as ov

    core = ov.Core()
    config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"}
    if precision == "f32":  # else OpenVINO's default: bf16 where the CPU has AVX512_BF16 or AMX
        config["INFERENCE_PRECISION_HINT"] = "f32"
    compiled = core.compile_model(model, "CPU", config)
    request = compiled.create_infer_request()
    return lambda feeds: request.infer(feeds)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", required=True, choices=["onnxruntime", "openvino"])
    ap.add_argument("--model", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--warmup-seconds", type=float, default=0.0, help="and keep warming up for at least this long")
    ap.add_argument("--precision", choices=["default", "f32"], default="default",
                    help="openvino only: its default inference precision, or f32 (INFERENCE_PRECISION_HINT)")
    args = ap.parse_args()

    feeds = load_inputs(args.inputs)
    t0 = time.perf_counter()
    if args.engine == "onnxruntime":
        run = make_onnxruntime(args.model, args.threads)
    else:
        run = make_openvino(args.model, args.threads, args.precision)
    create_ms = (time.perf_counter() - t0) * 1e3
    start, done = time.perf_counter(), 0
    while done < args.warmup or time.perf_counter() - start < args.warmup_seconds:
        run(feeds)
        done += 1
    lat = []
    for _ in range(args.runs):
        t = time.perf_counter()
        run(feeds)
        lat.append((time.perf_counter() - t) * 1e3)
    lat = np.array(lat)
    batch = next(iter(feeds.values())).shape[0] if feeds else 1
    print(json.dumps({
        "engine": args.engine,
        "model": args.model,
        "threads": args.threads,
        "batch": int(batch),
        "runs": args.runs,
        "session_create_ms": create_ms,
        "latency_ms": {k: float(v) for k, v in (("p50", np.percentile(lat, 50)), ("p90", np.percentile(lat, 90)),
                                                 ("p99", np.percentile(lat, 99)), ("mean", lat.mean()), ("min", lat.min()))},
        "throughput_per_s": float(batch * 1e3 / lat.mean()),
        "peak_rss_bytes": peak_rss_bytes(),
    }))


if __name__ == "__main__":
    sys.exit(main())
