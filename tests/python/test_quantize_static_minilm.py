# SPDX-License-Identifier: Apache-2.0
"""Calibrated static int8 (QDQ) on a transformer: all-MiniLM-L6-v2 with its real weights,
calibrated on 64 sentences and measured on 18 others (the sentence-embedding cosine to the
float model), in ignis and in onnxruntime on the same file."""

import re

import pytest

import ignis
from ort_int8 import onnxruntime_int8_is_exact
from test_quantize_dynamic import SENTENCES, minilm  # noqa: F401 (minilm is a fixture)
from test_quantize_int4 import CALIBRATION_SENTENCES, _minilm_cosine, minilm_calibration  # noqa: F401


def test_minilm_static_int8_sentence_embeddings(minilm, minilm_calibration, tmp_path, ort):  # noqa: F811
    method = "minmax"
    model, weights = minilm
    out = tmp_path / f"minilm.static.{method}.onnx"
    report = ignis.quantize(model, out, calibrate=minilm_calibration, method=method, progress=False)
    assert report.calibration_samples == len(CALIBRATION_SENTENCES)
    # Against onnxruntime's int8 kernels where they are exact, else its float32 run of the file.
    to_float, to_ort, ort_to_float = _minilm_cosine(model, out, weights, ort, exact=not onnxruntime_int8_is_exact())
    print(f"minilm static int8 {method}: cosine to float over {len(SENTENCES)} sentences min "
          f"{to_float.min():.4f} mean {to_float.mean():.4f} (onnxruntime on the same file min "
          f"{ort_to_float.min():.4f}); ignis vs onnxruntime min {to_ort.min():.5f}")
    # Measured (2 threads, Zen 4): min 0.9969, mean 0.9981, onnxruntime on the same file min
    # 0.9969. Two things carry it from the 0.926 / 0.944 of one int8 scale per tensor
    # everywhere: the projections' outputs stay float32 (they feed the bias and residual adds;
    # with them float32 and no smoothing: 0.986) and SmoothQuant (strength 0.7, the default)
    # moves the residual stream's outlier channels into the per-channel weight scales.
    assert to_float.min() >= 0.99, dict(zip(SENTENCES, to_float.round(4)))
    assert to_float.mean() >= 0.995, dict(zip(SENTENCES, to_float.round(4)))
    assert to_ort.min() >= 0.98, dict(zip(SENTENCES, to_ort.round(5)))

    plain = tmp_path / f"minilm.static.{method}.unsmoothed.onnx"
    ignis.quantize(model, plain, calibrate=minilm_calibration, method=method, progress=False, smooth=0)
    unsmoothed, _, _ = _minilm_cosine(model, plain, weights, ort)
    print(f"without smoothing: min {unsmoothed.min():.4f} mean {unsmoothed.mean():.4f}")
    assert to_float.min() >= unsmoothed.min() + 0.005


def test_minilm_static_int8_within_an_accuracy_budget(minilm, minilm_calibration, tmp_path, ort):  # noqa: F811
    """--max-drop on the cosine metric: the layers whose int8 error costs the embeddings most
    stay float32 until the calibration sentences' loss holds; the 18 held-out sentences then
    reach the issue's 0.99 while most layers stay int8."""
    model, weights = minilm
    out = tmp_path / "minilm.static.budget.onnx"
    report = ignis.quantize(model, out, calibrate=minilm_calibration, progress=False, max_drop=0.002,
                            metric="cosine")
    kept = [d for d in report.decisions if "kept float32" in d]
    quantized, targets = map(int, re.search(r"with (\d+) of (\d+) nodes quantized", report.decisions[-1]).groups())
    assert quantized + len(kept) == targets
    to_float, _, ort_to_float = _minilm_cosine(model, out, weights, ort)
    print(f"minilm static int8 within cosine loss 0.002: {len(kept)} nodes kept float32, {quantized} quantized; "
          f"held-out cosine min {to_float.min():.4f} mean {to_float.mean():.4f} "
          f"(onnxruntime on the same file min {ort_to_float.min():.4f})")
    print("\n".join(report.decisions))
    assert report.accuracy_loss <= 0.002
    # Measured: 30 of 48 MatMuls int8 (the six FFN output projections cost most alone), held-out
    # min 0.9980 / mean 0.9987, onnxruntime the same.
    assert quantized > len(kept), "most layers should stay int8"
    assert to_float.min() >= 0.99, dict(zip(SENTENCES, to_float.round(4)))
