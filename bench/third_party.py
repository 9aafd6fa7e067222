#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Third-party pretrained models: ignis vs onnxruntime (and OpenVINO f32 when installed), float32.

    python3 bench/third_party.py [--models cls rec det] [--threads 2] [--rounds 3] [--runs 30]
                                 [--profile] [--json OUT.json]

The models are PaddleOCR's as the rapidocr_onnxruntime wheel ships them (paddle2onnx exports;
`pip install --no-deps rapidocr_onnxruntime`): the text-orientation classifier (cls), the
PP-OCRv4 recognizer (rec) and the PP-OCRv4 DBNet detector (det), each at one fixed input size
(SIZES, written into a copy of the model) with batch 1 and inputs uniform in [-1, 1] from a fixed seed (the range PaddleOCR's
normalization gives). Every engine runs in a fresh process per round (ignis through `ignis
bench --json`, the others through bench/peer_runner.py), in an order rotated by one each
round; reported are the medians over rounds of each round's p50 latency and ignis / peer
(below 1: ignis is faster). --profile then runs `ignis bench --profile` once per model and
prints the kernels taking the most time, flagging any reference kernel ("ref/") above 5 %:
those are the ops still without an optimized kernel.
"""

import argparse
import collections
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from quantized import add_common_args, median_times, run_ignis, run_peer  # noqa: E402
from recurrent import cpu_model  # noqa: E402

FILES = {
    "cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
    "rec": "ch_PP-OCRv4_rec_infer.onnx",
    "det": "ch_PP-OCRv4_det_infer.onnx",
}
# Input shapes: cls and rec at PaddleOCR's own (rapidocr config.yaml), det at a 640x640 page.
SIZES = {"cls": (1, 3, 48, 192), "rec": (1, 3, 48, 320), "det": (1, 3, 640, 640)}
REF_FLAG_SHARE = 0.05
TOP_KERNELS = 8


def model_path(name):
    # find_spec locates the package without importing it (its pipeline needs OpenCV).
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None:
        sys.exit("rapidocr_onnxruntime is missing: pip install --no-deps rapidocr_onnxruntime")
    return str(Path(spec.origin).parent / "models" / FILES[name])


def fixed_model(folder, name):
    """The model with its input's dims fixed to SIZES, so that no engine pays for dynamic
    shapes (OpenVINO compiles a dynamic model without static-shape optimizations)."""
    import onnx

    model = onnx.load(model_path(name))
    for dim, size in zip(model.graph.input[0].type.tensor_type.shape.dim, SIZES[name]):
        dim.Clear()
        dim.dim_value = size
    path = os.path.join(folder, name + ".onnx")
    onnx.save(model, path)
    return path


def make_inputs(folder, name):
    inputs = os.path.join(folder, name + "_inputs")
    os.makedirs(inputs, exist_ok=True)
    x = np.random.default_rng(0).uniform(-1, 1, SIZES[name]).astype(np.float32)
    np.save(os.path.join(inputs, "x.npy"), x)  # every model's input is named x
    return inputs


def kernel_shares(binary, model, inputs, threads, runs, trace):
    """[(kernel, op, share of the summed node time)] from one `ignis bench --profile` trace."""
    subprocess.run([binary, "bench", model, "--inputs", inputs, "--threads", str(threads), "--runs", str(runs),
                    "--profile", trace], check=True, capture_output=True, text=True)
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    time = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and "kernel" in e.get("args", {}):
            time[(e["args"]["kernel"], e["args"].get("op", e.get("cat", "?")))] += e["dur"]
    total = sum(time.values()) or 1.0
    return [(k, op, t / total) for (k, op), t in time.most_common()]


def print_profile(name, shares):
    print(f"\n{name}: top kernels (ignis bench --profile)")
    for kernel, op, share in shares[:TOP_KERNELS]:
        print(f"  {share:6.1%}  {op:<20} {kernel}")
    slow_ref = [(k, op, s) for k, op, s in shares if k.startswith("ref/") and s > REF_FLAG_SHARE]
    for kernel, op, share in slow_ref:
        print(f"  REFERENCE KERNEL over {REF_FLAG_SHARE:.0%}: {op} {kernel} {share:.1%}")
    return slow_ref


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap, list(FILES))
    ap.add_argument("--profile", action="store_true", help="print ignis's top kernels per model")
    args = ap.parse_args()
    openvino = importlib.util.find_spec("openvino") is not None
    results = {"cpu": cpu_model(), "threads": args.threads, "rounds": args.rounds, "models": {}}
    print(f"CPU: {results['cpu']}, {args.threads} threads, batch 1, float32, medians of {args.rounds} rounds of p50 latency")
    header = f"{'model':<5} {'input':<16} {'ignis ms':>9} {'ort ms':>9} {'ignis/ort':>9}"
    print(header + (f" {'ov f32 ms':>9} {'ignis/ov':>9}" if openvino else ""))
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            model, inputs = fixed_model(folder, name), make_inputs(folder, name)
            t, n = args.threads, args.runs
            runs = [("ignis", lambda: run_ignis(args.ignis, model, inputs, t, n, "f32")),
                    ("onnxruntime", lambda: run_peer("onnxruntime", model, inputs, t, n))]
            if openvino:
                runs.append(("openvino f32", lambda: run_peer("openvino", model, inputs, t, n, "f32")))
            medians = median_times(runs, args.rounds)
            row = {"input": list(SIZES[name]), **{f"{k}_p50_ms": v for k, v in medians.items()}}
            ig, ort = medians["ignis"], medians["onnxruntime"]
            line = f"{name:<5} {'x'.join(map(str, SIZES[name])):<16} {ig:9.2f} {ort:9.2f} {ig / ort:9.2f}"
            if openvino:
                ov = medians["openvino f32"]
                line += f" {ov:9.2f} {ig / ov:9.2f}"
            print(line, flush=True)
            results["models"][name] = row
        if args.profile:
            for name in args.models:
                shares = kernel_shares(args.ignis, os.path.join(folder, name + ".onnx"), make_inputs(folder, name), args.threads, args.runs,
                                       os.path.join(folder, name + ".trace.json"))
                slow_ref = print_profile(name, shares)
                results["models"][name]["top_kernels"] = shares[:TOP_KERNELS]
                results["models"][name]["reference_over_5pct"] = slow_ref
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
