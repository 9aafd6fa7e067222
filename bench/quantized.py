#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Quantized models: ignis vs onnxruntime, float32 vs int8, on the zoo's transformers.

    python3 bench/quantized.py [--models minilm bert_base] [--seq 128] [--batch 1]
                               [--threads 2] [--rounds 3] [--runs 30] [--json OUT.json]

For each model (built by tools/make_zoo.py into models/) three files run in both engines:
  float       the float32 model;
  ort_dynamic onnxruntime's quantize_dynamic (its defaults: int8 weights per tensor);
  ig_dynamic  `ignis quantize --mode dynamic` (int8 weights per column).
Both dynamic files are standard ONNX (DynamicQuantizeLinear + MatMulInteger + Cast + Mul).
Inputs: token ids from a fixed seed, attention mask all ones. Every engine runs in a fresh
process per round (ignis through `ignis bench --json`, onnxruntime through
bench/peer_runner.py), the order alternating each round; reported are the medians over
rounds of each round's p50 latency, ignis / onnxruntime (below 1: ignis is faster) and
ignis int8 / ignis float32.
"""

import argparse
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
from recurrent import cpu_model  # noqa: E402


def make_variants(folder, name, ignis):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src = os.path.join(ROOT, "models", name + ".onnx")
    if not os.path.exists(src):
        sys.exit(f"{src} is missing: run /usr/bin/python3 tools/make_zoo.py --out models")
    ort_dyn = os.path.join(folder, name + "_ort_dynamic.onnx")
    quantize_dynamic(src, ort_dyn, weight_type=QuantType.QInt8)
    ig_dyn = os.path.join(folder, name + "_ig_dynamic.onnx")
    subprocess.run([ignis, "quantize", src, "-o", ig_dyn, "--mode", "dynamic"], check=True, capture_output=True)
    return {"float": src, "ort_dynamic": ort_dyn, "ig_dynamic": ig_dyn}


def make_inputs(folder, name, batch, seq):
    rng = np.random.default_rng(0)
    inputs = os.path.join(folder, name + "_inputs")
    os.makedirs(inputs, exist_ok=True)
    np.save(os.path.join(inputs, "input_ids.npy"), rng.integers(1000, 20000, (batch, seq), dtype=np.int64))
    np.save(os.path.join(inputs, "attention_mask.npy"), np.ones((batch, seq), dtype=np.int64))
    return inputs


def run_ignis(binary, model, inputs, threads, runs):
    cmd = [binary, "bench", model, "--json", "--threads", str(threads), "--runs", str(runs), "--inputs", inputs]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["latency_ms"]["p50"]


def run_ort(model, inputs, threads, runs):
    cmd = [sys.executable, os.path.join(HERE, "peer_runner.py"), "--engine", "onnxruntime", "--model", model,
           "--inputs", inputs, "--threads", str(threads), "--runs", str(runs)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["latency_ms"]["p50"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=["minilm", "bert_base"])
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--ignis", default=os.environ.get("IGNIS_BIN", os.path.join(ROOT, "build", "ignis")))
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    results = {"cpu": cpu_model(), "threads": args.threads, "rounds": args.rounds, "seq": args.seq,
               "batch": args.batch, "models": {}}
    print(f"CPU: {results['cpu']}, {args.threads} threads, batch {args.batch}, seq {args.seq}, "
          f"medians of {args.rounds} rounds of p50 latency")
    print(f"{'model':<24} {'ignis ms':>9} {'ort ms':>9} {'ignis/ort':>9} {'vs ig f32':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            variants = make_variants(folder, name, args.ignis)
            inputs = make_inputs(folder, name, args.batch, args.seq)
            times = {v: ([], []) for v in variants}
            for r in range(args.rounds):
                for v, path in variants.items():
                    for o in ([0, 1] if r % 2 == 0 else [1, 0]):
                        if o == 0:
                            times[v][0].append(run_ignis(args.ignis, path, inputs, args.threads, args.runs))
                        else:
                            times[v][1].append(run_ort(path, inputs, args.threads, args.runs))
            ig_float = statistics.median(times["float"][0])
            for v, (ig, ort) in times.items():
                a, b = statistics.median(ig), statistics.median(ort)
                results["models"][f"{name}/{v}"] = {"ignis_p50_ms": a, "onnxruntime_p50_ms": b, "ratio": a / b,
                                                     "vs_ignis_float": a / ig_float}
                print(f"{name + '/' + v:<24} {a:9.2f} {b:9.2f} {a / b:9.2f} {a / ig_float:9.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
