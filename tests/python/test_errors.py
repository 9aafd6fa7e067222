# SPDX-License-Identifier: Apache-2.0
"""Engine errors arrive as Python exceptions of the documented classes, carrying the engine's
message."""

import numpy as np
import onnx
import pytest
from onnx import helper

import ignis
import model_builders as mb


def test_exception_hierarchy():
    assert issubclass(ignis.IgnisError, RuntimeError)
    assert issubclass(ignis.InvalidArgument, ignis.IgnisError) and issubclass(ignis.InvalidArgument, ValueError)
    assert issubclass(ignis.InvalidModel, ignis.IgnisError) and issubclass(ignis.InvalidModel, ValueError)
    assert issubclass(ignis.Unsupported, ignis.IgnisError) and issubclass(ignis.Unsupported, NotImplementedError)
    assert ignis.NotImplemented is ignis.Unsupported
    assert issubclass(ignis.NotFound, ignis.IgnisError) and issubclass(ignis.NotFound, FileNotFoundError)
    assert issubclass(ignis.OutOfRange, ignis.IgnisError)
    assert issubclass(ignis.ResourceExhausted, ignis.IgnisError) and issubclass(ignis.ResourceExhausted, MemoryError)
    assert ignis.InvalidArgument.__module__ == "ignis"


def test_missing_model_file_raises_file_not_found(tmp_path):
    path = tmp_path / "absent.onnx"
    with pytest.raises(FileNotFoundError, match="absent.onnx") as info:
        ignis.InferenceSession(str(path))
    assert isinstance(info.value, ignis.IgnisError)
    assert "does not exist" in str(info.value)


@pytest.mark.parametrize("data", [b"garbage bytes, not a model", b"\x08\x07" + b"\xff" * 16, b""])
def test_garbage_bytes_raise_invalid_model(data):
    with pytest.raises(ignis.InvalidModel, match="not a valid ONNX model"):
        ignis.InferenceSession(data)


def test_garbage_file_raises_invalid_model_naming_the_file(tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(mb.mlp()[:-40])  # truncated
    with pytest.raises(ignis.InvalidModel, match="broken.onnx"):
        ignis.InferenceSession(path)


def test_wrong_input_name_lists_the_model_inputs():
    sess = ignis.InferenceSession(mb.mlp())
    with pytest.raises(ignis.InvalidArgument, match=r"unknown input 'y'.*'x'"):
        sess.run(None, {"y": np.zeros((1, 16), np.float32)})


def test_missing_input_is_named():
    sess = ignis.InferenceSession(mb.add_model())
    with pytest.raises(ValueError, match="missing inputs: 'b'"):
        sess.run(None, {"a": np.zeros((2, 3), np.float32)})


def test_wrong_shape_names_expected_and_actual():
    sess = ignis.InferenceSession(mb.mlp())
    with pytest.raises(ignis.InvalidArgument, match=r"input 'x' must have shape \[batch, 16\], got \[2, 15\]"):
        sess.run(None, {"x": np.zeros((2, 15), np.float32)})
    with pytest.raises(ignis.InvalidArgument, match=r"\[batch, 16\], got \[16\]"):
        sess.run(None, {"x": np.zeros(16, np.float32)})


def test_wrong_dtype_names_the_expected_type_and_is_not_cast():
    sess = ignis.InferenceSession(mb.mlp())
    with pytest.raises(ignis.InvalidArgument, match="input 'x' must be float32, got float64"):
        sess.run(None, {"x": np.zeros((2, 16), np.float64)})
    with pytest.raises(ignis.InvalidArgument, match="input 'x' must be float32, got int64"):
        sess.run(None, {"x": [[0] * 16]})


def test_dtype_without_onnx_equivalent_is_invalid_argument():
    sess = ignis.InferenceSession(mb.mlp())
    with pytest.raises(ignis.InvalidArgument, match=r"input 'x' must be float32, got numpy complex64"):
        sess.run(None, {"x": np.zeros((2, 16), np.complex64)})
    with pytest.raises(ignis.InvalidArgument, match="unknown input 'z'"):
        sess.run(None, {"z": np.array(["a"], dtype=object)})


def test_rank_above_the_engine_limit_is_invalid_argument():
    sess = ignis.InferenceSession(mb.mlp())
    with pytest.raises(ignis.InvalidArgument, match="at most 8 dimensions"):
        sess.run(None, {"x": np.zeros((1,) * 9, np.float32)})


def test_unknown_output_name():
    sess = ignis.InferenceSession(mb.mlp())
    with pytest.raises(ignis.InvalidArgument, match="unknown output 'nope'"):
        sess.run(["nope"], {"x": np.zeros((1, 16), np.float32)})


def test_bad_argument_types():
    sess = ignis.InferenceSession(mb.mlp())
    with pytest.raises(TypeError):
        sess.run("probs", {"x": np.zeros((1, 16), np.float32)})
    with pytest.raises(TypeError, match="input names must be str"):
        sess.run(None, {0: np.zeros((1, 16), np.float32)})
    with pytest.raises(TypeError, match="Unable to load from type"):
        ignis.InferenceSession(12345)


def test_unsupported_op_names_the_op_and_node():
    node = helper.make_node("Frobnicate", ["x"], ["y"], domain="org.example.ops", name="frob_1")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("org.example.ops", 1)]
    )
    model.ir_version = 8
    with pytest.raises(ignis.Unsupported, match="Frobnicate.*'frob_1'") as info:
        ignis.InferenceSession(model.SerializeToString())
    assert isinstance(info.value, NotImplementedError)


