#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Closed-loop gRPC load for a KServe v2 server (`inference.GRPCInferenceService`).

    python3 bench/serve/grpc_load.py --url 127.0.0.1:8001 --model NAME --inputs feeds.npz
                                     --concurrency C --seconds S

C clients, spread over up to 4 processes (threads within each; gRPC calls release the GIL),
each sending the same request back to back with tritonclient.grpc and timing every call.
Prints one JSON line: throughput (calls/s), p50_ms, p99_ms, errors.
"""

import argparse
import json
import multiprocessing as mp
import threading
import time

import numpy as np

DTYPES = {"float32": "FP32", "int64": "INT64", "int32": "INT32", "float16": "FP16", "float64": "FP64",
          "uint8": "UINT8", "int8": "INT8", "bool": "BOOL"}


def worker(url, model, inputs_path, threads, seconds, start_at, out):
    import tritonclient.grpc as tg
    feeds = dict(np.load(inputs_path))
    lat, errors = [], [0]
    lock = threading.Lock()

    def client():
        c = tg.InferenceServerClient(url)
        ins = []
        for name, a in feeds.items():
            i = tg.InferInput(name, list(a.shape), DTYPES[str(a.dtype)])
            i.set_data_from_numpy(a)
            ins.append(i)
        c.infer(model, ins)  # connect and warm before the clock starts
        mine = []
        while time.time() < start_at:
            time.sleep(0.001)
        end = start_at + seconds
        while True:
            t = time.perf_counter()
            if time.time() >= end:
                break
            try:
                c.infer(model, ins)
                mine.append(time.perf_counter() - t)
            except Exception:  # noqa: BLE001 - counted, not fatal
                with lock:
                    errors[0] += 1
        with lock:
            lat.extend(mine)

    ts = [threading.Thread(target=client) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put((lat, errors[0]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=5)
    args = ap.parse_args()
    procs = min(4, args.concurrency)
    per = [args.concurrency // procs + (1 if i < args.concurrency % procs else 0) for i in range(procs)]
    start_at = time.time() + 2.0 + 0.2 * procs
    q = mp.Queue()
    ps = [mp.Process(target=worker, args=(args.url, args.model, args.inputs, n, args.seconds, start_at, q)) for n in per]
    for p in ps:
        p.start()
    lat, errors = [], 0
    for _ in ps:
        lw, e = q.get()
        lat.extend(lw)
        errors += e
    for p in ps:
        p.join()
    lat.sort()
    n = len(lat)
    pick = lambda f: 1000 * lat[min(n - 1, int(f * n))] if n else None  # noqa: E731
    print(json.dumps({"throughput": n / args.seconds, "p50_ms": pick(0.5), "p99_ms": pick(0.99), "errors": errors}))


if __name__ == "__main__":
    main()
