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
    # Measured: min 0.926, mean 0.944 with minmax (percentile: 0.912 / 0.943), and onnxruntime
    # computes the same file to the same cosines, so the loss is the scheme's, not the kernels':
    # one int8 scale per activation tensor cannot hold a transformer's outlier channels. The
    # 0.99 that dynamic int8 (per-row ranges at run time) and calibrated int4 reach is not met;
    # this bound keeps the scheme from getting worse.
    assert to_float.min() >= 0.90, dict(zip(SENTENCES, to_float.round(4)))
    assert to_float.mean() >= 0.93, dict(zip(SENTENCES, to_float.round(4)))
    assert to_ort.min() >= 0.98, dict(zip(SENTENCES, to_ort.round(5)))


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
