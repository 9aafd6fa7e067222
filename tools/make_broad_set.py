#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds the broad model set: architectures and exporters the zoo (tools/make_zoo.py) and
the kernels were not tuned on, for bench/broad.py.

    /usr/bin/python3 tools/make_broad_set.py --out models/broad
    /usr/bin/python3 tools/make_broad_set.py --out models/broad --only gru_tagger skl_mlp
    /usr/bin/python3 tools/make_broad_set.py --list

Every model NAME is written as NAME.onnx together with a sidecar NAME.json in the zoo's
format (inputs to feed, expected outputs, op histogram), so tools/make_inputs.py and the
benchmarks read both sets alike.  Exporters:

  torch         torch.onnx.export (opset 17): torchvision classifiers and segmenters, a
                ViT-Ti/16, and custom audio, OCR (DBNet detector, CRNN), GRU and UNet models
  tf2onnx-like  hand-built graphs with tf2onnx's idioms       (tools/broad_graphs.py)
  paddle2onnx-like  hand-built graphs with paddle2onnx's idioms (tools/broad_graphs.py)
  skl2onnx      scikit-learn pipelines                          (tools/broad_sklearn.py)
  tf2onnx       optional, real Keras applications through tf2onnx (tools/broad_keras.py);
                only with --only/--all and a Python that has tensorflow and tf2onnx

