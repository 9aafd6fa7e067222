# SPDX-License-Identifier: Apache-2.0
"""ignis and onnxruntime on the same small models and inputs give the same outputs."""

import numpy as np
import pytest
from conftest import assert_close

import ignis
import model_builders as mb


def _feeds(rng):
    ids = rng.integers(-4, 9, size=7).astype(np.int64)
    return {
        "mlp": (mb.mlp(), {"x": rng.standard_normal((5, 16), dtype=np.float32)}),
        "mlp_batch1": (mb.mlp(), {"x": rng.standard_normal((1, 16), dtype=np.float32)}),
        "cnn": (mb.cnn(), {"image": rng.standard_normal((3, 3, 16, 16), dtype=np.float32)}),
        "mixed_types": (
            mb.mixed_types(),
            {"ids": ids, "mask": rng.integers(0, 2, size=7).astype(bool), "x": rng.standard_normal(7)},
        ),
        "encoder_block": (mb.encoder_block()[0], {"ids": rng.integers(0, 50, size=(2, 9)).astype(np.int64)}),
        "float16_add": (
            mb.add_model(elem_type=10, shape=(4, 5)),
            {"a": rng.standard_normal((4, 5)).astype(np.float16), "b": rng.standard_normal((4, 5)).astype(np.float16)},
        ),
        "int32_add": (
            mb.add_model(elem_type=6, shape=(3,)),
            {"a": np.array([1, -2, 3], np.int32), "b": np.array([10, 20, -30], np.int32)},
        ),
        "empty_batch": (mb.mlp(), {"x": np.zeros((0, 16), np.float32)}),
    }


CASES = sorted(_feeds(np.random.default_rng(0)))


@pytest.mark.parametrize("case", CASES)
def test_outputs_match_onnxruntime(case, ort, rng):
    model, feed = _feeds(rng)[case]
    expected = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feed)
    actual = ignis.InferenceSession(model).run(None, feed)
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert isinstance(a, np.ndarray)
        assert_close(a, e, f"{case} output {i}")


@pytest.mark.parametrize("level", list(ignis.GraphOptimizationLevel))
def test_every_optimization_level_gives_the_same_outputs(level, ort, rng):
    feed = {"image": rng.standard_normal((2, 3, 16, 16), dtype=np.float32)}
    expected = ort.InferenceSession(mb.cnn(), providers=["CPUExecutionProvider"]).run(None, feed)
    options = ignis.SessionOptions()
    options.graph_optimization_level = level
    actual = ignis.InferenceSession(mb.cnn(), options).run(None, feed)
    assert_close(actual[0], expected[0], level.name)


def test_output_names_select_and_order_outputs(ort, rng):
    feed = {"x": rng.standard_normal((2, 16), dtype=np.float32)}
    sess = ignis.InferenceSession(mb.mlp())
    probs, hidden = sess.run(None, feed)
    assert [o.shape for o in sess.run([], feed)] == [probs.shape, hidden.shape]
    swapped = sess.run(["hidden", "probs"], feed)
    np.testing.assert_array_equal(swapped[0], hidden)
    np.testing.assert_array_equal(swapped[1], probs)
    (only,) = sess.run(("hidden",), feed)
    np.testing.assert_array_equal(only, hidden)


def test_path_bytes_and_pathlike_load_the_same_model(tmp_path, rng):
    model = mb.mlp()
    path = tmp_path / "mlp.onnx"
    path.write_bytes(model)
    feed = {"x": rng.standard_normal((2, 16), dtype=np.float32)}
    results = [
        ignis.InferenceSession(source).run(None, feed)[0]
        for source in (model, bytearray(model), memoryview(model), str(path), path)
    ]
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_scalar_and_list_inputs_are_converted_like_numpy(ort):
    model = mb.io_shapes()
    feed = {"x": np.ones((1, 2, 3), np.float32), "flags": [True, False], "count": np.int64(5)}
    actual = ignis.InferenceSession(model).run(None, feed)
    expected = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(
        None, {k: np.asarray(v) for k, v in feed.items()}
    )
    for a, e in zip(actual, expected):
        assert_close(a, e)


def test_bfloat16_arrays_round_trip_through_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    sess = ignis.InferenceSession(mb.add_model(elem_type=16, shape=(2, 3)))
    assert sess.get_inputs()[0].type == "tensor(bfloat16)"
    a = np.arange(6, dtype=np.float32).reshape(2, 3).astype(ml_dtypes.bfloat16)
    (y,) = sess.run(None, {"a": a, "b": a})
    assert y.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(y.astype(np.float32), 2 * np.arange(6, dtype=np.float32).reshape(2, 3))
