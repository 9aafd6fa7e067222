#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""4-bit weight-only MatMuls in the standard-ONNX form (MatMul(A, DequantizeLinear(W int4,
scale, axis 0, block_size 32)), as onnxruntime's MatMulNBitsQuantizer writes with
quant_format=QDQ): ignis and onnxruntime against the float32 MatMul of the same shape.

    python3 bench/int4_qdq.py [--shapes 768x3072 3072x768 4096x4096] [--rows 1 4]
                              [--threads 2] [--rounds 3] [--runs 200] [--json OUT.json]

Per shape and row count, these runs (fresh processes, interleaved by round, medians of p50):
  ignis_f32        the float32 MatMul;
  ignis_int4       the QDQ file: fuse_blocked_dq_into_matmul_nbits makes it MatMulNBits with
                   accuracy_level 0 (A stays float32: the graph's arithmetic);
  ignis_int4_acc4  the same node with accuracy_level 4 (A rounded to int8 per block), which is
                   what onnxruntime's own fusion of this pattern chooses by default;
  ort_f32, ort_int4  onnxruntime on the float and QDQ files (its default optimizations).
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from engines import measure, run_ignis, run_peer  # noqa: E402
from recurrent import cpu_model  # noqa: E402

BLOCK = 32


def make_models(folder, k, n, rows):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    blocks = (k + BLOCK - 1) // BLOCK
    w = rng.integers(-8, 8, size=(k, n))
    scale = rng.uniform(0.01, 0.05, size=(blocks, n)).astype(np.float32)
    w_float = (w * np.repeat(scale, BLOCK, axis=0)[:k]).astype(np.float32)
    a_info = helper.make_tensor_value_info("A", TensorProto.FLOAT, [rows, k])
    y_info = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [rows, n])
    paths = {}

    def save(name, nodes, inits):
        model = helper.make_model(helper.make_graph(nodes, name, [a_info], [y_info], inits),
                                  opset_imports=[helper.make_opsetid("", 21)])
        model.ir_version = 10
        paths[name] = os.path.join(folder, f"{name}_{k}x{n}_m{rows}.onnx")
        onnx.save(model, paths[name])

    save("f32", [helper.make_node("MatMul", ["A", "W"], ["Y"])], [numpy_helper.from_array(w_float, "W")])
    save("int4", [helper.make_node("DequantizeLinear", ["Wq", "scale"], ["W"], axis=0, block_size=BLOCK),
                  helper.make_node("MatMul", ["A", "W"], ["Y"])],
         [helper.make_tensor("Wq", TensorProto.INT4, [k, n], w.flatten().tolist()),
          numpy_helper.from_array(scale, "scale")])
    inputs = os.path.join(folder, f"inputs_{k}_m{rows}")
    os.makedirs(inputs, exist_ok=True)
    np.save(os.path.join(inputs, "A.npy"), rng.standard_normal((rows, k)).astype(np.float32))
    return paths, inputs


def accuracy_level_4(ignis, src, dst):
    """The optimized QDQ file with its MatMulNBits switched to accuracy_level 4."""
    import subprocess

    import onnx

    subprocess.run([ignis, "optimize", src, "-o", dst, "--level", "all"], check=True, capture_output=True)
    model = onnx.load(dst)
    for node in model.graph.node:
        for a in node.attribute:
            if a.name == "accuracy_level":
                a.i = 4
    onnx.save(model, dst)
    return dst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", nargs="+", default=["768x3072", "3072x768", "4096x4096"], help="KxN of the weight")
    ap.add_argument("--rows", nargs="+", type=int, default=[1, 4], help="rows of A")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--ignis", default=os.path.join(ROOT, "build", "ignis"))
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    results = {"cpu": cpu_model(), "threads": args.threads, "rounds": args.rounds, "block_size": BLOCK, "cases": []}
    print(f"# {results['cpu']}, {args.threads} threads, medians of {args.rounds} rounds of p50 (ms)")
    print("| K x N | rows | ignis f32 | ignis int4 (exact) | ignis int4 (acc. 4) | ORT f32 | ORT int4 "
          "| exact / f32 | acc. 4 / f32 | exact / ORT int4 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes:
            k, n = (int(v) for v in shape.split("x"))
            for rows in args.rows:
                paths, inputs = make_models(tmp, k, n, rows)
                acc4 = accuracy_level_4(args.ignis, paths["int4"], paths["int4"].replace(".onnx", "_acc4.onnx"))
                t, r = args.threads, args.runs
                m = measure({
                    "ignis_f32": lambda _: run_ignis(args.ignis, paths["f32"], inputs, t, r),
                    "ignis_int4": lambda _: run_ignis(args.ignis, paths["int4"], inputs, t, r),
                    "ignis_int4_acc4": lambda _: run_ignis(args.ignis, acc4, inputs, t, r),
                    "ort_f32": lambda _: run_peer("onnxruntime", paths["f32"], inputs, t, r),
                    "ort_int4": lambda _: run_peer("onnxruntime", paths["int4"], inputs, t, r),
                }, args.rounds)
                p = {e: v["p50_ms"] for e, v in m.items()}
                results["cases"].append({"k": k, "n": n, "rows": rows, "p50_ms": p})
                print(f"| {k} x {n} | {rows} | {p['ignis_f32']:.4g} | {p['ignis_int4']:.4g} | {p['ignis_int4_acc4']:.4g} "
                      f"| {p['ort_f32']:.4g} | {p['ort_int4']:.4g} | {p['ignis_int4'] / p['ignis_f32']:.2f} "
                      f"| {p['ignis_int4_acc4'] / p['ignis_f32']:.2f} | {p['ignis_int4'] / p['ort_int4']:.2f} |",
                      flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
