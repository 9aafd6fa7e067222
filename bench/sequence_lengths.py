#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The zoo's transformers at several sequence lengths: ignis (float32, and with
--precision fp16) against onnxruntime and, when installed, OpenVINO (float32 hint), batch 1.

    python3 bench/sequence_lengths.py [--models minilm bert_base] [--seq 16 32 64 128]
                                      [--threads 2] [--rounds 3] [--runs 30] [--no-fp16]
                                      [--json OUT.json]

Short inputs are what a search or embedding service mostly sees, and there a transformer's
time goes to streaming its weights from memory (all-MiniLM-L6-v2 holds 42 MiB of float32
weights in its MatMuls, BERT-base 324 MiB; neither fits a server's L3), not to multiply-adds:
at 16 tokens each weight is used 16 times per run. At 128 tokens the same model is bound by
the multiply-adds. This benchmark shows both regimes side by side.

Inputs: token ids from a fixed seed, attention mask all ones, one row. Every run is a fresh
process (`ignis bench --json`, bench/peer_runner.py for the peers); rounds interleave the
engines in alternating order (bench/engines.py). Reported: the median over rounds of each
run's p50 latency, and ignis's ratio to each peer (below 1: ignis is faster).
"""

import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from engines import have, measure, run_ignis, run_peer, write_inputs  # noqa: E402
from recurrent import cpu_model  # noqa: E402


def spec_at(model, seq):
    """The zoo sidecar of `model` with every input's sequence axis set to `seq`, masks all ones."""
    spec = json.load(open(os.path.join(ROOT, "models", model + ".json")))
    spec["inputs"] = [dict(inp, shape=[1, seq], pad_tail=0) for inp in spec["inputs"]]
    return spec


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["minilm", "bert_base"])
    ap.add_argument("--seq", nargs="+", type=int, default=[16, 32, 64, 128])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--no-fp16", action="store_true", help="leave out ignis --precision fp16")
    ap.add_argument("--ignis", default=os.path.join(ROOT, "build", "ignis"))
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    for m in args.models:
        if not os.path.exists(os.path.join(ROOT, "models", m + ".onnx")):
            sys.exit(f"models/{m}.onnx is missing: run /usr/bin/python3 tools/make_zoo.py --out models")
    peers = ["onnxruntime"] + (["openvino"] if have("openvino") else [])
    engines = ["ignis"] + ([] if args.no_fp16 else ["ignis_fp16"]) + peers
    results = {"cpu": cpu_model(), "threads": args.threads, "rounds": args.rounds, "runs": args.runs, "rows": []}
    print(f"CPU: {results['cpu']}, {args.threads} threads, batch 1, medians of {args.rounds} rounds of p50 ms")
    header = f"{'model':<10} {'seq':>4} " + " ".join(f"{e:>12}" for e in engines)
    header += " " + " ".join(f"{'ig/' + p[:4]:>9}" for p in peers)
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            path = os.path.join(ROOT, "models", model + ".onnx")
            for seq in args.seq:
                folder = os.path.join(tmp, f"{model}_{seq}")
                os.makedirs(folder)
                write_inputs(spec_at(model, seq), folder)
                runners = {"ignis": lambda r: run_ignis(args.ignis, path, folder, args.threads, args.runs)}
                if not args.no_fp16:
                    runners["ignis_fp16"] = lambda r: run_ignis(args.ignis, path, folder, args.threads, args.runs,
                                                                precision="fp16")
                for p in peers:
                    runners[p] = lambda r, p=p: run_peer(p, path, folder, args.threads, args.runs,
                                                         precision="f32" if p == "openvino" else "default")
                summary = measure(runners, args.rounds)
                p50 = {e: summary[e]["p50_ms"] if summary[e] else None for e in engines}
                row = {"model": model, "seq": seq, "p50_ms": p50,
                       "ignis_over": {p: p50["ignis"] / p50[p] for p in peers if p50[p]}}
                results["rows"].append(row)
                line = f"{model:<10} {seq:>4} " + " ".join(
                    f"{p50[e]:12.2f}" if p50[e] is not None else f"{'-':>12}" for e in engines)
                line += " " + " ".join(f"{row['ignis_over'].get(p, float('nan')):9.2f}" for p in peers)
                print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
