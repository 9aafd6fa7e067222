#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ignis vs onnxruntime vs OpenVINO (f32) on the broad model set, with ignis's
reference-kernel share.

    python3 bench/broad.py [--models shufflenet_v2 gru_tagger ...] [--rounds 3] [--runs 20]
                           [--threads 2] [--tune] [--json OUT.json]

The set is models/broad/NAME.onnx + NAME.json, made by
`/usr/bin/python3 tools/make_broad_set.py --out models/broad`.  Each model gets the same
inputs (tools/make_inputs.py, seed 0) in every engine; every engine runs in a fresh process
per round (`ignis bench --json`, bench/peer_runner.py), rounds alternate the order, and the
medians over rounds are reported.  OpenVINO runs with INFERENCE_PRECISION_HINT=f32, so all
three compute in float32.  ignis's first round also writes a per-op profile (after its
timed runs, so latency is unaffected): the table shows the share of ignis's op time spent in
reference kernels (kernel ids "ref/...") and the op that spends most of it.  --tune runs
`ignis tune` on each model first (its seconds go into the JSON) and times ignis with that
tuning cache; without it ignis runs its built-in rules (`--tuning off`).

Ratios are ignis/peer p50 latency (below 1: ignis is faster); the summary gives their
geometric mean per peer.
"""

import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import engines as eng  # noqa: E402

PEERS = ("onnxruntime", "openvino")


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown CPU"
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def profile_shares(trace_path):
    """Returns (ref_share, top_ref_op, top_ref_share, by_kernel) from an `ignis bench
    --profile` trace: shares of the summed op time; top_ref_op is "Op [kernel]"."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    by_kernel = defaultdict(float)
    for ev in events:
        a = ev.get("args", {})
        by_kernel[f"{a.get('op', ev.get('cat', '?'))} [{a.get('kernel', '?')}]"] += float(ev.get("dur", 0))
    total = sum(by_kernel.values())
    if total <= 0:
        return 0.0, None, 0.0, {}
    ref = {k: v for k, v in by_kernel.items() if k.split("[", 1)[1].startswith("ref/")}
    top = max(ref, key=ref.get) if ref else None
    return (sum(ref.values()) / total, top, ref[top] / total if top else 0.0,
            {k: v / total for k, v in sorted(by_kernel.items(), key=lambda kv: -kv[1])})


def _short_error(e):
    text = (getattr(e, "stderr", None) or getattr(e, "stdout", None) or str(e)).strip()
    return text.splitlines()[-1][:200] if text else type(e).__name__


