# SPDX-License-Identifier: Apache-2.0
"""Sequences, optionals and strings through the Python API, compared with onnxruntime."""

import numpy as np
import onnx
import pytest
from conftest import assert_close
from onnx import TensorProto, helper

import ignis


def _model(nodes, inputs, outputs, opset=18):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _seq_info(name, shape, elem=TensorProto.FLOAT):
    return helper.make_value_info(name, helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, shape)))


def _both(ort, model, feed):
    expected = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feed)
    actual = ignis.InferenceSession(model).run(None, feed)
    return actual, expected


def test_split_insert_and_concat_match_onnxruntime(ort, rng):
    nodes = [
        helper.make_node("SplitToSequence", ["x", "split"], ["parts"], axis=1),
        helper.make_node("SequenceInsert", ["parts", "extra", "at"], ["more"]),
        helper.make_node("ConcatFromSequence", ["more"], ["joined"], axis=1),
        helper.make_node("SequenceLength", ["more"], ["count"]),
    ]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 7]),
        helper.make_tensor_value_info("split", TensorProto.INT64, [3]),
        helper.make_tensor_value_info("extra", TensorProto.FLOAT, [3, 2]),
        helper.make_tensor_value_info("at", TensorProto.INT64, []),
    ]
    outputs = [
        helper.make_tensor_value_info("joined", TensorProto.FLOAT, [3, "j"]),
        helper.make_tensor_value_info("count", TensorProto.INT64, []),
        _seq_info("more", [3, "k"]),
    ]
    model = _model(nodes, inputs, outputs)
    feed = {
        "x": rng.standard_normal((3, 7), dtype=np.float32),
        "split": np.array([2, 4, 1], np.int64),
        "extra": rng.standard_normal((3, 2), dtype=np.float32),
        "at": np.array(-1, np.int64),
    }
    actual, expected = _both(ort, model, feed)
    assert_close(actual[0], expected[0], "joined")
    assert_close(actual[1], expected[1], "count")
    assert isinstance(actual[2], list) and len(actual[2]) == len(expected[2]) == 4
    for i, (a, e) in enumerate(zip(actual[2], expected[2])):
        assert_close(a, e, f"item {i}")


def test_sequence_and_optional_inputs(ort, rng):
    opt_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, ["m"]))
    nodes = [
        helper.make_node("SequenceAt", ["seq", "pos"], ["item"]),
        helper.make_node("OptionalHasElement", ["maybe"], ["has"]),
    ]
    inputs = [
        _seq_info("seq", ["n"]),
        helper.make_tensor_value_info("pos", TensorProto.INT64, []),
        helper.make_value_info("maybe", opt_type),
    ]
    outputs = [
        helper.make_tensor_value_info("item", TensorProto.FLOAT, ["n"]),
        helper.make_tensor_value_info("has", TensorProto.BOOL, []),
    ]
    model = _model(nodes, inputs, outputs)
    seq = [rng.standard_normal(n, dtype=np.float32) for n in (2, 5, 3)]
    for maybe in (None, np.ones(2, np.float32)):
        feed = {"seq": seq, "pos": np.array(1, np.int64), "maybe": maybe}
        actual, expected = _both(ort, model, feed)
        assert_close(actual[0], expected[0], "item")
        assert bool(actual[1]) == bool(expected[1]) == (maybe is not None)


def test_empty_optional_output_is_none(ort):
    nodes = [helper.make_node("Optional", [], ["empty"], type=helper.make_tensor_type_proto(TensorProto.FLOAT, []))]
    out_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, []))
    model = _model(nodes, [], [helper.make_value_info("empty", out_type)])
    actual, expected = _both(ort, model, {})
    assert actual == expected == [None]


def test_sequence_input_must_be_a_list():
    model = _model([helper.make_node("SequenceLength", ["seq"], ["n"])], [_seq_info("seq", ["n"])],
                   [helper.make_tensor_value_info("n", TensorProto.INT64, [])])
    sess = ignis.InferenceSession(model)
    with pytest.raises(ignis.InvalidArgument, match="list of arrays"):
        sess.run(None, {"seq": np.zeros(3, np.float32)})
    assert sess.run(None, {"seq": []})[0] == 0


def test_strings_pass_through_identity(ort):
    model = _model([helper.make_node("Identity", ["s"], ["t"])],
                   [helper.make_tensor_value_info("s", TensorProto.STRING, [3])],
                   [helper.make_tensor_value_info("t", TensorProto.STRING, [3])])
    feed = {"s": np.array(["a", "caf\u00e9", ""], dtype=object)}
    actual, expected = _both(ort, model, feed)
    assert actual[0].dtype == object
    assert actual[0].tolist() == expected[0].tolist() == ["a", "caf\u00e9", ""]
    # numpy's fixed-width str arrays work too.
    assert ignis.InferenceSession(model).run(None, {"s": np.array(["x", "yz", "w"])})[0].tolist() == ["x", "yz", "w"]


def test_zipmap_gives_dicts_of_python_floats(ort):
    # ZipMap's maps come back as onnxruntime gives them: {label: float}, not numpy scalars.
    for labels in ({"classlabels_strings": ["no", "yes"]}, {"classlabels_int64s": [3, 7]}):
        key_type = TensorProto.STRING if "classlabels_strings" in labels else TensorProto.INT64
        map_type = helper.make_map_type_proto(key_type, helper.make_tensor_type_proto(TensorProto.FLOAT, []))
        graph = helper.make_graph(
            [helper.make_node("ZipMap", ["x"], ["maps"], domain="ai.onnx.ml", **labels)], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 2])],
            [helper.make_value_info("maps", helper.make_sequence_type_proto(map_type))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                        helper.make_opsetid("ai.onnx.ml", 1)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        actual, expected = _both(ort, model.SerializeToString(), {"x": np.array([[0.25, 0.75], [1, 0]], np.float32)})
        assert actual == expected
        assert all(type(v) is float for m in actual[0] for v in m.values())
