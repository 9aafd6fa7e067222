#!/usr/bin/env python3
"""Writes the ONNX backend node test suite that ships as generators in PyPI's `onnx` wheel.

Debian's libonnx-testdata stops at ONNX 1.12 (opset 17). The `onnx` wheel carries the
generators of every node case up to its newest opset; this script runs them and writes each
case in the layout of Debian's suite, which `ignis_conformance` reads:

    OUT/<case>/model.onnx
    OUT/<case>/test_data_set_<N>/input_<i>.pb, output_<i>.pb
    OUT/<case>/tolerance.txt        "rtol atol", the case's own tolerances

Sequence, map and optional inputs/outputs are written the way onnx's own tool writes them
(SequenceProto / MapProto / OptionalProto). OUT/VERSION names the onnx version used; a
folder whose VERSION matches is reused unless --force is given.

Usage: python3 tools/make_node_suite.py --out build/node-suite [--force]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import warnings


def write_value(path: str, value, type_proto, name: str) -> None:
    from onnx import TensorProto, numpy_helper

    if type_proto.HasField("map_type"):
        proto = numpy_helper.from_dict(value, name)
    elif type_proto.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, name)
    elif type_proto.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, name)
    elif isinstance(value, TensorProto):
        proto = value
    else:
        proto = numpy_helper.from_array(value, name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def write_case(out: str, case) -> None:
    case_dir = os.path.join(out, case.name)
    os.makedirs(case_dir, exist_ok=True)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    with open(os.path.join(case_dir, "tolerance.txt"), "w") as f:
        f.write(f"{case.rtol!r} {case.atol!r}\n")
    graph = case.model.graph
    for n, (inputs, outputs) in enumerate(case.data_sets or []):
        set_dir = os.path.join(case_dir, f"test_data_set_{n}")
        os.makedirs(set_dir, exist_ok=True)
        for i, value in enumerate(inputs):
            write_value(os.path.join(set_dir, f"input_{i}.pb"), value, graph.input[i].type, graph.input[i].name)
        for i, value in enumerate(outputs):
            write_value(os.path.join(set_dir, f"output_{i}.pb"), value, graph.output[i].type, graph.output[i].name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder to write the cases into")
    ap.add_argument("--force", action="store_true", help="rewrite even when OUT/VERSION matches")
    args = ap.parse_args()

    import onnx
    from onnx.backend.test.case import node

    version_file = os.path.join(args.out, "VERSION")
    if not args.force and os.path.exists(version_file):
        with open(version_file) as f:
            if f.read().strip() == onnx.__version__:
                print(f"node suite of onnx {onnx.__version__} already in {args.out}")
                return 0
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators overflow casts on purpose
        cases = node.collect_testcases(None)
        for case in cases:
            write_case(args.out, case)
    with open(version_file, "w") as f:
        f.write(onnx.__version__ + "\n")
    print(f"wrote {len(cases)} node cases of onnx {onnx.__version__} to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
