# SPDX-License-Identifier: Apache-2.0
"""Small ONNX models built with onnx.helper for the Python package tests, each returned as
serialized bytes, plus feeds that match them."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _model(nodes, inputs, outputs, initializers=(), opset=OPSET, **model_kwargs):
    graph = helper.make_graph(nodes, "test_graph", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **model_kwargs)
    model.ir_version = 8  # what onnxruntime 1.x and ONNX 1.12's checker both read
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def mlp(in_features=16, hidden=32, classes=4, seed=0):
    """x[batch, 16] -> MatMul, Add, Relu -> MatMul, Add -> Softmax.  Outputs probs and hidden."""
    rng = np.random.default_rng(seed)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["hidden"]),
        helper.make_node("MatMul", ["hidden", "w2"], ["z0"]),
        helper.make_node("Add", ["z0", "b2"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    inits = [
        _init("w1", rng.standard_normal((in_features, hidden), dtype=np.float32) * 0.3),
        _init("b1", rng.standard_normal(hidden, dtype=np.float32) * 0.1),
        _init("w2", rng.standard_normal((hidden, classes), dtype=np.float32) * 0.3),
        _init("b2", rng.standard_normal(classes, dtype=np.float32) * 0.1),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", in_features])],
        [
            helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", classes]),
            helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", hidden]),
        ],
        inits,
        producer_name="ignis-tests",
    )


def cnn(seed=1):
    """image[n, 3, 16, 16] -> Conv, BatchNormalization, Relu, MaxPool, Conv, GlobalAveragePool,
    Flatten, Gemm."""
    rng = np.random.default_rng(seed)
    nodes = [
        helper.make_node("Conv", ["image", "k1", "kb1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "scale", "bias", "mean", "var"], ["bn"], epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "k2"], ["c2"], strides=[2, 2], kernel_shape=[3, 3]),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["scores"], transB=1),
    ]
    inits = [
        _init("k1", rng.standard_normal((8, 3, 3, 3), dtype=np.float32) * 0.3),
        _init("kb1", rng.standard_normal(8, dtype=np.float32) * 0.1),
        _init("scale", rng.uniform(0.5, 1.5, 8).astype(np.float32)),
        _init("bias", rng.standard_normal(8, dtype=np.float32) * 0.1),
        _init("mean", rng.standard_normal(8, dtype=np.float32) * 0.1),
        _init("var", rng.uniform(0.5, 1.5, 8).astype(np.float32)),
        _init("k2", rng.standard_normal((12, 8, 3, 3), dtype=np.float32) * 0.2),
        _init("fc", rng.standard_normal((5, 12), dtype=np.float32) * 0.3),
        _init("fcb", rng.standard_normal(5, dtype=np.float32) * 0.1),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["n", 3, 16, 16])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["n", 5])],
        inits,
    )


def mixed_types():
    """Integer, boolean and float64 paths: ids int64[n], mask bool[n], x float64[n]."""
    nodes = [
        helper.make_node("Add", ["ids", "offset"], ["shifted"]),
        helper.make_node("Greater", ["shifted", "limit"], ["big"]),
        helper.make_node("And", ["big", "mask"], ["keep"]),
        helper.make_node("Cast", ["shifted"], ["shifted_f"], to=TensorProto.DOUBLE),
        helper.make_node("Mul", ["shifted_f", "x"], ["prod"]),
        helper.make_node("Where", ["keep", "prod", "x"], ["picked"]),
    ]
    inits = [_init("offset", np.array([3], np.int64)), _init("limit", np.array([5], np.int64))]
    return _model(
        nodes,
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"]),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, ["n"]),
            helper.make_tensor_value_info("x", TensorProto.DOUBLE, ["n"]),
        ],
        [
            helper.make_tensor_value_info("shifted", TensorProto.INT64, ["n"]),
            helper.make_tensor_value_info("keep", TensorProto.BOOL, ["n"]),
            helper.make_tensor_value_info("picked", TensorProto.DOUBLE, ["n"]),
        ],
        inits,
    )


def encoder_block(vocab=50, dim=16, seed=2):
    """token ids int64[batch, seq] -> Gather (embedding), LayerNormalization, MatMul, Transpose,
    ReduceMean over the sequence, Tanh."""
    rng = np.random.default_rng(seed)
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["emb"], axis=0),
        helper.make_node("LayerNormalization", ["emb", "gamma", "beta"], ["ln"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["ln", "proj"], ["p"]),
        helper.make_node("Transpose", ["p"], ["pt"], perm=[0, 2, 1]),
        helper.make_node("ReduceMean", ["pt"], ["pooled"], axes=[2], keepdims=0),
        helper.make_node("Tanh", ["pooled"], ["features"]),
    ]
    inits = [
        _init("table", rng.standard_normal((vocab, dim), dtype=np.float32)),
        _init("gamma", rng.uniform(0.5, 1.5, dim).astype(np.float32)),
        _init("beta", rng.standard_normal(dim, dtype=np.float32) * 0.1),
        _init("proj", rng.standard_normal((dim, dim), dtype=np.float32) * 0.3),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", dim])],
        inits,
        opset=17,
    ), vocab


def unary(op, elem_type=TensorProto.FLOAT, shape=("n", 4), **attrs):
    """A single-node model y = op(x)."""
    return _model(
        [helper.make_node(op, ["x"], ["y"], **attrs)],
        [helper.make_tensor_value_info("x", elem_type, list(shape))],
        [helper.make_tensor_value_info("y", elem_type, list(shape))],
    )


def add_model(elem_type=TensorProto.FLOAT, shape=(2, 3)):
    """y = a + b with fixed shapes."""
    return _model(
        [helper.make_node("Add", ["a", "b"], ["y"])],
        [
            helper.make_tensor_value_info("a", elem_type, list(shape)),
            helper.make_tensor_value_info("b", elem_type, list(shape)),
        ],
        [helper.make_tensor_value_info("y", elem_type, list(shape))],
    )


def io_shapes():
    """Inputs with named, unnamed and fixed dims and one without any shape, for get_inputs()."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", None, 3])
    x.type.tensor_type.shape.dim[1].Clear()  # neither dim_value nor dim_param
    flags = helper.make_tensor_value_info("flags", TensorProto.BOOL, [2])
    count = helper.make_tensor_value_info("count", TensorProto.INT64, [])
    nodes = [
        helper.make_node("Relu", ["x"], ["y"]),
        helper.make_node("Not", ["flags"], ["not_flags"]),
        helper.make_node("Neg", ["count"], ["neg_count"]),
    ]
    return _model(
        nodes,
        [x, flags, count],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", None, 3]),
            helper.make_tensor_value_info("not_flags", TensorProto.BOOL, [2]),
            helper.make_tensor_value_info("neg_count", TensorProto.INT64, []),
        ],
    )


def with_metadata():
    """The mlp with every descriptive ModelProto field set."""
    model = onnx.load_from_string(mlp())
    model.producer_name = "ignis-tests"
    model.producer_version = "1.2.3"
    model.domain = "org.example"
    model.model_version = 7
    model.doc_string = "a model for the metadata test"
    model.graph.name = "meta_graph"
    model.graph.doc_string = "the graph's own doc string"
    helper.set_model_props(model, {"author": "tests", "license": "Apache-2.0"})
    return model.SerializeToString()


def reduce_sum():
    """total = ReduceSum(x) over all axes of x float32[rows, cols]; a tiny output for a big input."""
    return _model(
        [helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", "cols"])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [])],
    )


def add_one():
    """y = x + 1 for x float32[rows, cols]; an output as big as the input."""
    return _model(
        [helper.make_node("Add", ["x", "one"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", "cols"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", "cols"])],
        [_init("one", np.array([1.0], np.float32))],
    )
