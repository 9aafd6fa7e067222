#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Loads a model with more than 2 GiB of weights in an external data file and reports session
creation time and peak memory against the file size. Not part of CI (it writes gigabytes).

    python3 bench/external_data_load.py [--ignis build/ignis] [--baseline OTHER_IGNIS]
                                        [--dir /tmp/ignis_large] [--check-export] [--keep]

The model (written with onnx.helper; weights generated with numpy and streamed to one data file,
so this script never holds them) is an embedding table read by Gather followed by a chain of
MatMuls:

    ids int64[1, 4] -> Gather(E [32768, 8192]) -> MatMul(W0 [8192, 16384])
                    -> MatMul(W1 [16384, 8192]) -> MatMul(W2 [8192, 8192]) -> y

E is 1 GiB, W0 and W1 512 MiB each, W2 256 MiB: 2.25 GiB in all. Each configuration runs
`ignis bench MODEL --runs 3 --warmup 1 --json` in a fresh process, with the data file's pages
evicted from the page cache first (posix_fadvise DONTNEED on this one file: "cold") and again
with them cached ("warm"). Reported: session_create_ms and p50 from ignis, and the process's
peak RSS (VmHWM) with the peaks of its anonymous and file-backed parts (sampled from
/proc/PID/status every 20 ms). Kernels: the default (x86 MatMul prepacks its weights, then
the weight itself is released) and IGNIS_KERNELS=ref (weights read in place from the mapping).

With --baseline, the same runs for another ignis binary (e.g. one built before external data
was memory-mapped). With --check-export, also `ignis optimize` on the model (its output must put
the weights in `<out>.data`) and `ignis run` on both files with the same seed, outputs compared.
The files are deleted at the end unless --keep.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "serve"))
from run import cpu_model  # noqa: E402


