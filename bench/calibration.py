#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What calibration costs as the number of samples grows: `ignis quantize --calibrate` on N
samples against N float32 runs of the same model, and the peak memory of the quantize process.

    python3 bench/calibration.py [--models mobilenet_v2 resnet50] [--samples 100 250 500]
                                 [--methods minmax percentile entropy] [--threads 2]

Each model is the zoo's (models/NAME.onnx, tools/make_zoo.py). Samples are N(0, 1) images of
the model's input shape, one .npy each (seed 0), written once for the largest N; smaller runs
take the first N (`--samples N`). Per (model, method, N), one `ignis quantize` in a fresh process:
wall time and peak RSS (VmHWM, from getrusage of the child). The float reference is `ignis
bench --runs N` on the same model in a fresh process: N times its mean latency (session
creation excluded, as the quantize time includes it; that makes the ratio an upper bound).
Reported: seconds, calibration / float time, peak MiB, and the peak's growth from the smallest
to the largest N.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def model_input_shape(path):
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    init = {i.name for i in m.graph.initializer}
    (inp,) = [i for i in m.graph.input if i.name not in init]
    dims = [d.dim_value if d.dim_value > 0 else 1 for d in inp.type.tensor_type.shape.dim]
    return inp.name, dims


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["mobilenet_v2", "resnet50"])
    ap.add_argument("--samples", nargs="+", type=int, default=[100, 250, 500])
    ap.add_argument("--methods", nargs="+", default=["minmax", "percentile", "entropy"])
    ap.add_argument("--threads", type=int, default=2, help="threads of the float runs (quantize uses every core)")
    ap.add_argument("--ignis", default=str(ROOT / "build" / "ignis"))
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    samples = sorted(args.samples)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in args.models:
            model = ROOT / "models" / f"{name}.onnx"
            if not model.is_file():
                sys.exit(f"{model} is missing: python3 tools/make_zoo.py")
            input_name, shape = model_input_shape(model)
            data = tmp / name
            data.mkdir()
            rng = np.random.default_rng(0)
            for i in range(samples[-1]):
                np.save(data / f"{i:04d}.npy", rng.standard_normal(shape, dtype=np.float32))
            for n in samples:
                bench = subprocess.run([args.ignis, "bench", str(model), "--runs", str(n), "--warmup", "3", "-t",
                                        str(args.threads), "--json"], capture_output=True, text=True)
                if bench.returncode != 0:
                    sys.exit(bench.stderr[-2000:])
                float_s = json.loads(bench.stdout)["latency_ms"]["mean"] * n / 1000.0
                for method in args.methods:
                    out = tmp / f"{name}.{method}.{n}.onnx"
                    cmd = [args.ignis, "quantize", str(model), "-o", str(out), "--calibrate", str(data), "--samples",
                           str(n), "--method", method]
                    # Each quantize in its own short-lived Python child so that its peak RSS is its own.
                    probe = [sys.executable, "-c",
                             "import resource, subprocess, sys, time, json; t = time.perf_counter(); "
                             "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
                             "print(json.dumps({'rc': r.returncode, 's': time.perf_counter() - t, "
                             "'rss': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0, "
                             "'err': r.stderr[-1500:]}))", *cmd]
                    res = subprocess.run(probe, capture_output=True, text=True)
                    r = json.loads(res.stdout)
                    if r["rc"] != 0:
                        sys.exit(f"{' '.join(cmd)} failed:\n{r['err']}")
                    row = {"model": name, "method": method, "samples": n, "calibrate_s": round(r["s"], 3),
                           "float_s": round(float_s, 3), "ratio": round(r["s"] / float_s, 2),
                           "peak_rss_mib": round(r["rss"], 1)}
                    results.append(row)
                    print(json.dumps(row), flush=True)
    print()
    print("| model | method | samples | calibrate s | float runs s | ratio | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['model']} | {r['method']} | {r['samples']} | {r['calibrate_s']:.2f} | {r['float_s']:.2f} | "
              f"{r['ratio']:.2f} | {r['peak_rss_mib']:.0f} |")
    for name in args.models:
        for method in args.methods:
            rows = [r for r in results if r["model"] == name and r["method"] == method]
            if len(rows) > 1:
                growth = rows[-1]["peak_rss_mib"] / rows[0]["peak_rss_mib"] - 1
                print(f"{name} {method}: peak RSS {rows[0]['samples']} -> {rows[-1]['samples']} samples: "
                      f"{100 * growth:+.1f}%")
    if args.json:
        Path(args.json).write_text(json.dumps({"threads": args.threads, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
