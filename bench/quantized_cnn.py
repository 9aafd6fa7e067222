#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Quantized CNNs: ignis vs onnxruntime, float32 vs int8 (static and dynamic), on the zoo's CNNs.

    python3 bench/quantized_cnn.py [--models resnet50 mobilenet_v2 efficientnet_b0] [--threads 2] [--rounds 3]
                                   [--runs 30] [--json OUT.json]

For each model (built by tools/make_zoo.py into models/) three files run in both engines:
  float        the float32 model;
  ort_qdq      onnxruntime's quantize_static: QDQ format, uint8 activations, int8 weights per
               channel, min/max calibration on four random inputs from a fixed seed;
  ort_dynamic  onnxruntime's quantize_dynamic (int8 weights per tensor, its default):
               DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul per convolution.
The QDQ file is standard ONNX; ignis runs it as QLinearConv / QLinearMatMul
(fuse_qdq_into_qlinear), onnxruntime as its own int8 kernels. The input is one image from a
fixed seed. Every engine runs in a fresh process per round (ignis through `ignis bench
--json`, onnxruntime through bench/peer_runner.py), all six in an order rotated by one each round;
reported are the medians over rounds of each round's p50 latency, ignis / onnxruntime
(below 1: ignis is faster) and each file against ignis float32.
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
from quantized import add_common_args, median_times, run_ignis, run_peer  # noqa: E402
from recurrent import cpu_model  # noqa: E402


def model_input(path):
    import onnx

    graph_input = onnx.load(path, load_external_data=False).graph.input[0]
    return graph_input.name, [d.dim_value or 1 for d in graph_input.type.tensor_type.shape.dim]


def make_variants(folder, name):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

    src = os.path.join(ROOT, "models", name + ".onnx")
    if not os.path.exists(src):
        sys.exit(f"{src} is missing: run /usr/bin/python3 tools/make_zoo.py --out models")
    input_name, shape = model_input(src)

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(0)
            self.feeds = iter([{input_name: rng.standard_normal(shape).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.feeds, None)

    qdq = os.path.join(folder, name + "_ort_qdq.onnx")
    quantize_static(src, qdq, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    dynamic = os.path.join(folder, name + "_ort_dynamic.onnx")
    quantize_dynamic(src, dynamic, weight_type=QuantType.QInt8)
    return {"float": src, "ort_qdq": qdq, "ort_dynamic": dynamic}


def make_inputs(folder, name):
    input_name, shape = model_input(os.path.join(ROOT, "models", name + ".onnx"))
    inputs = os.path.join(folder, name + "_inputs")
    os.makedirs(inputs, exist_ok=True)
    np.save(os.path.join(inputs, input_name + ".npy"), np.random.default_rng(1).standard_normal(shape).astype(np.float32))
    return inputs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap, ["resnet50", "mobilenet_v2", "efficientnet_b0"])
    args = ap.parse_args()
    results = {"cpu": cpu_model(), "threads": args.threads, "rounds": args.rounds, "models": {}}
    print(f"CPU: {results['cpu']}, {args.threads} threads, batch 1, medians of {args.rounds} rounds of p50 latency")
    print(f"{'model':<28} {'ignis ms':>9} {'ort ms':>9} {'ignis/ort':>9} {'vs ig f32':>9} {'ort vs f32':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            variants = make_variants(folder, name)
            inputs = make_inputs(folder, name)
            runs = []
            for v, path in variants.items():
                runs.append(((v, "ignis"), lambda p=path: run_ignis(args.ignis, p, inputs, args.threads, args.runs, "f32")))
                runs.append(((v, "ort"), lambda p=path: run_peer("onnxruntime", p, inputs, args.threads, args.runs)))
            medians = median_times(runs, args.rounds)
            ig_float, ort_float = medians[("float", "ignis")], medians[("float", "ort")]
            for v in variants:
                a, b = medians[(v, "ignis")], medians[(v, "ort")]
                results["models"][f"{name}/{v}"] = {"ignis_p50_ms": a, "onnxruntime_p50_ms": b, "ratio": a / b,
                                                     "vs_ignis_float": a / ig_float, "ort_vs_ort_float": b / ort_float}
                print(f"{name + '/' + v:<28} {a:9.2f} {b:9.2f} {a / b:9.2f} {a / ig_float:9.2f} {b / ort_float:10.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
