# SPDX-License-Identifier: Apache-2.0
"""ignis.quantize(calibrate=...): calibrated static int8 written as QDQ. The trained digits CNN
keeps its accuracy on its real test split for every method, onnxruntime (the reference) runs
the file as ignis does, activation ranges equal the min/max onnxruntime computes on the
calibration samples, every data layout gives the same model, and entropy calibration clips
outliers that min-max keeps."""

import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ignis

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "assets" / "digits_cnn.onnx"
METHODS = ["minmax", "percentile", "entropy"]


def _train_split():
    """The digits CNN's training split (tools/make_zoo.py): calibration never sees the test split."""
    datasets = pytest.importorskip("sklearn.datasets")
    selection = pytest.importorskip("sklearn.model_selection")
    digits = datasets.load_digits()
    x = (digits.data.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    x_train, x_test, _, y_test = selection.train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
    committed = np.load(ROOT / "assets" / "digits_test.npz")
    assert np.array_equal(x_test, committed["x"]) and np.array_equal(y_test, committed["y"])
    return x_train


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    """200 training samples, one .npz per sample."""
    x = _train_split()[:200]
    folder = tmp_path_factory.mktemp("calibration")
    for i, sample in enumerate(x):
        np.savez(folder / f"s{i:03d}.npz", input=sample[None])
    return folder, x


def _accuracy(run, data):
    (logits,) = run({"input": data["x"]})
    return float((logits.argmax(axis=1) == data["y"]).mean())


def _ort_session(ort, path, basic=False):
    options = ort.SessionOptions()
    if basic:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("method", METHODS)
def test_digits_int8_keeps_accuracy_in_ignis_and_onnxruntime(tmp_path, calibration, ort, method):
    folder, _ = calibration
    out = tmp_path / f"digits.{method}.onnx"
    report = ignis.quantize(MODEL, out, calibrate=folder, method=method, progress=False)
    assert report.calibration_samples == 200
    assert len(report.changed) == 3 and len(report.activations) == 5
    onnx.checker.check_model(str(out), full_check=True)

    data = np.load(ROOT / "assets" / "digits_test.npz")
    float_acc = _accuracy(lambda f: ignis.InferenceSession(str(MODEL)).run(None, f), data)
    int8_acc = _accuracy(lambda f: ignis.InferenceSession(str(out)).run(None, f), data)
    ort_acc = _accuracy(lambda f: _ort_session(ort, out).run(None, f), data)
    print(f"digits {method}: float {float_acc:.4f}, int8 ignis {int8_acc:.4f}, int8 onnxruntime {ort_acc:.4f}")
    assert int8_acc >= float_acc - 0.005
    assert ort_acc >= float_acc - 0.005

    # The same file in both runtimes: onnxruntime at its basic level runs the QDQ ops as written.
    (expected,) = _ort_session(ort, out, basic=True).run(None, {"input": data["x"]})
    (actual,) = ignis.InferenceSession(str(out)).run(None, {"input": data["x"]})
    np.testing.assert_allclose(actual, expected, atol=1e-3 * np.abs(expected).max())
    assert (actual.argmax(axis=1) == expected.argmax(axis=1)).all()


def test_qdq_structure_and_minmax_ranges_match_onnxruntime(tmp_path, calibration, ort):
    folder, x = calibration
    out = tmp_path / "digits.qdq.onnx"
    report = ignis.quantize(MODEL, out, calibrate=folder, progress=False, smooth=0)
    model = onnx.load(str(out))
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    nodes = list(model.graph.node)
    quantize = [n for n in nodes if n.op_type == "QuantizeLinear"]
    # Each Conv output is read only by a Relu, so the QDQ pair follows the Relu (onnxruntime's
    # placement); the MaxPool and Flatten outputs feed the next Conv and the Gemm.
    tensors = ["input", "/1/Relu_output_0", "/2/MaxPool_output_0", "/4/Relu_output_0", "/5/Flatten_output_0"]
    assert sorted(n.input[0] for n in quantize) == sorted(tensors)

    # Expected ranges: the float model in onnxruntime, its intermediate values as outputs.
    original = onnx.load(str(MODEL))
    for name in tensors[1:]:
        original.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    sess = ort.InferenceSession(original.SerializeToString(), providers=["CPUExecutionProvider"])
    values = sess.run(tensors[1:], {"input": x})  # all 200 samples in one batch
    for name, v in zip(tensors, [x] + values):
        lo, hi = min(0.0, float(v.min())), max(0.0, float(v.max()))
        scale = np.float32((hi - lo) / 255)
        zero_point = int(np.clip(np.round(-128 - lo / np.float64(scale)), -128, 127))
        (q,) = [n for n in quantize if n.input[0] == name]
        np.testing.assert_allclose(inits[q.input[1]], scale, rtol=1e-6, err_msg=name)
        assert inits[q.input[2]].dtype == np.int8 and int(inits[q.input[2]]) == zero_point, name
        (dq,) = [n for n in nodes if n.op_type == "DequantizeLinear" and n.input[0] == q.output[0]]
        assert list(dq.input[1:]) == list(q.input[1:])
        readers = [n for n in nodes if name in n.input]
        assert readers == [q], f"{name}: every reader goes through the QDQ pair"
        act = next(a for a in report.activations if a.value == name)
        assert act.min == pytest.approx(float(v.min()), rel=1e-6, abs=1e-7)

    for conv in (n for n in nodes if n.op_type == "Conv"):
        weight = next(n for n in nodes if conv.input[1] in n.output)
        assert weight.op_type == "DequantizeLinear" and inits[weight.input[0]].dtype == np.int8
        assert helper.get_attribute_value(weight.attribute[0]) == 0  # per output channel
        bias = next(n for n in nodes if conv.input[2] in n.output)
        assert bias.op_type == "DequantizeLinear" and inits[bias.input[0]].dtype == np.int32
        x_scale = inits[next(n for n in nodes if conv.input[0] in n.output).input[1]]
        np.testing.assert_allclose(inits[bias.input[1]], x_scale * inits[weight.input[1]], rtol=1e-6)


@pytest.mark.parametrize("alpha", [0.5, 0.7])
def test_smoothing_factors_and_per_channel_input_scales_match_onnxruntime(tmp_path, calibration, ort, alpha):
    """SmoothQuant on the classifier (Gemm, transB = 1, K = 64): its input x is quantized per
    channel at y_s * s_j, where s_j = max|x_j|^alpha / max|w_j|^(1 - alpha) over the first 64
    samples and y_s is the min/max scale of x / s over all 200, and its weights are quantized
    from W[:, j] * s_j. x comes from onnxruntime running the float model on the calibration
    samples; W from the float file."""
    folder, x = calibration
    out = tmp_path / "digits.smooth.onnx"
    report = ignis.quantize(MODEL, out, calibrate=folder, progress=False, smooth=alpha)
    assert any("smoothed the input channels of 1 projections" in d for d in report.decisions), report.decisions
    original = onnx.load(str(MODEL))
    (gemm,) = [n for n in original.graph.node if n.op_type == "Gemm"]
    weights = {t.name: numpy_helper.to_array(t) for t in original.graph.initializer}
    w = weights[gemm.input[1]]  # [N, K]
    original.graph.output.append(helper.make_tensor_value_info(gemm.input[0], TensorProto.FLOAT, None))
    (v,) = ort.InferenceSession(original.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        [gemm.input[0]], {"input": x})
    a, wmax = np.abs(v[:64]).max(axis=0).astype(np.float64), np.abs(w).max(axis=0).astype(np.float64)
    s = np.where((a > 0) & (wmax > 0), np.clip(a ** alpha / np.maximum(wmax, 1e-30) ** (1 - alpha), 1e-5, 1e5), 1.0)
    smoothed = v / s.astype(np.float32)
    lo, hi = min(0.0, float(smoothed.min())), max(0.0, float(smoothed.max()))
    y_scale = (hi - lo) / 255

    model = onnx.load(str(out))
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    nodes = list(model.graph.node)
    (q,) = [n for n in nodes if n.op_type == "QuantizeLinear" and n.input[0] == gemm.input[0]]
    assert helper.get_attribute_value(next(a for a in q.attribute if a.name == "axis")) == -1
    np.testing.assert_allclose(inits[q.input[1]], y_scale * s, rtol=1e-4)
    zero = inits[q.input[2]]
    assert zero.shape == (w.shape[1],) and (zero == zero[0]).all()
    assert not [n for n in nodes if n.op_type == "Mul"], "the smoothing Mul is folded into the QuantizeLinear"
    (dq,) = [n for n in nodes if n.op_type == "DequantizeLinear" and n.output[0] == next(
        g for g in nodes if g.op_type == "Gemm").input[1]]
    w_int8 = inits[dq.input[0]].astype(np.float32) * inits[dq.input[1]].reshape(-1, 1)
    np.testing.assert_allclose(w_int8, w * s.astype(np.float32), atol=0.51 * inits[dq.input[1]].max())
    # The smoothed file computes what the float model computes, up to int8 rounding: the same
    # top class as onnxruntime on the same file.
    data = np.load(ROOT / "assets" / "digits_test.npz")
    (expected,) = _ort_session(ort, out, basic=True).run(None, {"input": data["x"]})
    (actual,) = ignis.InferenceSession(str(out)).run(None, {"input": data["x"]})
    np.testing.assert_allclose(actual, expected, atol=1e-3 * np.abs(expected).max())


def _write_layouts(root, x):
    """The same 12 samples as .npz (stored and deflated), .npy files, NAME.npy folders and ONNX
    test-data folders."""
    layouts = {k: root / k for k in ("npz", "npz_compressed", "npy", "folders", "test_data")}
    for path in layouts.values():
        path.mkdir()
    for i, sample in enumerate(x[:12]):
        s = sample[None]
        np.savez(layouts["npz"] / f"{i:02d}.npz", input=s)
        np.savez_compressed(layouts["npz_compressed"] / f"{i:02d}.npz", s)  # one unnamed array
        np.save(layouts["npy"] / f"{i:02d}.npy", s)
        (layouts["folders"] / f"{i:02d}").mkdir()
        np.save(layouts["folders"] / f"{i:02d}" / "input.npy", s)
        (layouts["test_data"] / f"test_data_set_{i:02d}").mkdir()
        proto = numpy_helper.from_array(s, "input")
        (layouts["test_data"] / f"test_data_set_{i:02d}" / "input_0.pb").write_bytes(proto.SerializeToString())
    return layouts


def test_every_data_layout_gives_the_same_model(tmp_path, calibration):
    _, x = calibration
    layouts = _write_layouts(tmp_path, x)
    scales = {}
    for kind, folder in layouts.items():
        report = ignis.quantize(MODEL, tmp_path / f"{kind}.onnx", calibrate=folder, progress=False)
        assert report.calibration_samples == 12, kind
        scales[kind] = {a.value: (a.scale, a.zero_point) for a in report.activations}
    assert all(s == scales["npz"] for s in scales.values())
    report = ignis.quantize(MODEL, tmp_path / "five.onnx", calibrate=layouts["npy"], samples=5, progress=False)
    assert report.calibration_samples == 5


def test_cli_prints_a_progress_line_per_sample(tmp_path, calibration):
    exe = os.environ.get("IGNIS_BIN", str(ROOT / "build" / "ignis"))
    if not Path(exe).is_file():
        pytest.skip(f"{exe} not built (set IGNIS_BIN)")
    folder, _ = calibration
    res = subprocess.run(
        [exe, "quantize", str(MODEL), "-o", str(tmp_path / "cli.onnx"), "--calibrate", str(folder),
         "--method", "entropy", "--samples", "7", "--exclude", "/6/Gemm", "--report"],
        capture_output=True, text=True, check=True,
    )
    lines = [line for line in res.stderr.splitlines() if line.startswith("calibration sample ")]
    assert len(lines) == 7 and lines[-1].startswith("calibration sample 7/7")
    assert "calibrated on 7 samples" in res.stdout and "excluded" in res.stdout
    bad = subprocess.run([exe, "quantize", str(MODEL), "-o", str(tmp_path / "x.onnx"), "--calibrate", str(folder),
                          "--mode", "dynamic"], capture_output=True, text=True)
    assert bad.returncode != 0 and "takes no --mode" in bad.stderr
    # --report: each activation's error against float on the first min(16, samples) samples.
    table = res.stdout[res.stdout.index("activation "):].splitlines()
    assert table[0].split()[-1] == "error"
    rows = [line for line in table[1:] if line.strip().endswith("%")]
    assert len(rows) == 4, table  # the Gemm is excluded: its input is not quantized
    assert "over the first 7 samples" in res.stdout


def test_cli_draws_a_progress_bar_on_a_terminal(tmp_path, calibration):
    """On a terminal the per-sample lines become one line redrawn in place behind a bar; the
    report then starts on a line of its own."""
    pty = pytest.importorskip("pty")
    exe = os.environ.get("IGNIS_BIN", str(ROOT / "build" / "ignis"))
    if not Path(exe).is_file():
        pytest.skip(f"{exe} not built (set IGNIS_BIN)")
    folder, _ = calibration
    leader, follower = pty.openpty()
    res = subprocess.run([exe, "quantize", str(MODEL), "-o", str(tmp_path / "tty.onnx"), "--calibrate", str(folder),
                          "--samples", "5"], stdout=subprocess.PIPE, stderr=follower, check=True)
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    text = drawn.decode()
    steps = [s for s in text.split("\r\x1b[K") if s]
    assert steps[-1].startswith("[" + "#" * 24 + "] calibration sample 5/5"), steps
    assert any(s.startswith("[" + "#" * 9 + "." * 15 + "] calibration sample 2/5") for s in steps), steps
    assert text.endswith("\n") and text.count("\n") == 1, text
    assert "calibrated on 5 samples" in res.stdout.decode()


def _outlier_model(tmp_path, rng):
    w = numpy_helper.from_array(rng.standard_normal((64, 16), dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "outliers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [100, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [100, 64 // 4])],
        [w],
    )
    path = tmp_path / "outliers.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    return path


def test_entropy_clips_outliers_that_minmax_keeps(tmp_path, rng):
    """N(0, 1) activations with four values at +-40 in 20 samples of 6400 values."""
    model = _outlier_model(tmp_path, rng)
    data = tmp_path / "data"
    data.mkdir()
    for i in range(20):
        x = rng.standard_normal((100, 64)).astype(np.float32)
        if i == 13:
            x.flat[[5, 900, 3000, 6000]] = [40, -40, 40, -40]
        np.save(data / f"{i:02d}.npy", x)
    ranges = {}
    # The outliers are 4 of 128000 values (0.003 %): the default 99.999th percentile keeps them.
    for method, percentile in [("minmax", 99.999), ("entropy", 99.999), ("percentile", 99.999), ("percentile", 99.99)]:
        report = ignis.quantize(
            model, tmp_path / "q.onnx", calibrate=data, method=method, percentile=percentile, progress=False, smooth=0
        )
        (x,) = [a for a in report.activations if a.value == "x"]
        ranges[f"{method} {percentile}"] = (x.min, x.max)
    print("outlier ranges:", ranges)
    assert ranges["minmax 99.999"] == (-40.0, 40.0)
    assert ranges["percentile 99.999"] == (-40.0, 40.0)
    for method in ("entropy 99.999", "percentile 99.99"):
        lo, hi = ranges[method]
        assert 2.5 < hi < 8 and -8 < lo < -2.5, (method, ranges[method])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(calibrate="{tmp}/missing"), FileNotFoundError, "does not exist"),
        (dict(calibrate="{tmp}"), FileNotFoundError, "holds no samples"),
        (dict(calibrate="{tmp}", mode="dynamic"), ignis.InvalidArgument, "with calibrate, mode 'dynamic'"),
        (dict(calibrate="{tmp}", method="kl"), ignis.InvalidArgument, "method 'kl'"),
        (dict(calibrate="{tmp}", percentile=0), ignis.InvalidArgument, "percentile"),
        (dict(calibrate="{tmp}", samples=-1), ignis.InvalidArgument, "samples"),
    ],
)
def test_bad_calibration_requests_raise_clear_errors(tmp_path, kwargs, error, message):
    kwargs = {k: v.format(tmp=tmp_path) if isinstance(v, str) else v for k, v in kwargs.items()}
    with pytest.raises(error, match=message):
        ignis.quantize(MODEL, tmp_path / "out.onnx", progress=False, **kwargs)


