#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Low precision on the zoo's transformers: ignis vs onnxruntime and OpenVINO, float32, bfloat16
and dynamic int8.

    python3 bench/quantized.py [--models minilm bert_base] [--seq 128] [--batch 1]
                               [--threads 2] [--rounds 3] [--runs 30] [--json OUT.json]

Per model (built by tools/make_zoo.py into models/), these runs:
  float       ignis f32, ignis bf16 (--precision bf16), onnxruntime, OpenVINO f32
              (INFERENCE_PRECISION_HINT=f32) and OpenVINO's default (bf16 on CPUs with
              AVX512_BF16), when the openvino package is installed;
  ort_static  onnxruntime's quantize_static (QDQ, uint8 activations, int8 weights per
              channel, calibrated on 4 random token sequences of the benchmark's shape), in
              ignis and onnxruntime;
  ort_dynamic onnxruntime's quantize_dynamic (its defaults: int8 weights per tensor), in ignis
              and onnxruntime;
  ig_dynamic  `ignis quantize --mode dynamic` (int8 weights per column), in ignis and
              onnxruntime;
  ig_rows     `ignis quantize --mode dynamic --per-row` (activations with one scale per row),
              in ignis and onnxruntime.
The per-tensor dynamic files are standard ONNX (DynamicQuantizeLinear + MatMulInteger + Cast +
Mul), the per-row one too (Abs, ReduceMax, Max, Div, Round, Clip, Cast, then MatMulInteger +
Cast + Mul + Mul); the static one QuantizeLinear / DequantizeLinear pairs around every MatMul,
Add and Mul it quantizes.
Inputs: token ids from a fixed seed, attention mask all ones. Every run is a fresh process
(ignis through `ignis bench --json`, the others through bench/peer_runner.py); each round runs
all of them in an order rotated by one per round. Reported: the median over rounds of each
run's p50 latency, and its ratio to ignis float32 on the same model.
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from engines import WARMUP_SECONDS  # noqa: E402
from recurrent import cpu_model  # noqa: E402


def make_variants(folder, name, ignis, batch, seq):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)

    src = os.path.join(ROOT, "models", name + ".onnx")
    if not os.path.exists(src):
        sys.exit(f"{src} is missing: run /usr/bin/python3 tools/make_zoo.py --out models")

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.feeds = iter([{"input_ids": rng.integers(1000, 20000, (batch, seq), dtype=np.int64),
                                "attention_mask": np.ones((batch, seq), dtype=np.int64)} for _ in range(4)])

        def get_next(self):
            return next(self.feeds, None)

    ort_static = os.path.join(folder, name + "_ort_static.onnx")
    quantize_static(src, ort_static, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    ort_dyn = os.path.join(folder, name + "_ort_dynamic.onnx")
    quantize_dynamic(src, ort_dyn, weight_type=QuantType.QInt8)
    ig_dyn = os.path.join(folder, name + "_ig_dynamic.onnx")
    subprocess.run([ignis, "quantize", src, "-o", ig_dyn, "--mode", "dynamic"], check=True, capture_output=True)
    ig_rows = os.path.join(folder, name + "_ig_rows.onnx")
    subprocess.run([ignis, "quantize", src, "-o", ig_rows, "--mode", "dynamic", "--per-row"], check=True,
                   capture_output=True)
    return {"float": src, "ort_static": ort_static, "ort_dynamic": ort_dyn, "ig_dynamic": ig_dyn, "ig_rows": ig_rows}


def make_inputs(folder, name, batch, seq):
    rng = np.random.default_rng(0)
    inputs = os.path.join(folder, name + "_inputs")
    os.makedirs(inputs, exist_ok=True)
    np.save(os.path.join(inputs, "input_ids.npy"), rng.integers(1000, 20000, (batch, seq), dtype=np.int64))
    np.save(os.path.join(inputs, "attention_mask.npy"), np.ones((batch, seq), dtype=np.int64))
    return inputs


def run_ignis(binary, model, inputs, threads, runs, precision):
    cmd = [binary, "bench", model, "--json", "--threads", str(threads), "--runs", str(runs), "--inputs", inputs,
           "--precision", precision, "--warmup-seconds", str(WARMUP_SECONDS)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["latency_ms"]["p50"]


def run_peer(engine, model, inputs, threads, runs, precision="default"):
    cmd = [sys.executable, os.path.join(HERE, "peer_runner.py"), "--engine", engine, "--model", model,
           "--inputs", inputs, "--threads", str(threads), "--runs", str(runs), "--precision", precision,
           "--warmup-seconds", str(WARMUP_SECONDS)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["latency_ms"]["p50"]


def runs_for(args, variants, inputs):
    """(label, thunk) for every run of one model."""
    t, n = args.threads, args.runs
    runs = [
        ("float ignis f32", lambda: run_ignis(args.ignis, variants["float"], inputs, t, n, "f32")),
        ("float ignis bf16", lambda: run_ignis(args.ignis, variants["float"], inputs, t, n, "bf16")),
        ("float onnxruntime", lambda: run_peer("onnxruntime", variants["float"], inputs, t, n)),
    ]
    if importlib.util.find_spec("openvino") is not None:
        runs.append(("float openvino f32", lambda: run_peer("openvino", variants["float"], inputs, t, n, "f32")))
        runs.append(("float openvino default", lambda: run_peer("openvino", variants["float"], inputs, t, n)))
    for v in ("ort_static", "ort_dynamic", "ig_dynamic", "ig_rows"):
        runs.append((f"{v} ignis", lambda v=v: run_ignis(args.ignis, variants[v], inputs, t, n, "f32")))
        runs.append((f"{v} onnxruntime", lambda v=v: run_peer("onnxruntime", variants[v], inputs, t, n)))
    return runs


def add_common_args(ap, models):
    """The options every low-precision benchmark takes."""
    ap.add_argument("--models", nargs="*", default=models)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--ignis", default=os.environ.get("IGNIS_BIN", os.path.join(ROOT, "build", "ignis")))
    ap.add_argument("--json", help="write the results here")


def median_times(runs, rounds):
    """{label: median over rounds} for (label, thunk) runs, each round in an order rotated by one."""
    times = {label: [] for label, _ in runs}
    for r in range(rounds):
        for i in range(len(runs)):
            label, thunk = runs[(i + r) % len(runs)]
            times[label].append(thunk())
    return {label: statistics.median(t) for label, t in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap, ["minilm", "bert_base"])
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=1)
    args = ap.parse_args()
    results = {"cpu": cpu_model(), "threads": args.threads, "rounds": args.rounds, "seq": args.seq,
               "batch": args.batch, "models": {}}
    print(f"CPU: {results['cpu']}, {args.threads} threads, batch {args.batch}, seq {args.seq}, "
          f"medians of {args.rounds} rounds of p50 latency")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            variants = make_variants(folder, name, args.ignis, args.batch, args.seq)
            inputs = make_inputs(folder, name, args.batch, args.seq)
            runs = runs_for(args, variants, inputs)
            medians = median_times(runs, args.rounds)
            base = medians["float ignis f32"]
            print(f"\n{name}\n{'run':<26} {'p50 ms':>8} {'/ ignis f32':>11}")
            for label, _ in runs:
                ms = medians[label]
                results["models"].setdefault(name, {})[label] = {"p50_ms": ms, "vs_ignis_f32": ms / base}
                print(f"{label:<26} {ms:8.2f} {ms / base:11.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
