#!/usr/bin/env python3
"""Writes a small audio front-end-like model made of the long-tail ops (Pow, Log, tf2onnx's
LeakyRelu as Max(x, 0.2x), Transpose, unfolded BatchNormalization, Clip, Reduce*, Sqrt) for
`ignis bench MODEL --profile`. Usage: python3 bench/audio_frontend_model.py OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
B, F, N = 4, 257, 1000
x = h.make_tensor_value_info("x", T.FLOAT, [B, F, N])
inits = [nh.from_array(np.array(2.0, np.float32), "two"),
         nh.from_array(np.array(1e-6, np.float32), "eps"),
         nh.from_array(np.array(0.2, np.float32), "slope"),
         nh.from_array(np.array([2], np.int64), "ax2"),
         nh.from_array(np.array([1], np.int64), "ax1"),
         nh.from_array(np.array(-4.0, np.float32), "lo"),
         nh.from_array(np.array(4.0, np.float32), "hi")]
rng = np.random.default_rng(0)
for n, v in [("bn_s", rng.uniform(0.5, 1.5, N)), ("bn_b", rng.normal(size=N)), ("bn_m", rng.normal(size=N)), ("bn_v", rng.uniform(0.5, 2, N))]:
    inits.append(nh.from_array(v.astype(np.float32), n))
nodes = [
    h.make_node("Pow", ["x", "two"], ["p"]),
    h.make_node("Add", ["p", "eps"], ["pe"]),
    h.make_node("Log", ["pe"], ["l"]),
    h.make_node("Mul", ["l", "slope"], ["ls"]),
    h.make_node("Max", ["l", "ls"], ["a"]),
    h.make_node("Transpose", ["a"], ["t"], perm=[0, 2, 1]),            # [B, N, F]
    h.make_node("BatchNormalization", ["t", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"]),  # channels = N
    h.make_node("Clip", ["bn", "lo", "hi"], ["c"]),
    h.make_node("ReduceMean", ["c", "ax2"], ["y_mean"], keepdims=0),   # innermost
    h.make_node("ReduceSum", ["p", "ax1"], ["e"], keepdims=1),         # outer axis
    h.make_node("Sqrt", ["e"], ["y_rms"]),
    h.make_node("ReduceMax", ["c", "ax1"], ["y_max"], keepdims=0),
]
g = h.make_graph(nodes, "audio_frontend", [x],
                 [h.make_tensor_value_info("y_mean", T.FLOAT, [B, N]), h.make_tensor_value_info("y_rms", T.FLOAT, [B, 1, N]), h.make_tensor_value_info("y_max", T.FLOAT, [B, F]), h.make_tensor_value_info("c", T.FLOAT, [B, N, F])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
m.ir_version = 8
onnx.checker.check_model(m, full_check=True)
onnx.save(m, sys.argv[1])