def test_data_dependent_index_out_of_range():
    sess = ignis.InferenceSession(mb.encoder_block()[0])
    with pytest.raises(ignis.OutOfRange, match="index 999 is out of range") as info:
        sess.run(None, {"ids": np.array([[0, 1, 999]], np.int64)})
    assert isinstance(info.value, IndexError)


def test_run_over_the_memory_limit_raises_and_the_session_keeps_serving():
    options = ignis.SessionOptions()
    assert options.memory_limit_bytes == 0
    options.memory_limit_bytes = 64 * 1024
    sess = ignis.InferenceSession(mb.unary("Relu", shape=("n", 256)), options)
    big = np.ones((100, 256), np.float32)
    with pytest.raises(ignis.ResourceExhausted, match=r"input shapes \{x: \[100, 256\]\}.*memory_limit_bytes") as info:
        sess.run(None, {"x": big})
    assert isinstance(info.value, MemoryError)
    x = np.linspace(-1, 1, 10 * 256, dtype=np.float32).reshape(10, 256)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], np.maximum(x, 0))
    with pytest.raises(ValueError, match="memory_limit_bytes must be >= 0"):
        options.memory_limit_bytes = -1


def test_negative_thread_count_is_rejected_when_set():
    options = ignis.SessionOptions()
    with pytest.raises(ValueError, match="intra_op_num_threads must be >= 0"):
        options.intra_op_num_threads = -1


def test_unsupported_precision_names_the_supported_ones():
    options = ignis.SessionOptions()
    assert options.precision == "fp32"
    options.precision = "FP32"
    assert options.precision == "fp32"
    options.precision = "BF16"
    assert options.precision == "bf16"
    options.precision = "FP16"
    assert options.precision == "fp16"
    for other in ("fp8", "f16", "int8", 32):
        with pytest.raises(ValueError, match="supported: 'fp32', 'bf16', 'fp16'"):
            options.precision = other


def test_saving_the_optimized_model_of_bytes_is_refused_not_ignored(tmp_path):
    options = ignis.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "opt.onnx")
    with pytest.raises(ignis.Unsupported, match="optimized_model_filepath"):
        ignis.InferenceSession(mb.mlp(), options)
    assert not (tmp_path / "opt.onnx").exists()


def test_optimize_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        ignis.optimize(tmp_path / "absent.onnx", tmp_path / "out.onnx")
    (tmp_path / "m.onnx").write_bytes(mb.mlp())
    with pytest.raises(ValueError, match="'extended'"):
        ignis.optimize(tmp_path / "m.onnx", tmp_path / "out.onnx", level="max")


def test_terminate_flag_stops_a_run_before_it_starts():
    run_options = ignis.RunOptions()
    run_options.terminate = True
    with pytest.raises(ignis.IgnisError, match="terminate"):
        ignis.InferenceSession(mb.mlp()).run(None, {"x": np.zeros((1, 16), np.float32)}, run_options)