Weights are random with fixed seeds; nothing is downloaded.  A model whose modules this
Python lacks (torch here, skl2onnx there) is built by another python3 on PATH or named with
--python that has them, so one command builds the whole set.
"""

import argparse
import collections
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import broad_graphs  # noqa: E402
import broad_keras  # noqa: E402
import broad_sklearn  # noqa: E402
import broad_torch as bt  # noqa: E402
from make_zoo import export_onnx, write_sidecar  # noqa: E402

Entry = collections.namedtuple("Entry", "build exporter needs optional description")

TORCH = ("torch", "torchvision")


def _torch(build, description):
    return Entry(build, "torch", TORCH, False, description)


def _graph(build, exporter, description):
    return Entry(build, exporter, ("onnx",), False, description)


MODELS = collections.OrderedDict([
    ("shufflenet_v2", _torch(bt.torchvision_classifier("shufflenet_v2_x1_0"), "ShuffleNetV2 x1.0 (channel shuffle)")),
    ("squeezenet", _torch(bt.torchvision_classifier("squeezenet1_1"), "SqueezeNet 1.1 (fire modules, Concat)")),
    ("regnet_y_400mf", _torch(bt.torchvision_classifier("regnet_y_400mf"), "RegNetY-400MF (group conv + SE)")),
    ("regnet_x_800mf", _torch(bt.torchvision_classifier("regnet_x_800mf"), "RegNetX-800MF (group conv)")),
    ("convnext_tiny", _torch(bt.torchvision_classifier("convnext_tiny"),
                             "ConvNeXt-T (7x7 depthwise, LayerNorm, GELU)")),
    ("mnasnet", _torch(bt.torchvision_classifier("mnasnet1_0"), "MNASNet 1.0")),
    ("mobilenet_v3_small", _torch(bt.torchvision_classifier("mobilenet_v3_small"), "MobileNetV3-Small (HardSwish, SE)")),
    ("mobilenet_v3_large", _torch(bt.torchvision_classifier("mobilenet_v3_large"), "MobileNetV3-Large (HardSwish, SE)")),
    ("googlenet", _torch(bt.torchvision_classifier("googlenet", aux_logits=False, init_weights=True),
                         "GoogLeNet (inception branches)")),
    ("densenet121", _torch(bt.torchvision_classifier("densenet121"), "DenseNet-121 (dense Concat)")),
    ("resnext50", _torch(bt.torchvision_classifier("resnext50_32x4d"), "ResNeXt-50 32x4d (group conv)")),
    ("efficientnet_b1", _torch(bt.torchvision_classifier("efficientnet_b1"), "EfficientNet-B1 (SiLU, SE)")),
    ("vit_tiny", _torch(bt.vit_tiny, "ViT-Ti/16 (torchvision VisionTransformer, 192 wide)")),
    ("deeplabv3_mobilenet", _torch(bt.torchvision_segmenter("deeplabv3_mobilenet_v3_large"),
                                   "DeepLabV3 / MobileNetV3-Large (dilated conv, ASPP, Resize)")),
    ("lraspp_mobilenet", _torch(bt.torchvision_segmenter("lraspp_mobilenet_v3_large"),
                                "LR-ASPP / MobileNetV3-Large (Resize-heavy)")),
    ("audio_frontend", _torch(bt.audio_frontend, "Conv1d filterbank, Pow, Log, BN, Conv2d stack")),
    ("dbnet_detector", _torch(bt.dbnet_detector, "DBNet-style OCR text detector (FPN, ConvTranspose, Sigmoid)")),
    ("crnn_recognizer", _torch(bt.crnn_recognizer, "CRNN OCR recognizer (conv + bidirectional LSTM)")),
    ("gru_tagger", _torch(bt.gru_tagger, "2-layer GRU sequence tagger")),
    ("unet_keypoints", _torch(bt.unet_keypoints, "UNet keypoint net (ConvTranspose, skip Concat)")),
    ("tf_mobilenet_nhwc", _graph(broad_graphs.tf_mobilenet_nhwc, "tf2onnx-like",
                                 "Keras MobileNet 0.5: NHWC, Pad, unfolded BN, Clip, ReduceMean, MatMul")),
    ("tf_yolo_tiny_nhwc", _graph(broad_graphs.tf_yolo_tiny_nhwc, "tf2onnx-like",
                                 "YOLOv3-tiny trunk: Transpose around every Conv, Max(x, 0.1x)")),
    ("paddle_lcnet", _graph(broad_graphs.paddle_lcnet, "paddle2onnx-like",
                            "PP-LCNet-like: Conv+BN+HardSwish, SE, ReduceMean pooling")),
    ("paddle_seg_lite", _graph(broad_graphs.paddle_seg_lite, "paddle2onnx-like",
                               "PP-LiteSeg-like: Resize with scales, skip Add")),
    ("skl_mlp", Entry(broad_sklearn.skl_mlp, "skl2onnx", ("sklearn", "skl2onnx"), False,
                      "StandardScaler + MLPClassifier(512, 256), batch 32")),
    ("skl_forest", Entry(broad_sklearn.skl_forest, "skl2onnx", ("sklearn", "skl2onnx"), False,
                         "StandardScaler + PCA + RandomForest(100), batch 32")),
    ("keras_mobilenet_v2", Entry(broad_keras.keras_application("MobileNetV2"), "tf2onnx", broad_keras.NEEDS, True,
                                 "keras.applications.MobileNetV2(weights=None) through tf2onnx")),
    ("keras_efficientnet_v2", Entry(broad_keras.keras_application("EfficientNetV2B0", include_preprocessing=False),
                                    "tf2onnx", broad_keras.NEEDS, True,
                                    "keras.applications.EfficientNetV2B0(weights=None) through tf2onnx")),
])


def has_modules(modules, interpreter=None):
    if interpreter is None:
        import importlib.util
        return all(importlib.util.find_spec(m) is not None for m in modules)
    code = "import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in %r) else 1)" % (list(modules),)
    try:
        return subprocess.run([interpreter, "-c", code], capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def other_interpreters(extra):
    seen, out = {os.path.realpath(sys.executable)}, []
    for cand in list(extra) + [shutil.which("python3"), "/usr/bin/python3"]:
        if cand and os.path.exists(cand) and os.path.realpath(cand) not in seen:
            seen.add(os.path.realpath(cand))
            out.append(cand)
    return out


def make_one(name, out_dir):
    entry = MODELS[name]
    path = os.path.join(out_dir, name + ".onnx")
    t0 = time.perf_counter()
    if entry.exporter == "torch":
        import torch
        model, example, inputs, outputs, axes, info = entry.build()
        t1 = time.perf_counter()
        export_onnx(model, example, path, [i["name"] for i in inputs], [o["name"] for o in outputs], axes)
        producer = {"torch": torch.__version__}
    else:
        inputs, outputs, axes, info, producer = entry.build(path)
        t1 = time.perf_counter()
    t2 = time.perf_counter()
    info = dict(info, exporter=entry.exporter)
    write_sidecar(out_dir, name, inputs, outputs, axes, info, producer, t1 - t0, t2 - t1)


def build_here(names, out_dir):
    failed = []
    for name in names:
        print(f"== {name}", flush=True)
        try:
            make_one(name, out_dir)
        except Exception as e:  # keep going: report every model that did not build
            print(f"{name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            failed.append(name)
        sys.stdout.flush()
    return failed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.path.join("models", "broad"), help="output folder (default: models/broad)")
    p.add_argument("--only", nargs="+", metavar="NAME", choices=list(MODELS), help="build only these models")
    p.add_argument("--all", action="store_true", help="also build the optional models (real tf2onnx)")
    p.add_argument("--python", action="append", default=[], metavar="EXE",
                   help="another interpreter to build models whose modules this one lacks (repeatable)")
    p.add_argument("--here", action="store_true", help="build only what this interpreter can (no delegation)")
    p.add_argument("--list", action="store_true", help="list the models and exit")
    args = p.parse_args(argv)

    if args.list:
        for name, e in MODELS.items():
            print(f"{name:22s} {e.exporter:17s} {e.description}{'  (optional)' if e.optional else ''}")
        return 0

    names = args.only or [n for n, e in MODELS.items() if args.all or not e.optional]
    os.makedirs(args.out, exist_ok=True)
    t_all = time.perf_counter()
    local = [n for n in names if has_modules(MODELS[n].needs)]
    failed = build_here(local, args.out)
    rest = [n for n in names if n not in local]
    for interp in ([] if args.here else other_interpreters(args.python)):
        if not rest:
            break
        can = [n for n in rest if has_modules(MODELS[n].needs, interp)]
        if not can:
            continue
        print(f"== building {' '.join(can)} with {interp}", flush=True)
        res = subprocess.run([interp, os.path.abspath(__file__), "--out", args.out, "--here", "--only", *can])
        if res.returncode != 0:
            failed.append(f"(some of {' '.join(can)})")
        rest = [n for n in rest if n not in can]
    for n in rest:
        needs = ", ".join(MODELS[n].needs)
        print(f"{n}: SKIPPED: no interpreter has {needs} (pass --python EXE)", file=sys.stderr)
        if not MODELS[n].optional:
            failed.append(n)
    print(f"done in {time.perf_counter() - t_all:.1f} s" + (f"; FAILED: {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
