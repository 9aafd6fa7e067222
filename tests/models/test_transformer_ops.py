# SPDX-License-Identifier: Apache-2.0
"""LinearAttention, CausalConvWithState (opset 27) and ai.onnx.preview FlexAttention on shapes
and settings the ONNX node tests do not cover: grouped and multi-query heads with odd sizes,
per-head decay, beta of width 1, a sequence shorter than the convolution's carry, k = 1, score
and probability modifier subgraphs, a modifier that reads a value of the outer graph.

    IGNIS_BIN=build/ignis python3 -m pytest tests/models/test_transformer_ops.py

Expected values: onnxruntime for LinearAttention and CausalConvWithState; the ONNX reference
implementation (onnx.reference.ReferenceEvaluator) for FlexAttention, which onnxruntime does
not implement, except for the outer-scope case, which the reference evaluator cannot run and
numpy computes from the spec's formula. ignis runs through its command line as in test_parity.
"""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from test_parity import _require_ignis, compare, run_ignis, run_onnxruntime

PREVIEW = "ai.onnx.preview"
rng = np.random.default_rng(2027)


def _model(node, feeds, outputs, opsets):
    """One-node model; every output has the element type of the first input."""
    elem = {name: helper.np_dtype_to_tensor_dtype(a.dtype) for name, a in feeds.items()}
    inputs = [helper.make_tensor_value_info(name, elem[name], a.shape) for name, a in feeds.items()]
    outs = [helper.make_tensor_value_info(name, next(iter(elem.values())), None) for name in outputs]
    graph = helper.make_graph([node], "g", inputs, outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])


def _l2_normalized(x, heads):
    b, t, width = x.shape
    y = x.reshape(b, t, heads, width // heads)
    return (y / np.linalg.norm(y, axis=-1, keepdims=True)).reshape(b, t, width).astype(x.dtype)


def _f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- LinearAttention and CausalConvWithState: against onnxruntime ---------------------------------

def _linear_attention(rule, b, t, hq, hkv, dk, dv, decay_width=None, beta_width=None, past=False, scale=None):
    names = ["query", "key", "value", "past_state" if past else "", "decay" if decay_width else "",
             "beta" if beta_width else ""]
    while names[-1] == "":
        names.pop()
    attrs = {"q_num_heads": hq, "kv_num_heads": hkv, "update_rule": rule}
    if scale is not None:
        attrs["scale"] = scale
    node = helper.make_node("LinearAttention", names, ["output", "present_state"], **attrs)
    feeds = {"query": _f32(b, t, hq * dk), "key": _l2_normalized(_f32(b, t, hkv * dk), hkv),
             "value": _f32(b, t, hkv * dv)}
    if past:
        feeds["past_state"] = _f32(b, hkv, dk, dv, scale=0.1)
    if decay_width:
        feeds["decay"] = -np.abs(_f32(b, t, decay_width, scale=0.2))
    if beta_width:
        feeds["beta"] = rng.random((b, t, beta_width)).astype(np.float32)
    return _model(node, feeds, ["output", "present_state"], [("", 27)]), feeds


def _causal_conv(b, c, length, k, bias=False, past=False, activation=None):
    names = ["input", "weight", "bias" if bias else "", "past_state" if past else ""]
    while names[-1] == "":
        names.pop()
    attrs = {"activation": activation} if activation else {}
    node = helper.make_node("CausalConvWithState", names, ["output", "present_state"], **attrs)
    feeds = {"input": _f32(b, c, length), "weight": _f32(c, 1, k)}
    if bias:
        feeds["bias"] = _f32(c)
    if past:
        feeds["past_state"] = _f32(b, c, k - 1)
    return _model(node, feeds, ["output", "present_state"], [("", 27)]), feeds


ORT_CASES = {
    "linear_attention_gated_delta_gqa_head_decay_beta1_past":
        lambda: _linear_attention("gated_delta", 2, 5, 6, 2, 3, 5, decay_width=2, beta_width=1, past=True),
    "linear_attention_gated_mqa_key_decay": lambda: _linear_attention("gated", 1, 7, 4, 1, 5, 3, decay_width=5),
    "linear_attention_delta_scale": lambda: _linear_attention("delta", 3, 4, 3, 3, 2, 7, beta_width=3, scale=0.6),
    "linear_attention_linear_past_gqa": lambda: _linear_attention("linear", 2, 3, 4, 2, 6, 1, past=True),
    "causal_conv_short_input_past_bias_silu": lambda: _causal_conv(2, 3, 2, 5, bias=True, past=True, activation="silu"),
    "causal_conv_kernel_one_bias": lambda: _causal_conv(2, 5, 6, 1, bias=True),
    "causal_conv_odd_swish": lambda: _causal_conv(3, 7, 11, 4, activation="swish"),
}


@pytest.mark.parametrize("name", sorted(ORT_CASES))
def test_matches_onnxruntime(name, tmp_path, parity_log):
    exe = _require_ignis(name, parity_log)
    model, feeds = ORT_CASES[name]()
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    want, _ = run_onnxruntime(path, feeds)
    got, _ = run_ignis(exe, path, feeds, tmp_path)
    for out_name, expected in want.items():
        assert got[out_name].shape == expected.shape, f"{out_name}: shape {got[out_name].shape} != {expected.shape}"
        ok, max_abs, _, worst = compare(got[out_name], expected)
        assert ok, f"{name} output {out_name}: max abs diff {max_abs}, {worst:.2f}x the tolerance"
    parity_log(f"{name}: matches onnxruntime")


# ---- FlexAttention: against the ONNX reference implementation -------------------------------------

def _graph_attr(name, nodes, inits, dtype=TensorProto.FLOAT):
    return helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", dtype, None)],
                             [helper.make_tensor_value_info("out", dtype, None)], inits)


