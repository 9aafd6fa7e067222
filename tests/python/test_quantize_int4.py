# SPDX-License-Identifier: Apache-2.0
"""com.microsoft MatMulNBits and ignis.quantize(mode="int4"): hand-packed MatMulNBits models run
by ignis and by onnxruntime (the reference), the graph the quantizer writes and its codes
against an independent numpy dequantization, and all-MiniLM-L6-v2 quantized to int4 on real
sentences, rounded to nearest and calibrated (GPTQ) on other sentences."""

import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ignis
import model_builders
from conftest import assert_close
from test_quantize_dynamic import ROOT, SENTENCES, WordPiece, _projections, minilm  # noqa: F401 (minilm is a fixture)


def _pack_nibbles(codes):
    """[..., 2m] values in [0, 15] -> [..., m] bytes, the first of each pair in the low nibble."""
    codes = codes.astype(np.uint8)
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)


def _matmul_nbits_model(k, n, block, rng, zero_points=True, bias=False, level=0, a_shape=("m",)):
    """A one-node MatMulNBits model with random codes, scales, zero points and bias, and the
    float32 weight W [K, N] it stands for (dequantized here, independently of ignis)."""
    blocks = (k + block - 1) // block
    codes = rng.integers(0, 16, size=(n, blocks * block))
    scales = rng.uniform(0.01, 0.1, size=(n, blocks)).astype(np.float32)
    zps = rng.integers(0, 16, size=(n, blocks)) if zero_points else np.full((n, blocks), 8)
    w = ((codes.reshape(n, blocks, block) - zps[..., None]) * scales[..., None]).astype(np.float32)
    w = w.reshape(n, blocks * block)[:, :k].T
    inits = [numpy_helper.from_array(_pack_nibbles(codes.reshape(n, blocks, block)), "B"),
             numpy_helper.from_array(scales.reshape(-1), "scales")]
    inputs = ["A", "B", "scales"]
    if zero_points:
        padded = np.zeros((n, blocks + blocks % 2), np.uint8)
        padded[:, :blocks] = zps
        inits.append(numpy_helper.from_array(_pack_nibbles(padded).reshape(-1), "zp"))
        inputs.append("zp")
    b = None
    if bias:
        b = rng.standard_normal(n).astype(np.float32)
        inputs += [""] * (5 - len(inputs)) + ["bias"]
        inits.append(numpy_helper.from_array(b, "bias"))
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=k, N=n, bits=4,
                            block_size=block, accuracy_level=level)
    graph = helper.make_graph(
        [node], "nbits", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [*a_shape, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    return model.SerializeToString(), w, b


def _ort_run(ort, path, feeds):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.parametrize("m", [1, 3, 17])
@pytest.mark.parametrize("k,n,block", [(45, 33, 16), (96, 7, 32), (200, 50, 64)])
@pytest.mark.parametrize("extras", ["none", "zero_points", "zero_points+bias", "bias"])
def test_hand_packed_matmul_nbits_matches_onnxruntime(tmp_path, ort, rng, m, k, n, block, extras):
    model, w, b = _matmul_nbits_model(k, n, block, rng, zero_points="zero_points" in extras, bias="bias" in extras)
    path = tmp_path / "nbits.onnx"
    path.write_bytes(model)
    a = rng.standard_normal((m, k)).astype(np.float32)
    (expected,) = _ort_run(ort, path, {"A": a})
    (actual,) = ignis.InferenceSession(str(path)).run(None, {"A": a})
    assert_close(actual, expected, f"MatMulNBits m={m} k={k} n={n} block={block} {extras}")
    # The packing as documented, independently: A @ W (+ bias).
    np.testing.assert_allclose(actual, a @ w + (0 if b is None else b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m", [1, 3, 17])
def test_accuracy_level_4_stays_within_int8_rounding_of_onnxruntime(tmp_path, ort, rng, m):
    """accuracy_level 4 lets both runtimes round A to int8 per block; each result stays within
    that rounding of the exact product (|error| per element ~ sqrt(K) * rms(W) * max|a| / 254)."""
    model, w, _ = _matmul_nbits_model(768, 64, 32, rng, level=4, a_shape=(m,))
    path = tmp_path / "nbits4.onnx"
    path.write_bytes(model)
    a = rng.standard_normal((m, 768)).astype(np.float32)
    (expected,) = _ort_run(ort, path, {"A": a})
    (actual,) = ignis.InferenceSession(str(path)).run(None, {"A": a})
    exact = a @ w
    bound = 0.05 * np.abs(exact).max()
    assert np.abs(actual - exact).max() <= bound and np.abs(expected - exact).max() <= bound


def test_g_idx_is_rejected_with_a_clear_error(tmp_path, rng):
    model, _, _ = _matmul_nbits_model(64, 8, 32, rng)
    m = onnx.load_from_string(model)
    m.graph.node[0].input.extend(["g_idx"])
    m.graph.initializer.append(numpy_helper.from_array((np.arange(64) // 32).astype(np.int32), "g_idx"))
    path = tmp_path / "gidx.onnx"
    onnx.save(m, str(path))
    with pytest.raises(Exception, match="g_idx"):
        ignis.InferenceSession(str(path)).run(None, {"A": np.zeros((1, 64), np.float32)})


def _int4_reference(w, block):
    """The quantizer's scheme, independently: per block of each column, the range [lo, hi] =
    [min(0, w), max(0, w)] with each end narrowed to 1 - 0.05 a of itself (a < 8), scale =
    (hi - lo) / 15, zero point round(-lo / scale), keeping the first (lo-major) grid of least
    squared error; returns the dequantized W."""
    f32 = np.float32
    k, n = w.shape
    out = np.empty_like(w)

    def grid(lo, hi):
        scale = f32((hi - lo) / f32(15)) if hi > lo else f32(1)
        return scale, f32(np.clip(np.round(-lo / scale), 0, 15))

    def dequant(v, scale, zp):
        q = np.clip(np.round(v / scale) + zp, 0, 15).astype(f32)
        return ((q - zp) * scale).astype(f32)

    for col in range(n):
        for b0 in range(0, k, block):
            v = w[b0 : b0 + block, col]
            lo, hi = min(f32(0), v.min()), max(f32(0), v.max())
            best, best_err = None, None
            for a in range(8):
                for b in range(8):
                    g = grid(f32(lo * (f32(1) - f32(0.05) * f32(a))), f32(hi * (f32(1) - f32(0.05) * f32(b))))
                    err = ((v.astype(np.float64) - dequant(v, *g).astype(np.float64)) ** 2).sum()
                    if best_err is None or err < best_err:
                        best, best_err = g, err
            out[b0 : b0 + block, col] = dequant(v, *best)
    return out


def test_mlp_int4_graph_codes_and_onnxruntime_parity(tmp_path, ort, rng):
    src = tmp_path / "mlp.onnx"
    src.write_bytes(model_builders.mlp(in_features=40, hidden=24))
    out = tmp_path / "mlp.int4.onnx"
    report = ignis.quantize(src, out, mode="int4", block_size=16, min_elements=0)
    onnx.checker.check_model(str(out))
    model = onnx.load(str(out))
    assert {o.domain: o.version for o in model.opset_import}.get("com.microsoft") == 1
    nodes = [n for n in model.graph.node if n.op_type == "MatMulNBits"]
    assert len(nodes) == 2 and not any(n.op_type == "MatMul" for n in model.graph.node)
    assert {c.scheme for c in report.changed} == {"int4 asymmetric block 16"}
    original = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(src)).graph.initializer}
    feeds = {"x": rng.standard_normal((5, 40), dtype=np.float32)}
    # The quantized model equals the float model with W replaced by the independent dequantization.
    ref_model = onnx.load(str(src))
    for t in ref_model.graph.initializer:
        if t.name in ("w1", "w2"):
            t.CopyFrom(numpy_helper.from_array(_int4_reference(original[t.name], 16), t.name))
    ref_path = tmp_path / "mlp.deq.onnx"
    onnx.save(ref_model, str(ref_path))
    # onnxruntime rounds A to int8 at accuracy_level 4 at any batch; at level 0 it computes in
    # float32, which ignis does beyond 4 rows: both then equal the float model on numpy's weights.
    exact = onnx.load(str(out))
    for node in exact.graph.node:
        for a in node.attribute:
            if a.name == "accuracy_level":
                a.i = 0
    exact_path = tmp_path / "mlp.int4.level0.onnx"
    onnx.save(exact, str(exact_path))
    actual = ignis.InferenceSession(str(out)).run(None, feeds)
    ort_level0 = _ort_run(ort, exact_path, feeds)
    ort_level4 = _ort_run(ort, out, feeds)
    dequantized = _ort_run(ort, ref_path, feeds)
    for a, e0, e4, d in zip(actual, ort_level0, ort_level4, dequantized):
        assert_close(a, d, "int4 mlp vs numpy dequantization")
        assert_close(e0, d, "onnxruntime (accuracy_level 0) vs numpy dequantization")
        np.testing.assert_allclose(a, e4, rtol=2e-2, atol=2e-2, err_msg="int4 mlp vs onnxruntime at accuracy_level 4")


def test_cli_int4_with_block_size_and_exclude(tmp_path, rng):
    exe = os.environ.get("IGNIS_BIN", str(ROOT / "build" / "ignis"))
    if not os.path.isfile(exe):
        pytest.skip(f"{exe} not built (set IGNIS_BIN)")
    src = _projections(tmp_path, rng)
    out = tmp_path / "cli.onnx"
    res = subprocess.run([exe, "quantize", str(src), "-o", str(out), "--mode", "int4", "--block-size", "16",
                          "--min-elements", "0", "--exclude", "proj_q", "--report"],
                         capture_output=True, text=True, check=True)
    assert "int4 asymmetric block 16" in res.stdout and "excluded" in res.stdout and "Gemm is not rewritten" in res.stdout
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert ops.count("MatMulNBits") == 2 and ops.count("MatMul") == 1
    bad = subprocess.run([exe, "quantize", str(src), "-o", str(out), "--mode", "int4", "--block-size", "24"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "power of 2" in bad.stderr


def test_minilm_int4_keeps_sentence_embeddings(minilm, tmp_path, ort):  # noqa: F811
    model, weights = minilm
    out = tmp_path / "minilm.int4.onnx"
    report = ignis.quantize(model, out, mode="int4")
    assert len(report.changed) == 36  # 6 layers x (q, k, v, attention output, ffn in, ffn out)
    to_float, to_ort, ort_to_float = _minilm_cosine(model, out, weights, ort)
    print(f"minilm int4 block 32, cosine to float over {len(SENTENCES)} sentences: ignis min {to_float.min():.4f} "
          f"mean {to_float.mean():.4f}; onnxruntime on the same file min {ort_to_float.min():.4f}; "
          f"ignis vs onnxruntime min {to_ort.min():.5f}")
    # Round-to-nearest 4-bit weights (no calibration) measure 0.9716 here at block 32 and 0.9775
    # at block 16 (onnxruntime on the same file: the same to 3 decimals); the error is spread
    # over all 36 weights (excluding any one kind of projection gains < 0.01), so 0.99 would
    # need calibrated rounding (GPTQ/AWQ-style), not a finer grid.
    assert to_float.min() >= 0.965, dict(zip(SENTENCES, to_float.round(4)))
    assert to_ort.min() >= 0.999, dict(zip(SENTENCES, to_ort.round(5)))


# Calibration text for GPTQ, disjoint from SENTENCES (the evaluation set): one sample each.
CALIBRATION_SENTENCES = [
    "The library opens at nine in the morning on weekdays.",
    "My grandmother grows tomatoes and peppers in her garden.",
    "The stock market closed slightly higher after a volatile session.",
    "A young girl is reading a book under a large oak tree.",
    "Heavy snow forced the airport to cancel dozens of flights.",
    "The new smartphone has a faster processor and a better camera.",
    "He runs five kilometers along the river every evening.",
    "Scientists are studying how coral reefs respond to warmer oceans.",
    "The restaurant downtown serves the best noodle soup in town.",
    "Voters will choose a new mayor in the election next month.",
    "Two dogs are chasing a ball across the green field.",
    "The professor explained the theory of relativity in simple terms.",
    "Our flight was rebooked because of a mechanical problem.",
    "She painted the kitchen walls a bright shade of yellow.",
    "The company reported record profits for the third year in a row.",
    "Bees play an essential role in pollinating many crops.",
    "The detective finally found the missing piece of evidence.",
    "I need to renew my passport before the summer holidays.",
    "The football team celebrated their victory with the fans.",
    "Fresh bread was cooling on the bakery's front counter.",
    "The hospital opened a new wing for children with cancer.",
    "Learning a second language takes patience and daily practice.",
    "A woman is slicing onions on a wooden cutting board.",
    "The bridge will be closed for repairs until the end of June.",
    "Researchers trained a neural network to detect skin disease.",
    "The old lighthouse still guides ships along the rocky coast.",
    "He accidentally deleted all the photos from his laptop.",
    "The city plans to plant ten thousand trees over five years.",
    "A group of tourists is taking pictures of the cathedral.",
    "The price of coffee has doubled since last winter.",
    "Volcanic ash drifted over the villages near the mountain.",
    "The teacher asked the students to write a short essay.",
    "Our neighbors adopted a small grey kitten from the shelter.",
    "The central bank kept interest rates unchanged this month.",
    "A cyclist rides through the rain on a narrow country road.",
    "The play received excellent reviews from critics in London.",
    "Drinking enough water helps the body regulate its temperature.",
    "The engineers tested the rocket engine for three minutes.",
    "They spent the weekend hiking in the mountains of Colorado.",
    "The software update caused the printer to stop working.",
    "A chef is decorating a chocolate cake with strawberries.",
    "The river flooded several farms after days of heavy rain.",
    "Many students struggle to pay rent in expensive cities.",
    "The ancient manuscript was written on fragile parchment.",
    "An elderly man is feeding pigeons in the town square.",
    "The orchestra's conductor raised his baton and the music began.",
    "Electric cars are becoming cheaper and more popular.",
    "The jury deliberated for two days before reaching a verdict.",
    "A baby is laughing while playing with a colorful toy.",
    "The farmer harvested the wheat before the storm arrived.",
    "The website crashed when thousands of users logged in at once.",
    "She learned to play the piano when she was seven years old.",
    "The government announced new measures to reduce air pollution.",
    "A monkey is climbing a tall palm tree to reach the coconuts.",
    "The marathon runners crossed the finish line exhausted but happy.",
    "The doctor recommended more sleep and less caffeine.",
    "Archaeologists uncovered a Roman villa beneath the parking lot.",
    "The kids built a treehouse during their summer vacation.",
    "Prices at the supermarket rose sharply in the last quarter.",
    "The ship sailed out of the harbor at dawn.",
    "A violinist is performing on a crowded subway platform.",
    "The hotel room had a beautiful view of the lake.",
    "Wind turbines now supply a third of the country's electricity.",
    "He fixed the leaking faucet with a wrench and some tape.",
]


def _minilm_cosine(model, out, weights, ort, exact=False):
    """Mean-pooled sentence-embedding cosines over SENTENCES: ignis on `out` to the float model,
    ignis to onnxruntime on `out`, and onnxruntime on `out` to the float model. exact: onnxruntime
    runs `out` with its optimizations off (quantize / dequantize pairs in float32, no int8
    kernels)."""
    ids, mask = WordPiece(weights / "vocab.txt").encode(SENTENCES)
    feeds = {"input_ids": ids, "attention_mask": mask}
    (reference,) = _ort_run(ort, model, feeds)
    (quantized,) = ignis.InferenceSession(str(out)).run(None, feeds)
    if exact:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        (ort_quantized,) = ort.InferenceSession(str(out), options, providers=["CPUExecutionProvider"]).run(None, feeds)
    else:
        (ort_quantized,) = _ort_run(ort, out, feeds)
    m = mask[..., None].astype(np.float32)

    def cosine(x, y):
        a, b = (x * m).sum(axis=1) / m.sum(axis=1), (y * m).sum(axis=1) / m.sum(axis=1)
        return (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)

    return cosine(quantized, reference), cosine(quantized, ort_quantized), cosine(ort_quantized, reference)


@pytest.fixture(scope="module")
def minilm_calibration(minilm, tmp_path_factory):  # noqa: F811
    folder = tmp_path_factory.mktemp("minilm_calibration")
    tok = WordPiece(minilm[1] / "vocab.txt")
    assert not set(CALIBRATION_SENTENCES) & set(SENTENCES)
    for i, sentence in enumerate(CALIBRATION_SENTENCES):
        ids, mask = tok.encode([sentence])
        np.savez(folder / f"s{i:03d}.npz", input_ids=ids, attention_mask=mask)
    return folder


def test_minilm_int4_gptq_keeps_sentence_embeddings(minilm, minilm_calibration, tmp_path, ort):  # noqa: F811
    model, weights = minilm
    out = tmp_path / "minilm.int4.gptq.onnx"
    report = ignis.quantize(model, out, mode="int4", calibrate=minilm_calibration, progress=False)
    assert len(report.changed) == 36 and report.calibration_samples == 64
    assert {c.scheme for c in report.changed} == {"int4 asymmetric block 32 gptq"}
    to_float, to_ort, _ = _minilm_cosine(model, out, weights, ort)
    print(f"minilm int4 block 32 gptq on {len(CALIBRATION_SENTENCES)} sentences, cosine to float over "
          f"{len(SENTENCES)} others: min {to_float.min():.4f} mean {to_float.mean():.4f}; "
          f"ignis vs onnxruntime min {to_ort.min():.5f}")
    # Round-to-nearest measures min 0.9716 / mean 0.977 here (the test above); calibrated
    # rounding 0.9901 / 0.9928 (onnxruntime on the same file 0.9902 / 0.9925). The minimum over
    # 18 sentences moves by ~0.003 with the damping (0.985-0.990 for 3%-100% of H's mean
    # diagonal) while the mean stays at 0.991-0.993, so the bounds keep a margin below both.
    assert to_float.min() >= 0.988, dict(zip(SENTENCES, to_float.round(4)))
    assert to_float.mean() >= 0.992, dict(zip(SENTENCES, to_float.round(4)))
    assert to_ort.min() >= 0.999, dict(zip(SENTENCES, to_ort.round(5)))


def test_int4_gptq_codes_are_valid_and_run_in_onnxruntime(tmp_path, ort, rng):
    src = tmp_path / "mlp.onnx"
    src.write_bytes(model_builders.mlp(in_features=40, hidden=24))
    data = tmp_path / "data"
    data.mkdir()
    for i in range(8):
        np.save(data / f"{i}.npy", rng.standard_normal((16, 40), dtype=np.float32))
    out = tmp_path / "mlp.gptq.onnx"
    report = ignis.quantize(src, out, mode="int4", calibrate=data, block_size=16, min_elements=0, progress=False)
    assert report.calibration_samples == 8 and len(report.changed) == 2
    onnx.checker.check_model(str(out))
    model = onnx.load(str(out))
    assert [n.op_type for n in model.graph.node].count("MatMulNBits") == 2
    feeds = {"x": rng.standard_normal((5, 40), dtype=np.float32)}
    actual = ignis.InferenceSession(str(out)).run(None, feeds)
    expected = _ort_run(ort, out, feeds)
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(mode="dynamic"), ignis.InvalidArgument, "with calibrate, mode 'dynamic'"),
        (dict(mode="fp16"), ignis.InvalidArgument, "with calibrate, mode 'fp16'"),
        (dict(mode="int4", calibrate="{tmp}/missing"), FileNotFoundError, "does not exist"),
        (dict(mode="int4", calibrate="{tmp}/empty"), FileNotFoundError, "holds no samples"),
        (dict(mode="int4", calibrate="{tmp}/wrong"), FileNotFoundError, "no array named 'x'.*image"),
    ],
)
def test_bad_int4_calibration_requests_raise_clear_errors(tmp_path, kwargs, error, message):
    src = tmp_path / "mlp.onnx"
    src.write_bytes(model_builders.mlp(in_features=40, hidden=24))
    (tmp_path / "empty").mkdir()
    (tmp_path / "wrong").mkdir()
    np.savez(tmp_path / "wrong" / "a.npz", image=np.zeros((2, 40), np.float32), other=np.zeros(3, np.float32))
    kwargs = {k: v.format(tmp=tmp_path) if isinstance(v, str) else v for k, v in kwargs.items()}
    kwargs.setdefault("calibrate", tmp_path / "wrong")
    with pytest.raises(error, match=message):
        ignis.quantize(src, tmp_path / "out.onnx", min_elements=0, progress=False, **kwargs)


def test_cli_int4_calibrate(tmp_path, rng):
    exe = os.environ.get("IGNIS_BIN", str(ROOT / "build" / "ignis"))
    if not os.path.isfile(exe):
        pytest.skip(f"{exe} not built (set IGNIS_BIN)")
    src = tmp_path / "mlp.onnx"
    src.write_bytes(model_builders.mlp(in_features=40, hidden=24))
    data = tmp_path / "data"
    data.mkdir()
    for i in range(5):
        np.savez(data / f"{i}.npz", x=rng.standard_normal((3, 40), dtype=np.float32))
    out = tmp_path / "cli.onnx"
    res = subprocess.run([exe, "quantize", str(src), "-o", str(out), "--mode", "int4", "--calibrate", str(data),
                          "--samples", "4", "--min-elements", "0", "--report"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "int4 asymmetric block 32 gptq" in res.stdout and "calibrated on 4 samples" in res.stdout
    assert [line for line in res.stderr.splitlines() if line.startswith("gptq ")][-1].startswith("gptq 2/2")
    for mode in ("dynamic", "fp16"):
        bad = subprocess.run([exe, "quantize", str(src), "-o", str(out), "--mode", mode, "--calibrate", str(data)],
                             capture_output=True, text=True)
        assert bad.returncode != 0 and "takes no --mode" in bad.stderr and f"got --mode {mode}" in bad.stderr
