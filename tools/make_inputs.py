#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Deterministic random inputs for a zoo model, from its sidecar JSON.

    python3 tools/make_inputs.py models/bert_base.json --out /tmp/bert_in [--seed 0] [--batch N]

writes one NAME.npy per model input.  As a library:

    from make_inputs import make_inputs
    feeds = make_inputs(json.load(open("models/bert_base.json")), seed=0)

Each input in the sidecar's "inputs" list has name, dtype and shape, and a
"fill" telling what to put in it:

  normal          float values drawn from N(0, 1)
  token_ids       integers uniform in [0, high)   ("high": the vocabulary size)
  attention_mask  all ones except the last "pad_tail" positions, which are 0
  zeros / ones    constant tensors

Without "fill", floating inputs get "normal", and integer inputs named like
"*mask*" get "attention_mask", like "*ids*" get "token_ids".  All inputs are
drawn in order from one numpy Generator seeded with `seed`, so the same
(spec, seed, batch) always gives the same arrays.  Needs numpy only.
"""

import argparse
import json
import os
import sys

import numpy as np

DEFAULT_VOCAB = 30522
DEFAULT_PAD_TAIL = 16


def _fill_kind(inp):
    if "fill" in inp:
        return inp["fill"]
    dtype = np.dtype(inp["dtype"])
    name = inp["name"].lower()
    if dtype.kind == "f":
        return "normal"
    if "mask" in name:
        return "attention_mask"
    if "ids" in name:
        return "token_ids"
    return "zeros"


def _input_list(spec):
    if isinstance(spec, (str, os.PathLike)):
        with open(spec) as f:
            spec = json.load(f)
    if isinstance(spec, dict):
        spec = spec["inputs"]
    return list(spec)


def make_inputs(spec, seed=0, batch=None):
    """Returns {input name: ndarray} for a sidecar dict, its "inputs" list, or a
    path to the sidecar.  `batch`, when given, replaces the leading dimension."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for inp in _input_list(spec):
        dtype = np.dtype(inp["dtype"])
        shape = [int(d) for d in inp["shape"]]
        if batch is not None and shape:
            shape[0] = int(batch)
        shape = tuple(shape)
        kind = _fill_kind(inp)
        if kind == "normal":
            arr = rng.standard_normal(shape, dtype=np.float64)
        elif kind == "token_ids":
            arr = rng.integers(int(inp.get("low", 0)), int(inp.get("high", DEFAULT_VOCAB)), size=shape)
        elif kind == "attention_mask":
            arr = np.ones(shape, dtype=np.int64)
            tail = int(inp.get("pad_tail", DEFAULT_PAD_TAIL))
            if tail > 0 and shape:
                arr[..., max(shape[-1] - tail, 0):] = 0
        elif kind == "zeros":
            arr = np.zeros(shape)
        elif kind == "ones":
            arr = np.ones(shape)
        else:
            raise ValueError(f"input {inp['name']}: unknown fill {kind!r}")
        feeds[inp["name"]] = np.ascontiguousarray(arr.astype(dtype, copy=False))
    return feeds


def write_inputs(spec, out_dir, seed=0, batch=None):
    """Writes NAME.npy for every input; returns {name: path}."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for name, arr in make_inputs(spec, seed=seed, batch=batch).items():
        path = os.path.join(out_dir, name + ".npy")
        np.save(path, arr)
        paths[name] = path
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(description="Write deterministic random .npy inputs for a zoo model.")
    p.add_argument("sidecar", help="the model's sidecar JSON (models/NAME.json)")
    p.add_argument("--out", required=True, help="folder for the NAME.npy files")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, help="override the batch (leading) dimension")
    args = p.parse_args(argv)
    for name, path in write_inputs(args.sidecar, args.out, seed=args.seed, batch=args.batch).items():
        arr = np.load(path)
        print(f"{name}: {arr.dtype} {list(arr.shape)} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