def bench_model(name, model, spec, args, peers, work):
    folder = os.path.join(work, "inputs")
    os.makedirs(folder)
    eng.write_inputs(spec, folder, seed=0)
    trace = os.path.join(work, "trace.json")
    errors = {}

    def guarded(engine, fn):
        def run(r):
            if engine in errors:
                return None
            try:
                return fn(r)
            except (subprocess.CalledProcessError, ValueError) as e:
                errors[engine] = _short_error(e)
                return None
        return run

    cache = os.path.join(work, "tuning-cache.tsv") if args.tune else None
    tune_s = None
    if cache:
        try:
            tune_s = eng.tune_ignis(args.ignis, model, folder, args.threads, cache)
        except subprocess.CalledProcessError as e:
            errors["ignis tune"] = _short_error(e)
            cache = None
    runners = {"ignis": guarded("ignis", lambda r: eng.run_ignis(
        args.ignis, model, folder, args.threads, args.runs, profile=trace if r == 0 else None, tuning_cache=cache))}
    for p in peers:
        runners[p] = guarded(p, lambda r, p=p: eng.run_peer(
            p, model, folder, args.threads, args.runs, precision="f32" if p == "openvino" else "default"))
    summary = eng.measure(runners, args.rounds)
    entry = {"exporter": spec.get("exporter", "torch"), "engines": summary, "errors": errors}
    if tune_s is not None:
        entry["tune_s"] = tune_s
    if os.path.exists(trace):
        share, top, top_share, by_kernel = profile_shares(trace)
        entry["ignis_profile"] = {"ref_share": share, "top_ref_op": top, "top_ref_share": top_share,
                                  "by_kernel": dict(list(by_kernel.items())[:12])}
    if summary["ignis"]:
        for p in peers:
            if summary[p]:
                entry[f"ratio_vs_{p}"] = summary["ignis"]["p50_ms"] / summary[p]["p50_ms"]
    return entry


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def print_table(results, peers, header):
    print("\n" + header)
    cols = f"{'model':<22} {'exporter':<16} {'ignis ms':>9}" + "".join(f" {p[:8] + ' ms':>11}" for p in peers)
    cols += "".join(f" {'/' + p[:8]:>10}" for p in peers) + f" {'ref %':>6}  top reference op"
    print(cols)
    for name, r in results.items():
        e = r["engines"]
        ms = lambda k: f"{e[k]['p50_ms']:.2f}" if e.get(k) else "fail"  # noqa: E731
        line = f"{name:<22} {r['exporter'][:16]:<16} {ms('ignis'):>9}" + "".join(f" {ms(p):>11}" for p in peers)
        line += "".join(f" {('x%.2f' % r['ratio_vs_' + p]) if 'ratio_vs_' + p in r else '-':>10}" for p in peers)
        prof = r.get("ignis_profile")
        if prof:
            top = f"{prof['top_ref_op']} {100 * prof['top_ref_share']:.1f}%" if prof["top_ref_op"] else "-"
            line += f" {100 * prof['ref_share']:6.1f}  {top}"
        print(line)
        for engine, err in r["errors"].items():
            print(f"{'':<22} {engine} failed: {err}")
    print()
    for p in peers:
        ratios = [r[f"ratio_vs_{p}"] for r in results.values() if f"ratio_vs_{p}" in r]
        slower = [n for n, r in results.items() if r.get(f"ratio_vs_{p}", 0) > 1]
        print(f"ignis/{p}: geometric mean x{geomean(ratios):.3f} over {len(ratios)} models; "
              f"slower on {len(slower)}" + (f": {' '.join(slower)}" if slower else ""))
    shares = {n: r["ignis_profile"]["ref_share"] for n, r in results.items() if r.get("ignis_profile")}
    above = [f"{n} {100 * s:.1f}%" for n, s in shares.items() if s > 0.05]
    print(f"reference kernels above 5% of the profile: {len(above)} models" + (f" ({', '.join(above)})" if above else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", help="model names (default: every NAME.json in --models-dir)")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models", "broad"))
    ap.add_argument("--ignis", default=os.path.join(ROOT, "build", "ignis"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--tune", action="store_true",
                    help="run `ignis tune` on each model first and time ignis with that tuning cache; "
                         "without it ignis runs its built-in rules")
    ap.add_argument("--json", help="write all results to this file")
    args = ap.parse_args()

    names = args.models
    if not names:
        names = sorted(f[:-5] for f in os.listdir(args.models_dir) if f.endswith(".json")) \
            if os.path.isdir(args.models_dir) else []
    if not names:
        print(f"no models in {args.models_dir}: run /usr/bin/python3 tools/make_broad_set.py --out {args.models_dir}")
        return 1
    peers = [p for p in PEERS if p == "onnxruntime" or eng.have(p)]
    if "openvino" not in peers:
        print("note: openvino is not installed (pip install openvino); comparing with onnxruntime only")
    cpu = cpu_model()
    header = (f"CPU {cpu}, {args.threads} threads, {args.rounds} rounds x {args.runs} runs (medians over rounds), "
              f"{datetime.date.today().isoformat()}; openvino with f32 precision hint")
    results = {}
    for name in names:
        model = os.path.join(args.models_dir, name + ".onnx")
        sidecar = os.path.join(args.models_dir, name + ".json")
        if not (os.path.exists(model) and os.path.exists(sidecar)):
            print(f"skip {name}: {model} or its .json is missing (run tools/make_broad_set.py)")
            continue
        with open(sidecar) as f:
            spec = json.load(f)
        with tempfile.TemporaryDirectory() as work:
            results[name] = bench_model(name, model, spec, args, peers, work)
        r = results[name]
        print(f"measured {name}: " + ", ".join(
            f"{e} {s['p50_ms']:.2f} ms" if s else f"{e} failed" for e, s in r["engines"].items()), flush=True)
    print_table(results, peers, header)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu, "threads": args.threads, "rounds": args.rounds, "runs": args.runs, "tuned": args.tune,
                       "date": datetime.date.today().isoformat(), "openvino_precision": "f32",
                       "models": results}, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
