# SPDX-License-Identifier: Apache-2.0
"""End-to-end parity of the recurrent ops (LSTM, GRU, RNN) on small torch models.

    IGNIS_BIN=build/ignis python3 -m pytest tests/models/test_recurrent.py

Each model is built with a fixed seed and exported by torch.onnx.export. Torch is
Debian's (/usr/bin/python3), not the interpreter running pytest, so the export runs
in a subprocess; the tests skip (only) when /usr/bin/python3 has no torch. ignis runs the
exported file through its command line and is compared with onnxruntime at
|ignis - ort| <= 1e-4 + 1e-3 * |ort|.
"""

import os
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
TORCH_PYTHON = "/usr/bin/python3"
ATOL = 1e-4
RTOL = 1e-3
TIMEOUT = 600

# Writes lstm_lm.onnx, bigru.onnx and rnn.onnx into the folder argv[1] (one torch start-up).
EXPORT_SCRIPT = textwrap.dedent('''
    import sys
    import torch

    out_dir = sys.argv[1]

    class LstmLm(torch.nn.Module):
        """Embedding + 2-layer LSTM + Linear: a tiny language model."""
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(50, 16)
            self.lstm = torch.nn.LSTM(16, 24, num_layers=2, batch_first=True)
            self.head = torch.nn.Linear(24, 50)

        def forward(self, tokens):
            y, (h, c) = self.lstm(self.emb(tokens))
            return self.head(y), h, c

    class BiGru(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(10, 12, bidirectional=True)

        def forward(self, x, h0):
            return self.gru(x, h0)

    class PlainRnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.RNN(8, 6, num_layers=2, nonlinearity="relu", batch_first=True)
            self.rnn_tanh = torch.nn.RNN(6, 5)

        def forward(self, x):
            y, h = self.rnn(x)
            z, g = self.rnn_tanh(y.transpose(0, 1))
            return z, h, g

    def export(kind):
        if kind == "lstm_lm":
            model, args = LstmLm(), (torch.randint(0, 50, (3, 7)),)
            names, outs = ["tokens"], ["logits", "h", "c"]
        elif kind == "bigru":
            model, args = BiGru(), (torch.randn(5, 2, 10), torch.randn(2, 2, 12))
            names, outs = ["x", "h0"], ["y", "h"]
        else:
            model, args = PlainRnn(), (torch.randn(4, 6, 8),)
            names, outs = ["x"], ["z", "h", "g"]
        model.eval()
        torch.onnx.export(model, args, f"{out_dir}/{kind}.onnx", input_names=names, output_names=outs,
                          opset_version=14)

    for kind in ("lstm_lm", "bigru", "rnn"):
        torch.manual_seed(0)
        export(kind)
''')


def _torch_available():
    if not os.access(TORCH_PYTHON, os.X_OK):
        return False
    res = subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True, timeout=120)
    return res.returncode == 0


def _ignis_bin():
    p = Path(os.environ.get("IGNIS_BIN", "build/ignis"))
    if not p.is_absolute() and not p.exists():
        p = ROOT / p
    return p


@pytest.fixture(scope="module")
def torch_models(tmp_path_factory):
    """Folder holding the three exported torch models."""
    if not _torch_available():
        pytest.skip(f"{TORCH_PYTHON} has no torch, which these models are exported with")
    out_dir = tmp_path_factory.mktemp("torch_models")
    script = out_dir / "export.py"
    script.write_text(EXPORT_SCRIPT)
    res = subprocess.run([TORCH_PYTHON, str(script), str(out_dir)], capture_output=True, text=True,
                         timeout=TIMEOUT)
    if res.returncode != 0:
        pytest.fail(f"torch export failed:\n{res.stderr[-4000:]}")
    return out_dir


def _run_ignis(model, feeds, work):
    exe = _ignis_bin()
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        pytest.fail(f"ignis binary not found at {exe} (build it, or set IGNIS_BIN)")
    out_dir = work / "outputs"
    out_dir.mkdir()
    cmd = [str(exe), "run", str(model)]
    for name, arr in feeds.items():
        path = work / f"{name}.npy"
        np.save(path, arr)
        cmd += ["--input", f"{name}={path}"]
    cmd += ["--output-dir", str(out_dir)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    if res.returncode != 0:
        pytest.fail(f"ignis exited with {res.returncode}: {' '.join(cmd)}\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}")
    return {p.stem: np.load(p) for p in out_dir.glob("*.npy")}


def _run_onnxruntime(model, feeds):
    import onnxruntime as ort
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def _compare(name, feeds, model, tmp_path):
    """Runs `model` in onnxruntime and ignis; every output within ATOL + RTOL * |ort|."""
    want = _run_onnxruntime(model, feeds)
    got = _run_ignis(model, feeds, tmp_path)
    for out_name, ref in want.items():
        assert out_name in got, f"{name}: ignis wrote no {out_name}.npy (it wrote {sorted(got)})"
        out = got[out_name]
        assert out.shape == ref.shape and out.dtype == ref.dtype, \
            f"{name} {out_name}: {out.dtype}{list(out.shape)} vs onnxruntime {ref.dtype}{list(ref.shape)}"
        if not ref.size:
            continue
        diff = np.abs(out.astype(np.float64) - ref)
        tol = ATOL + RTOL * np.abs(ref)
        worst = np.unravel_index(np.argmax(diff - tol), ref.shape)
        assert np.all(diff <= tol), (f"{name} {out_name}: max |d| {diff.max():.3g} beyond tolerance; at {worst} "
                                     f"ignis {out[worst]!r} vs onnxruntime {ref[worst]!r}")


def _check(kind, feeds, models, tmp_path):
    _compare(kind, feeds, models / f"{kind}.onnx", tmp_path)


def test_lstm_language_model(torch_models, tmp_path):
    rng = np.random.default_rng(1)
    _check("lstm_lm", {"tokens": rng.integers(0, 50, size=(3, 7), dtype=np.int64)}, torch_models, tmp_path)


def test_bidirectional_gru(torch_models, tmp_path):
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((5, 2, 10), dtype=np.float32),
             "h0": rng.standard_normal((2, 2, 12), dtype=np.float32)}
    _check("bigru", feeds, torch_models, tmp_path)