def test_sample_missing_an_input_names_it(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    np.savez(data / "a.npz", image=np.zeros((1, 1, 8, 8), np.float32), other=np.zeros(3, np.float32))
    with pytest.raises(FileNotFoundError, match="no array named 'input'.*image, other"):
        ignis.quantize(MODEL, tmp_path / "out.onnx", calibrate=data, progress=False)


def _cosine_loss(ort, path, x):
    """1 - mean cosine between the logits of `path` and of the float model, per sample, in onnxruntime
    at its basic level (QDQ ops run as written)."""
    float_logits = _ort_session(ort, MODEL, basic=True).run(None, {"input": x})[0]
    logits = _ort_session(ort, path, basic=True).run(None, {"input": x})[0]
    cos = (logits * float_logits).sum(1) / (np.linalg.norm(logits, axis=1) * np.linalg.norm(float_logits, axis=1))
    return float(1.0 - cos.mean())


def test_max_drop_keeps_the_worst_nodes_float_until_the_budget_holds(tmp_path, calibration, ort):
    folder, x = calibration
    full = tmp_path / "full.onnx"
    ignis.quantize(MODEL, full, calibrate=folder, progress=False)
    full_loss = _cosine_loss(ort, full, x)
    budget = full_loss / 3  # below what quantizing every node costs
    out = tmp_path / "budget.onnx"
    report = ignis.quantize(MODEL, out, calibrate=folder, progress=False, max_drop=budget, metric="cosine")
    print(f"cosine loss: all quantized {full_loss:.3g}, budget {budget:.3g}, written {report.accuracy_loss:.3g}")
    print("\n".join(report.decisions))
    kept = [d for d in report.decisions if "kept float32" in d]
    assert kept, report.decisions
    assert report.accuracy_loss <= budget
    assert report.decisions[-1].startswith("loss ")
    # The nodes said to stay float32 have no QDQ in front of their weights.
    model = onnx.load(str(out))
    quantized_nodes = {n.name for n in model.graph.node if n.op_type in ("Conv", "Gemm", "MatMul")
                       and any(i.endswith("_dequantized") for i in n.input[1:2])}
    for line in kept:
        name = line.split("node '")[1].split("'")[0]
        assert name not in quantized_nodes
    # onnxruntime, measuring on its own, sees the loss within the budget (up to the two
    # runtimes' rounding differences, far below the loss itself).
    assert _cosine_loss(ort, out, x) <= budget + 0.05 * full_loss


def test_max_drop_zero_top1_agrees_with_float_on_every_calibration_sample(tmp_path, calibration, ort):
    folder, x = calibration
    out = tmp_path / "top1.onnx"
    report = ignis.quantize(MODEL, out, calibrate=folder, progress=False, max_drop=0)
    assert report.accuracy_loss == 0
    float_top1 = _ort_session(ort, MODEL).run(None, {"input": x})[0].argmax(1)
    int8_top1 = _ort_session(ort, out, basic=True).run(None, {"input": x})[0].argmax(1)
    assert (float_top1 == int8_top1).all()


def test_max_drop_needs_calibration_and_a_non_negative_budget(tmp_path, calibration):
    folder, _ = calibration
    with pytest.raises(ignis.InvalidArgument, match="needs calibrate"):
        ignis.quantize(MODEL, tmp_path / "a.onnx", max_drop=0.01)
    with pytest.raises(ignis.InvalidArgument, match="max_drop must be a number >= 0"):
        ignis.quantize(MODEL, tmp_path / "b.onnx", calibrate=folder, max_drop=-0.5)
    with pytest.raises(ignis.InvalidArgument, match="metric"):
        ignis.quantize(MODEL, tmp_path / "c.onnx", calibrate=folder, max_drop=0.01, metric="f1")


def _mean_abs_logit_error(float_outputs, quantized_outputs):
    """A user's metric: the mean absolute difference of the logits, over samples."""
    return float(np.mean([np.abs(q["logits"] - f["logits"]).mean() for f, q in zip(float_outputs, quantized_outputs)]))


def test_max_drop_with_a_python_metric(tmp_path, calibration, ort):
    folder, x = calibration
    samples = 50
    calls = []

    def metric(float_outputs, quantized_outputs):
        calls.append((len(float_outputs), len(quantized_outputs), sorted(float_outputs[0]), float_outputs[0]["logits"].shape))
        return _mean_abs_logit_error(float_outputs, quantized_outputs)

    full = ignis.quantize(MODEL, tmp_path / "full.onnx", calibrate=folder, samples=samples, progress=False,
                          max_drop=1e9, metric=metric)
    assert calls == [(samples, samples, ["logits"], (1, 10))]  # every sample, each output by name
    full_loss = full.accuracy_loss
    assert full_loss > 0
    budget = full_loss / 3
    out = tmp_path / "budget.onnx"
    report = ignis.quantize(MODEL, out, calibrate=folder, samples=samples, progress=False, max_drop=budget,
                            metric=metric)
    print("\n".join(report.decisions))
    assert report.accuracy_loss <= budget
    assert any("kept float32" in d for d in report.decisions)
    # The metric as onnxruntime computes it on the written file and the float model.
    float_logits = _ort_session(ort, MODEL, basic=True).run(None, {"input": x[:samples]})[0]
    logits = _ort_session(ort, out, basic=True).run(None, {"input": x[:samples]})[0]
    assert np.abs(logits - float_logits).mean() <= budget + 0.05 * full_loss


@pytest.mark.parametrize(
    "metric, message",
    [
        (lambda f, q: 1 / 0, "the accuracy metric raised ZeroDivisionError"),
        (lambda f, q: "small", "must return a number, got str"),
        (lambda f, q: float("nan"), "finite loss >= 0"),
        (lambda f, q: -1.0, "finite loss >= 0"),
    ],
)
def test_a_python_metric_that_fails_stops_the_quantization_clearly(tmp_path, calibration, metric, message):
    folder, _ = calibration
    with pytest.raises(ignis.InvalidArgument, match=message):
        ignis.quantize(MODEL, tmp_path / "out.onnx", calibrate=folder, samples=4, progress=False, max_drop=0.1,
                       metric=metric)
    assert not (tmp_path / "out.onnx").exists()


def test_activation_errors_match_onnxruntime_running_both_models(tmp_path, calibration, ort):
    """error_samples=8: each activation's |x_q - x| / |x| equals what onnxruntime measures with
    the float model and the file written, on the first 8 samples (the DequantizeLinear output
    in the quantized model against the float model's tensor; for the smoothed classifier
    input, against x / s)."""
    folder, x = calibration
    out = tmp_path / "digits.errors.onnx"
    report = ignis.quantize(MODEL, out, calibrate=folder, progress=False, error_samples=8)
    plain = ignis.quantize(MODEL, tmp_path / "plain.onnx", calibrate=folder, progress=False)
    assert all(a.error is None for a in plain.activations)
    feeds = {"input": x[:8]}

    model = onnx.load(str(out))
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    pairs = {}  # activation -> (its DequantizeLinear output, 1 / s per channel or None)
    for act in report.activations:
        (q,) = [n for n in model.graph.node if n.name == act.value + "/QuantizeLinear"]
        (dq,) = [n for n in model.graph.node if n.name == act.value + "/DequantizeLinear"]
        inverse = None
        if inits[q.input[1]].size > 1:  # smoothing folded in: Q scale y_s / inv_j, DQ scale y_s
            inverse = inits[dq.input[1]] / inits[q.input[1]]
        pairs[act.value] = (dq.output[0], q.input[0], inverse)
    for name, _, _ in pairs.values():
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    unfused = ort.SessionOptions()
    unfused.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    quantized = ort.InferenceSession(model.SerializeToString(), unfused, providers=["CPUExecutionProvider"])
    original = onnx.load(str(MODEL))
    float_names = sorted({f for _, f, _ in pairs.values()} - {"input"})
    for name in float_names:
        original.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    reference = ort.InferenceSession(original.SerializeToString(), providers=["CPUExecutionProvider"])
    float_values = dict(zip(float_names, reference.run(float_names, feeds)))
    float_values["input"] = x[:8]

    for act in report.activations:
        dq_name, float_name, inverse = pairs[act.value]
        (got,) = quantized.run([dq_name], feeds)
        want = float_values[float_name].astype(np.float64)
        if inverse is not None:
            want = want * inverse
        expected = np.sqrt(((got - want) ** 2).sum() / (want**2).sum())
        print(f"{act.value}: error {act.error:.5f}, onnxruntime {expected:.5f}")
        assert act.error == pytest.approx(expected, rel=0.02, abs=1e-5), act.value
        assert 0 < act.error < 0.2