def write_model(folder, divide):
    """Writes folder/model.onnx and folder/model.onnx.data; returns the data file's size."""
    vocab, hidden, wide = 32768 // divide, 8192 // divide, 16384 // divide
    weights = [("E", (vocab, hidden)), ("W0", (hidden, wide)), ("W1", (wide, hidden)), ("W2", (hidden, hidden))]
    folder.mkdir(parents=True, exist_ok=True)
    data_name = "model.onnx.data"
    rng = np.random.default_rng(0)
    inits = []
    offset = 0
    with open(folder / data_name, "wb") as f:
        for name, shape in weights:
            # Uniform with variance 1/rows keeps activations of order one through the chain.
            bound = np.float32(np.sqrt(3.0 / shape[0]))
            for r in range(0, shape[0], 1024):
                rows = min(1024, shape[0] - r)
                block = rng.random((rows, shape[1]), dtype=np.float32)
                f.write(((block * 2 - 1) * bound).astype("<f4").tobytes())
            length = shape[0] * shape[1] * 4
            t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=shape)
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", data_name), ("offset", str(offset)), ("length", str(length))):
                e = t.external_data.add()
                e.key, e.value = k, v
            inits.append(t)
            offset += length
    nodes = [
        helper.make_node("Gather", ["E", "ids"], ["h0"]),
        helper.make_node("MatMul", ["h0", "W0"], ["h1"]),
        helper.make_node("MatMul", ["h1", "W1"], ["h2"]),
        helper.make_node("MatMul", ["h2", "W2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "large_external",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save_model(model, str(folder / "model.onnx"))
    return offset


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def status_kb(pid, keys):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k = line.split(":")[0]
                if k in keys:
                    out[k] = int(line.split()[1])
    except OSError:
        pass
    return out


def measure(cmd, env):
    """Runs cmd; returns (stdout, seconds, peaks in KiB of VmHWM, RssAnon and RssFile)."""
    peaks = {"VmHWM": 0, "RssAnon": 0, "RssFile": 0}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    done = threading.Event()

    def sample():
        while not done.is_set():
            for k, v in status_kb(proc.pid, peaks.keys()).items():
                peaks[k] = max(peaks[k], v)
            done.wait(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out, err = proc.communicate()
    seconds = time.perf_counter() - t0
    done.set()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return out, seconds, peaks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ignis", default=str(ROOT / "build" / "ignis"))
    ap.add_argument("--baseline", help="another ignis binary to measure the same way")
    ap.add_argument("--dir", default="/tmp/ignis_large")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--check-export", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--divide", type=int, default=1, help="divide every extent by this (a quick trial)")
    args = ap.parse_args()

    folder = Path(args.dir)
    model = folder / "model.onnx"
    t0 = time.perf_counter()
    data_bytes = write_model(folder, args.divide)
    print(f"wrote {model} + model.onnx.data: {data_bytes / 2**30:.2f} GiB of weights "
          f"in {time.perf_counter() - t0:.1f} s; CPU: {cpu_model()}, {os.cpu_count()} cores", flush=True)
    binaries = [("ignis", args.ignis)] + ([("baseline", args.baseline)] if args.baseline else [])
    rows = []
    try:
        for label, exe in binaries:
            for kernels in ("default", "ref"):
                for cache in ("cold", "warm"):
                    env = dict(os.environ)
                    env.pop("IGNIS_KERNELS", None)
                    if kernels == "ref":
                        env["IGNIS_KERNELS"] = "ref"
                    if cache == "cold":
                        evict(folder / "model.onnx.data")
                    cmd = [exe, "bench", str(model), "--runs", "3", "--warmup", "1", "--json",
                           "--threads", str(args.threads)]
                    out, seconds, peaks = measure(cmd, env)
                    r = json.loads(out.strip().splitlines()[-1])
                    row = {"binary": label, "kernels": kernels, "cache": cache,
                           "session_create_ms": r["session_create_ms"], "p50_ms": r["latency_ms"]["p50"],
                           "process_s": round(seconds, 2), "peak_rss_mib": peaks["VmHWM"] / 1024,
                           "peak_anon_mib": peaks["RssAnon"] / 1024, "peak_file_mib": peaks["RssFile"] / 1024}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
        print()
        print(f"weights file {data_bytes / 2**20:.0f} MiB; peaks in MiB (anon/file sampled every 20 ms)")
        print(f"{'binary':9} {'kernels':8} {'cache':5} {'create ms':>10} {'p50 ms':>8} {'peak RSS':>9} "
              f"{'anon':>7} {'file':>7} {'RSS/file':>8}")
        for r in rows:
            print(f"{r['binary']:9} {r['kernels']:8} {r['cache']:5} {r['session_create_ms']:10.0f} "
                  f"{r['p50_ms']:8.1f} {r['peak_rss_mib']:9.0f} {r['peak_anon_mib']:7.0f} "
                  f"{r['peak_file_mib']:7.0f} {r['peak_rss_mib'] * 2**20 / data_bytes:8.2f}")

        if args.check_export:
            out_model = folder / "optimized.onnx"
            t1 = time.perf_counter()
            subprocess.run([args.ignis, "optimize", str(model), "-o", str(out_model), "--level", "basic"],
                           check=True, capture_output=True, text=True)
            data = Path(str(out_model) + ".data")
            size = os.path.getsize(out_model)
            external = f"{data.name} {os.path.getsize(data) / 2**30:.2f} GiB" if data.exists() else "no data file"
            print(f"\nignis optimize: {time.perf_counter() - t1:.1f} s; {out_model.name} {size} bytes, {external}")
            if data_bytes > 2**30 and (size > 2**20 or not data.exists()):
                sys.exit("the optimized model kept its weights inline")
            outputs = {}
            for name, path in (("original", model), ("optimized", out_model)):
                d = folder / f"out_{name}"
                subprocess.run([args.ignis, "run", str(path), "--seed", "1", "--output-dir", str(d)],
                               check=True, capture_output=True, text=True)
                outputs[name] = np.load(d / "y.npy")
            same = np.array_equal(outputs["original"], outputs["optimized"])
            print(f"ignis run, original vs optimized: {'identical' if same else 'DIFFERENT'} outputs "
                  f"(max |y| {np.abs(outputs['original']).max():.3f})")
            if not same:
                sys.exit(1)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