def _causal_mask_mod():
    """x + (-inf where key index > query index + (S - L)): the new queries sit at the end."""
    i64 = lambda n, v: helper.make_tensor(n, TensorProto.INT64, [len(v)] if len(v) > 1 else [], v)
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "two"], ["l"], axis=0),
        helper.make_node("Gather", ["shape", "three"], ["s"], axis=0),
        helper.make_node("Range", ["zero", "l", "one"], ["qi0"]),
        helper.make_node("Sub", ["s", "l"], ["offset"]),
        helper.make_node("Add", ["qi0", "offset"], ["qi1"]),
        helper.make_node("Unsqueeze", ["qi1", "minus1"], ["qi"]),
        helper.make_node("Range", ["zero", "s", "one"], ["kj"]),
        helper.make_node("Greater", ["kj", "qi"], ["future"]),
        helper.make_node("Where", ["future", "neg_inf", "x"], ["out"]),
    ]
    inits = [i64("zero", [0]), i64("one", [1]), i64("two", [2]), i64("three", [3]), i64("minus1", [-1]),
             helper.make_tensor("neg_inf", TensorProto.FLOAT, [], [-np.inf])]
    return _graph_attr("causal_mask", nodes, inits)


def _flex(b, hq, hkv, length, s, e, ev, dtype=np.float32, **attrs):
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain=PREVIEW, **attrs)
    feeds = {"Q": rng.standard_normal((b, hq, length, e)).astype(dtype),
             "K": rng.standard_normal((b, hkv, s, e)).astype(dtype),
             "V": rng.standard_normal((b, hkv, s, ev)).astype(dtype)}
    return _model(node, feeds, ["Y"], [("", 26), (PREVIEW, 1)]), feeds


FLEX_CASES = {
    "flex_gqa_odd": lambda: _flex(2, 6, 2, 5, 7, 3, 4),
    "flex_causal_mask_prefill_with_prob_mod": lambda: _flex(
        1, 4, 2, 3, 5, 4, 3, score_mod=_causal_mask_mod(),
        prob_mod=_graph_attr("sharpen", [helper.make_node("Mul", ["x", "x"], ["out"])], [])),
    "flex_soft_cap_scale": lambda: _flex(2, 2, 1, 4, 6, 5, 2, scale=0.9, score_mod=_graph_attr(
        "soft_cap", [helper.make_node("Div", ["x", "cap"], ["d"]), helper.make_node("Tanh", ["d"], ["t"]),
                     helper.make_node("Mul", ["t", "cap"], ["out"])],
        [helper.make_tensor("cap", TensorProto.FLOAT, [], [2.0])])),
    "flex_float16_gqa": lambda: _flex(1, 4, 2, 6, 5, 8, 8, dtype=np.float16),
    "flex_float16_softmax_in_float16": lambda: _flex(
        1, 2, 2, 3, 4, 8, 4, dtype=np.float16, softmax_precision=int(TensorProto.FLOAT16)),
    "flex_double_gqa": lambda: _flex(2, 3, 1, 2, 5, 4, 3, dtype=np.float64),
}


@pytest.mark.parametrize("name", sorted(FLEX_CASES))
def test_flex_attention_matches_onnx_reference(name, tmp_path, parity_log):
    from onnx.reference import ReferenceEvaluator

    exe = _require_ignis(name, parity_log)
    model, feeds = FLEX_CASES[name]()
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    got, _ = run_ignis(exe, path, feeds, tmp_path)
    assert got["Y"].dtype == want.dtype and got["Y"].shape == want.shape
    ok, max_abs, _, worst = compare(got["Y"], want)
    assert ok, f"{name}: max abs diff {max_abs}, {worst:.2f}x the tolerance"
    parity_log(f"{name}: matches the ONNX reference")


def test_flex_attention_score_mod_reads_an_outer_value(tmp_path, parity_log):
    """score_mod adds the outer graph's input 'bias' [L, S]; the node captures it as an input."""
    exe = _require_ignis("flex_outer_scope", parity_log)
    score_mod = _graph_attr("add_bias", [helper.make_node("Add", ["x", "bias"], ["out"])], [])
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain=PREVIEW, score_mod=score_mod)
    b, hq, hkv, length, s, e, ev = 2, 4, 2, 3, 5, 6, 3
    feeds = {"Q": _f32(b, hq, length, e), "K": _f32(b, hkv, s, e), "V": _f32(b, hkv, s, ev),
             "bias": _f32(length, s)}
    model = _model(node, feeds, ["Y"], [("", 26), (PREVIEW, 1)])
    path = tmp_path / "flex_outer_scope.onnx"
    onnx.save(model, path)
    k = np.repeat(feeds["K"].astype(np.float64), hq // hkv, axis=1)
    v = np.repeat(feeds["V"].astype(np.float64), hq // hkv, axis=1)
    scores = feeds["Q"] @ k.transpose(0, 1, 3, 2) / np.sqrt(e) + feeds["bias"]
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    want = (p / p.sum(axis=-1, keepdims=True)) @ v
    got, _ = run_ignis(exe, path, feeds, tmp_path)
    ok, max_abs, _, worst = compare(got["Y"], want)
    assert ok, f"max abs diff {max_abs}, {worst:.2f}x the tolerance"
    parity_log("flex_outer_scope: matches the spec's formula")
