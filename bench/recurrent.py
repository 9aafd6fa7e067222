#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Recurrent ops: ignis vs onnxruntime on LSTM, GRU and RNN models built here.

    python3 bench/recurrent.py [--threads 2] [--rounds 3] [--runs 50] [--json OUT.json]

Each model is one op node with weights as initializers (as exporters write them): a
bidirectional LSTM (input 64, hidden 128, 50 steps), a GRU (hidden 256, 100 steps) and an
RNN, at batch 1 and batch 8. Weights and inputs come from a fixed seed. Every engine runs in
a fresh process per round (ignis through `ignis bench --json`, onnxruntime through
bench/peer_runner.py), the order alternating each round; reported are the medians over rounds
of each round's p50 latency and the ratio ignis / onnxruntime (below 1: ignis is faster).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name: (op, gates, seq, batch, input, hidden, direction)
MODELS = {
    "lstm_bi_h128_b1": ("LSTM", 4, 50, 1, 64, 128, "bidirectional"),
    "lstm_bi_h128_b8": ("LSTM", 4, 50, 8, 64, 128, "bidirectional"),
    "gru_h256_b1": ("GRU", 3, 100, 1, 128, 256, "forward"),
    "gru_h256_b8": ("GRU", 3, 100, 8, 128, 256, "forward"),
    "rnn_h256_b1": ("RNN", 1, 100, 1, 128, 256, "forward"),
}


def build(folder, name, spec, rng):
    op, gates, seq, batch, inp, hid, direction = spec
    dirs = 2 if direction == "bidirectional" else 1
    scale = 1.0 / np.sqrt(hid)
    inits = [
        numpy_helper.from_array((rng.uniform(-scale, scale, (dirs, gates * hid, inp))).astype(np.float32), "W"),
        numpy_helper.from_array((rng.uniform(-scale, scale, (dirs, gates * hid, hid))).astype(np.float32), "R"),
        numpy_helper.from_array((rng.uniform(-scale, scale, (dirs, 2 * gates * hid))).astype(np.float32), "B"),
    ]
    attrs = {"hidden_size": hid, "direction": direction}
    if op == "GRU":
        attrs["linear_before_reset"] = 1  # what torch exports
    node = helper.make_node(op, ["X", "W", "R", "B"], ["Y"], **attrs)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, inp])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    path = os.path.join(folder, name + ".onnx")
    onnx.save(model, path)
    inputs = os.path.join(folder, name + "_inputs")
    os.makedirs(inputs, exist_ok=True)
    np.save(os.path.join(inputs, "X.npy"), rng.standard_normal((seq, batch, inp)).astype(np.float32))
    return path, inputs


def run_ignis(binary, model, inputs, threads, runs):
    cmd = [binary, "bench", model, "--json", "--threads", str(threads), "--runs", str(runs),
           "--input", f"X={os.path.join(inputs, 'X.npy')}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["latency_ms"]["p50"]


def run_ort(model, inputs, threads, runs):
    cmd = [sys.executable, os.path.join(HERE, "peer_runner.py"), "--engine", "onnxruntime", "--model", model,
           "--inputs", inputs, "--threads", str(threads), "--runs", str(runs)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["latency_ms"]["p50"]


def cpu_model():
    """The CPU's model name, with its family/model numbers (virtual machines often report only
    "AMD EPYC") and the vector extensions that decide kernel choice."""
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    name = fields.get("model name") or platform.processor()
    flags = set(fields.get("flags", "").split())
    isa = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if f in flags]
    return f"{name} (family {fields.get('cpu family', '?')}, model {fields.get('model', '?')}; {' '.join(isa)})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    ap.add_argument("--ignis", default=os.environ.get("IGNIS_BIN", os.path.join(ROOT, "build", "ignis")))
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    results = {"cpu": cpu_model(), "threads": args.threads, "rounds": args.rounds, "models": {}}
    print(f"CPU: {results['cpu']}, {args.threads} threads, medians of {args.rounds} rounds of p50 latency")
    print(f"{'model':<18} {'ignis ms':>9} {'ort ms':>9} {'ignis/ort':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            model, inputs = build(folder, name, MODELS[name], rng)
            ig, ort = [], []
            for r in range(args.rounds):
                order = [0, 1] if r % 2 == 0 else [1, 0]
                for o in order:
                    if o == 0:
                        ig.append(run_ignis(args.ignis, model, inputs, args.threads, args.runs))
                    else:
                        ort.append(run_ort(model, inputs, args.threads, args.runs))
            a, b = statistics.median(ig), statistics.median(ort)
            results["models"][name] = {"ignis_p50_ms": a, "onnxruntime_p50_ms": b, "ratio": a / b}
            print(f"{name:<18} {a:9.3f} {b:9.3f} {a / b:9.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
