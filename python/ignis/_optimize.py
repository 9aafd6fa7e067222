# SPDX-License-Identifier: Apache-2.0
"""ignis.optimize(): the engine's graph passes run offline, as `ignis optimize` does."""

import os

from . import _errors, _ignis
from ._session import _ENGINE_OPT_LEVEL, GraphOptimizationLevel, _enum_member

_LEVEL_NAMES = {"none": 0, "basic": 1, "extended": 2, "all": 3}


class OptimizeReport:
    """What optimize() changed: op type -> node count before and after, node, parameter
    and FLOP counts (symbolic dims = 1; -1 when unknown), (pass name, rewrites) pairs and
    the files written."""

    __slots__ = (
        "ops_before",
        "ops_after",
        "nodes_before",
        "nodes_after",
        "parameters_before",
        "parameters_after",
        "flops_before",
        "flops_after",
        "passes",
        "files_written",
    )

    def __init__(self, fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self):
        return (
            f"OptimizeReport(nodes {self.nodes_before} -> {self.nodes_after}, "
            f"parameters {self.parameters_before} -> {self.parameters_after}, passes={self.passes!r})"
        )


def _engine_level(level):
    if isinstance(level, str):
        try:
            return _LEVEL_NAMES[level.lower()]
        except KeyError:
            names = ", ".join(repr(n) for n in _LEVEL_NAMES)
            raise _errors.InvalidArgument(f"optimization level {level!r} is not one of {names}") from None
    return _ENGINE_OPT_LEVEL[int(_enum_member(GraphOptimizationLevel, level, "level"))]


def optimize(model, output, level="extended", dot_dir=None):
    """Reads the ONNX file `model`, runs ignis's graph passes (constant folding, fusions,
    cleanups) and writes the optimized model to `output`.

    level: "none", "basic", "extended" (default: standard ONNX ops only, so any ONNX runtime
    runs the result) or "all" (may also write ai.ignis fused ops, which only ignis runs); a
    GraphOptimizationLevel is accepted too.  dot_dir: also write before.dot / after.dot there
    (and SVGs when Graphviz `dot` is installed).  Returns an OptimizeReport."""
    fields = _ignis.optimize(
        os.fsdecode(model), os.fsdecode(output), _engine_level(level), os.fsdecode(dot_dir) if dot_dir else ""
    )
    return OptimizeReport(fields)
