#!/usr/bin/env python3
"""Exports small TorchScript models with data-dependent control flow to ONNX (If, Loop, a Loop
holding an If, a Loop collecting a list), for the control-flow parity tests (tests/models/test_control_flow.py).

Run with Debian's Python, where torch lives: /usr/bin/python3 tools/export_control_flow.py OUT_DIR
Weights come from a fixed seed, so the files are the same on every run.
"""
import sys
from pathlib import Path
from typing import List

import torch
from torch import nn


class DataDependentIf(nn.Module):
    """Branches on the data; the branches give different shapes."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x):
        if bool(x.sum() > 0):
            return self.lin(x).relu() * 2.0
        return torch.flatten(x.abs() - 3.0)


class LoopDecoder(nn.Module):
    """A recurrent update run `steps` times, stopping early once the state grows large."""

    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(8, 8)

    def forward(self, x, steps):
        h = torch.zeros_like(x)
        total = torch.zeros_like(x)
        i = 0
        n = int(steps)
        while i < n and bool(h.abs().sum() < 1000.0):
            h = torch.tanh(self.cell(h) + x)
            total = total + h
            i += 1
        return h, total


class LoopWithIf(nn.Module):
    """A loop whose body branches on the iteration's data."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(5, 5)
        self.b = nn.Linear(5, 5)

    def forward(self, x, steps):
        h = x
        for _ in range(int(steps)):
            if bool(h.mean() > 0):
                h = torch.sigmoid(self.a(h))
            else:
                h = self.b(h) - 0.5
        return h


class LoopCollect(nn.Module):
    """A loop that appends each step's state to a list (a Sequence in ONNX) and stacks it."""

    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(6, 6)

    def forward(self, x, steps):
        h = x
        states: List[torch.Tensor] = []
        for _ in range(int(steps)):
            h = torch.tanh(self.cell(h))
            states.append(h)
        states.append(x)
        return torch.stack(states, 0)


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    models = {
        "if_data_dependent": (DataDependentIf(), (torch.randn(3, 6),), ["x"], ["y"]),
        "loop_decoder": (LoopDecoder(), (torch.randn(2, 8), torch.tensor(4)), ["x", "steps"], ["h", "total"]),
        "loop_with_if": (LoopWithIf(), (torch.randn(4, 5), torch.tensor(3)), ["x", "steps"], ["y"]),
        "loop_collect": (LoopCollect(), (torch.randn(2, 6), torch.tensor(3)), ["x", "steps"], ["y"]),
    }
    for name, (module, args, inputs, outputs) in models.items():
        module.eval()
        scripted = torch.jit.script(module)
        torch.onnx.export(scripted, args, str(out / f"{name}.onnx"), input_names=inputs, output_names=outputs,
                          opset_version=16)
        print(f"wrote {out / name}.onnx")


if __name__ == "__main__":
    main()