def test_plain_rnn(torch_models, tmp_path):
    rng = np.random.default_rng(3)
    _check("rnn", {"x": rng.standard_normal((4, 6, 8), dtype=np.float32)}, torch_models, tmp_path)


# Single-node models for what torch does not export (peepholes, clip, input_forget,
# sequence_lens, reverse, GRU without linear_before_reset, other activations), built with
# onnx.helper and compared with onnxruntime the same way.
def _node_model(op, hidden, x_shape, consts, attrs, extra_inputs=(), outputs=("Y", "Y_h")):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inputs = ["X", "W", "R", "B", *extra_inputs]
    node = helper.make_node(op, inputs, list(outputs), hidden_size=hidden, **attrs)
    graph = helper.make_graph(
        [node], f"{op.lower()}_node", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def _check_node_model(name, model, x, tmp_path):
    import onnx

    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    _compare(name, {"X": x}, path, tmp_path)


def _weights(rng, dirs, gates, hidden, inp):
    return {"W": (0.4 * rng.standard_normal((dirs, gates * hidden, inp))).astype(np.float32),
            "R": (0.4 * rng.standard_normal((dirs, gates * hidden, hidden))).astype(np.float32),
            "B": (0.2 * rng.standard_normal((dirs, 2 * gates * hidden))).astype(np.float32)}


def test_lstm_node_peepholes_clip_input_forget_reverse(tmp_path):
    rng = np.random.default_rng(4)
    seq, batch, inp, hidden = 6, 3, 7, 5
    consts = _weights(rng, 1, 4, hidden, inp)
    consts["sequence_lens"] = np.array([6, 2, 4], dtype=np.int32)
    consts["initial_h"] = rng.standard_normal((1, batch, hidden)).astype(np.float32)
    consts["initial_c"] = rng.standard_normal((1, batch, hidden)).astype(np.float32)
    consts["P"] = (0.3 * rng.standard_normal((1, 3 * hidden))).astype(np.float32)
    model = _node_model("LSTM", hidden, (seq, batch, inp), consts,
                        {"direction": "reverse", "clip": 0.8, "input_forget": 1},
                        ["sequence_lens", "initial_h", "initial_c", "P"], ("Y", "Y_h", "Y_c"))
    _check_node_model("lstm_node", model, rng.standard_normal((seq, batch, inp)).astype(np.float32), tmp_path)


def test_gru_node_bidirectional_lengths_activations(tmp_path):
    rng = np.random.default_rng(5)
    seq, batch, inp, hidden = 5, 4, 6, 7
    consts = _weights(rng, 2, 3, hidden, inp)
    consts["sequence_lens"] = np.array([5, 1, 3, 4], dtype=np.int32)
    model = _node_model("GRU", hidden, (seq, batch, inp), consts,
                        {"direction": "bidirectional", "linear_before_reset": 0, "clip": 0.9,
                         "activations": ["HardSigmoid", "LeakyRelu", "Sigmoid", "Softsign"],
                         "activation_alpha": [0.25, 0.1], "activation_beta": [0.45]},
                        ["sequence_lens"])
    _check_node_model("gru_node", model, rng.standard_normal((seq, batch, inp)).astype(np.float32), tmp_path)


def test_rnn_node_relu_lengths(tmp_path):
    rng = np.random.default_rng(6)
    seq, batch, inp, hidden = 4, 3, 5, 6
    consts = _weights(rng, 2, 1, hidden, inp)
    consts["sequence_lens"] = np.array([2, 4, 3], dtype=np.int32)
    model = _node_model("RNN", hidden, (seq, batch, inp), consts,
                        {"direction": "bidirectional", "activations": ["Relu", "Tanh"], "clip": 1.1},
                        ["sequence_lens"])
    _check_node_model("rnn_node", model, rng.standard_normal((seq, batch, inp)).astype(np.float32), tmp_path)
