# SPDX-License-Identifier: Apache-2.0
"""Real pretrained CNNs on natural images: PaddleOCR's models as the rapidocr_onnxruntime wheel
ships them (paddle2onnx exports), in float32, bfloat16 and calibrated static int8.

    IGNIS_BIN=build/ignis python3 -m pytest -q -s tests/models/test_pretrained_ocr.py

Models: the text-orientation classifier (MobileNetV3-style, 2 classes, 3x48x192), the PP-OCRv4
recognizer (CNN + transformer neck, CTC scores over 6625 characters per timestep, 3x48x320 ->
40 timesteps) and the PP-OCRv4 DBNet detector (3x320x320 -> probability map). Inputs: random
crops of the sample images scikit-image and scikit-learn bundle, resized to the model's input,
in BGR, scaled to [-1, 1] as PaddleOCR does, each also rotated by 180 degrees (what the
classifier detects). Every other crop comes from a picture of text (skimage's page and text) so
that the recognizer and detector have something to find. Evaluation and calibration crops come
from different images; page's rows are split between them.

Measured (AMD EPYC, Zen 5 with AVX512_BF16 and VNNI, 2026-12-02), agreement with ignis float32;
onnxruntime's quantize_static (QDQ, int8 per channel, after its quant_pre_process and opset 13)
on the same calibration crops, run in onnxruntime, for comparison:

| model | bf16   | ignis int8 percentile | minmax       | entropy      | ORT int8 minmax | percentile | entropy |
|-------|--------|-----------------------|--------------|--------------|-----------------|------------|---------|
| cls   | 0.9967 | 0.913 (0.880 before *) | 0.847        | 0.650        | 0.873           | 0.897      | 0.873   |
| rec   | 1.0000 | 0.9855 (0.79; 0.9885 (0.82) before *) | 0.959 (0.74) | 0.970 (0.00) | 0.980 (0.69)    | 0.980 (0.74) | -       |
| det   | 1.0000 | 0.9957                | 0.9946       | 0.9963       | 0.9927          | 0.9949     | 0.9927  |

(* before a Conv output read only by a Relu was quantized after the Relu instead of before
it. rec: per timestep; in brackets over the 121 timesteps where float32 reads a character, not
the CTC blank. det: pixels on the same side of PaddleOCR's 0.3 threshold. bf16 leaves det as
it is: it changes MatMul/Gemm only, and det has none.)

The issue's target of 99 % int8 top-1 agreement is not reached by the classifiers, by ignis
or by onnxruntime. The orientation classifier is unsure about most of these crops (51 of 300
have a float32 probability >= 0.9, the threshold at which PaddleOCR acts on its answer), so
small errors flip its top-1; where it is sure, int8 agrees on every crop (entropy: 47 of 51).
Weights alone in int8 (activations left float32) already flip 2.7 % of the crops.
With an accuracy budget (`--max-drop X --metric cosine`, nodes ranked by what each costs
quantized alone) both reach 0.99: cls 0.990 with 27 of its 54 nodes in int8 (64 calibration
crops, budget 0.0003), rec 0.9995 with 18 of 51 (budget 0.002); see
test_int8_within_an_accuracy_budget. Entropy loses every character of rec.
The assertions below hold what is reached; IGNIS_OCR_METHODS=minmax,percentile,entropy also
reports the other calibration methods.

Two steps come before `ignis quantize`: the models import opset 11/12, where
DequantizeLinear has no axis, so weights would get one scale per tensor (depthwise
convolutions then lose most of their channels); onnx's version converter lifts them to opset
13 for per-channel scales. And `ignis optimize` folds each BatchNormalization into its Conv,
so the quantized Conv output is the normalized one, not the raw sum whose channels span very
different ranges (cls with minmax and 32 calibration crops: 0.81 without the fold, 0.85 with it).

Environment: IGNIS_BIN (default build/ignis), IGNIS_OCR_METHODS (default percentile).
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import skimage.data
from onnx import version_converter
from PIL import Image
from sklearn.datasets import load_sample_images

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_parity import _ignis_bin  # noqa: E402

EVAL_SEED = 1
CALIBRATION_SEED = 2
# kind: (file in the wheel, input height, width, eval crops, calibration crops); each crop also
# gives its 180-degree rotation, so the samples are twice these counts.
MODELS = {
    "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", 48, 192, 150, 24),
    "rec": ("ch_PP-OCRv4_rec_infer.onnx", 48, 320, 50, 16),
    "det": ("ch_PP-OCRv4_det_infer.onnx", 320, 320, 10, 8),
}
DET_THRESHOLD = 0.3  # PaddleOCR's (rapidocr config.yaml Det.thresh)
CLS_SURE = 0.9  # PaddleOCR rotates a line only when the classifier is this sure (Cls.cls_thresh)

# Pictures of text: (skimage name, first row, end row). page's rows are split between
# evaluation and calibration.
EVAL_TEXT = [("page", 96, None), ("text", 0, None)]
CALIBRATION_TEXT = [("page", 0, 96)]
EVAL_NATURAL = ["astronaut", "coffee", "chelsea", "rocket", "camera", "coins", "retina", "immunohistochemistry", "china"]
CALIBRATION_NATURAL = ["brick", "grass", "gravel", "moon", "hubble_deep_field", "cell", "clock", "flower"]

# Lowest agreement with float32 each must keep (measured above, less a margin for other CPUs).
INT8_FLOOR = {"cls": 0.83, "rec": 0.98, "det": 0.99}
INT8_FLOOR_CHARACTERS = 0.75  # rec, on timesteps where float32 reads a character
BF16_FLOOR = {"cls": 0.995, "rec": 0.995, "det": 0.995}  # det: 1.0 today (no MatMul/Gemm)


def _model_path(kind):
    # find_spec locates the package without importing it (its pipeline needs OpenCV, which the
    # tests do not install).
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    assert spec is not None, "rapidocr_onnxruntime is missing: pip install --no-deps rapidocr_onnxruntime (tools/setup.sh)"
    path = Path(spec.origin).parent / "models" / MODELS[kind][0]
    assert path.is_file(), f"{path} is missing from the rapidocr_onnxruntime wheel"
    return path


def _image(name):
    if name in ("china", "flower"):
        sample = load_sample_images()
        (img,) = [im for im, f in zip(sample.images, sample.filenames) if Path(f).stem == name]
    else:
        img = getattr(skimage.data, name)()
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    return img[..., :3]


def crops(text, natural, count, height, width, seed):
    """count crops (every other one from a picture of text) and their 180-degree rotations,
    as PaddleOCR feeds its models: BGR, (x / 255 - 0.5) / 0.5, NCHW float32."""
    rng = np.random.default_rng(seed)
    text_sources = [(_image(name)[top:end], (0.2, 0.5)) for name, top, end in text]  # about one line of text
    natural_sources = [(_image(name), (0.2, 1.0)) for name in natural]
    out = []
    for i in range(count):
        sources = text_sources if i % 2 == 0 else natural_sources
        img, (lo, hi) = sources[(i // 2) % len(sources)]
        h, w = img.shape[:2]
        ch = max(8, int(min(h, w * height / width) * rng.uniform(lo, hi)))
        cw = min(w, int(round(ch * width / height)))
        y, x = rng.integers(0, h - ch + 1), rng.integers(0, w - cw + 1)
        resized = Image.fromarray(np.ascontiguousarray(img[y:y + ch, x:x + cw])).resize((width, height), Image.BILINEAR)
        out.append(np.asarray(resized, dtype=np.float32)[..., ::-1])
    batch = np.stack(out)
    batch = np.concatenate([batch, batch[:, ::-1, ::-1]])
    return np.ascontiguousarray(((batch / 255.0 - 0.5) / 0.5).transpose(0, 3, 1, 2), dtype=np.float32)


def _ignis(exe, args):
    res = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]


def _run_ignis(exe, model, x, work, *options):
    np.save(work / "x.npy", x)
    out = work / "out"
    out.mkdir(exist_ok=True)
    for old in out.glob("*.npy"):
        old.unlink()
    _ignis(exe, ["run", model, "--input", f"x={work / 'x.npy'}", "--output-dir", out, *options])
    (path,) = out.glob("*.npy")
    return np.load(path)


def agreement(kind, got, reference):
    """Share of top-1 answers (cls: per crop, rec: per timestep) or thresholded pixels (det)
    that got has in common with reference."""
    if kind == "det":
        return float(((got > DET_THRESHOLD) == (reference > DET_THRESHOLD)).mean())
    return float((got.argmax(-1) == reference.argmax(-1)).mean())


class _Case:
    """One model: its evaluation crops, float32 outputs, and a work folder."""

    def __init__(self, kind, exe, work):
        self.kind, self.exe, self.work = kind, exe, work
        _, h, w, n_eval, _ = MODELS[kind]
        self.model = _model_path(kind)
        self.x = crops(EVAL_TEXT, EVAL_NATURAL, n_eval, h, w, EVAL_SEED)
        self.float32 = _run_ignis(exe, self.model, self.x, work)
        self._folded = None

    def prepared(self, calibration_crops=None):
        """Opset 13 (per-channel weight scales) with BatchNormalization folded, and a folder of
        calibration crops (one .npy each; the model's count unless given)."""
        _, h, w, _, n_cal = MODELS[self.kind]
        n_cal = calibration_crops or n_cal
        if self._folded is None:
            opset13 = self.work / "opset13.onnx"
            onnx.save(version_converter.convert_version(onnx.load(str(self.model)), 13), str(opset13))
            self._folded = self.work / "folded.onnx"
            _ignis(self.exe, ["optimize", opset13, "-o", self._folded, "--level", "extended"])
        calibration = self.work / f"calibration{n_cal}"
        if not calibration.is_dir():
            calibration.mkdir()
            for i, sample in enumerate(crops(CALIBRATION_TEXT, CALIBRATION_NATURAL, n_cal, h, w, CALIBRATION_SEED)):
                np.save(calibration / f"{i:03d}.npy", sample[None])
        return self._folded, calibration


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    exe = _ignis_bin()
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        pytest.skip(f"ignis binary not found at {exe} (build it, or set IGNIS_BIN)")
    made = {}

    def get(kind):
        if kind not in made:
            made[kind] = _Case(kind, exe, tmp_path_factory.mktemp(kind))
        return made[kind]

    return get


@pytest.mark.parametrize("kind", list(MODELS))
def test_float32_matches_onnxruntime(kind, cases, parity_log):
    case = cases(kind)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    sess = ort.InferenceSession(str(case.model), options, providers=["CPUExecutionProvider"])
    (expected,) = sess.run(None, {"x": case.x})
    diff = np.abs(case.float32 - expected)
    parity_log(f"ocr {kind}: float32 vs onnxruntime max abs diff {diff.max():.2e} over {case.x.shape[0]} crops, "
               f"top-1 agreement {agreement(kind, case.float32, expected):.4f}")
    assert case.float32.shape == expected.shape
    # Outputs are probabilities (softmax / sigmoid); a few ulps of float32 through 50-60 layers.
    assert diff.max() <= 1e-3
    assert agreement(kind, case.float32, expected) >= 0.999


@pytest.mark.parametrize("kind", list(MODELS))
def test_bf16_agrees_with_float32(kind, cases, parity_log):
    case = cases(kind)
    got = _run_ignis(case.exe, case.model, case.x, case.work, "--precision", "bf16")
    agree = agreement(kind, got, case.float32)
    parity_log(f"ocr {kind}: bf16 agreement with float32 {agree:.4f} (max abs diff {np.abs(got - case.float32).max():.2e})")
    assert agree >= BF16_FLOOR[kind]


def _methods():
    return os.environ.get("IGNIS_OCR_METHODS", "percentile").split(",")


@pytest.mark.parametrize("kind", list(MODELS))
def test_int8_agrees_with_float32(kind, cases, parity_log):
    case = cases(kind)
    model, calibration = case.prepared()
    for method in _methods():
        quantized = case.work / f"int8.{method}.onnx"
        _ignis(case.exe, ["quantize", model, "-o", quantized, "--calibrate", calibration, "--method", method])
        got = _run_ignis(case.exe, quantized, case.x, case.work)
        agree = agreement(kind, got, case.float32)
        line = f"ocr {kind}: int8 {method} agreement with float32 {agree:.4f}"
        if kind == "cls":
            # The crops where PaddleOCR would act on the answer.
            sure = case.float32.max(-1) >= CLS_SURE
            sure_agree = float((got.argmax(-1) == case.float32.argmax(-1))[sure].mean())
            line += f", {sure_agree:.4f} on the {sure.sum()} crops with probability >= {CLS_SURE}"
        if kind == "rec":
            characters = case.float32.argmax(-1) != 0  # class 0 is the CTC blank
            char_agree = float((got.argmax(-1) == case.float32.argmax(-1))[characters].mean())
            line += f", {char_agree:.4f} on the {characters.sum()} timesteps that read a character"
        parity_log(line)
        if method != "percentile":
            continue  # reported only
        assert agree >= INT8_FLOOR[kind]
        if kind == "cls":
            assert sure.sum() >= 20 and sure_agree >= 0.99
        if kind == "rec":
            assert characters.sum() >= 50 and char_agree >= INT8_FLOOR_CHARACTERS


# `--max-drop` (cosine of the outputs on the calibration crops): the nodes that cost the most
# quantized alone stay float32 until the budget holds. (budget, calibration crops, floor).
# Measured on the CPU above: cls 0.990 with 27 of 54 nodes in int8 (64 crops), rec 0.9995 with
# 18 of 51 (characters 0.98); cls moves by about a point between budgets (0.9867 at 0.0002 with
# 23 nodes), as its unsure crops flip, hence its floor.
MAX_DROP = {"cls": ("0.0003", 64, 0.975), "rec": ("0.002", 16, 0.99)}


@pytest.mark.parametrize("kind", list(MAX_DROP))
def test_int8_within_an_accuracy_budget(kind, cases, parity_log):
    case = cases(kind)
    budget, calibration_crops, floor = MAX_DROP[kind]
    model, calibration = case.prepared(calibration_crops)
    quantized = case.work / "int8.max_drop.onnx"
    _ignis(case.exe, ["quantize", model, "-o", quantized, "--calibrate", calibration, "--method", "percentile",
                      "--max-drop", budget, "--metric", "cosine"])
    got = _run_ignis(case.exe, quantized, case.x, case.work)
    agree = agreement(kind, got, case.float32)
    quantize_nodes = sum(1 for n in onnx.load(str(quantized)).graph.node if n.op_type == "QuantizeLinear")
    parity_log(f"ocr {kind}: int8 with --max-drop {budget} (cosine, {calibration_crops} calibration crops): "
               f"agreement with float32 {agree:.4f}, {quantize_nodes} QuantizeLinear nodes")
    assert quantize_nodes > 0, "nothing was quantized"
    assert agree >= floor
