# SPDX-License-Identifier: Apache-2.0
"""Inputs are read in place and outputs handed over without a copy.

Copies made on the Python side would be numpy allocations, which tracemalloc sees; the
engine's own buffers (aligned allocations) are invisible to it.  So a run over a large array
whose traced peak stays small made no copy of that array."""

import gc
import tracemalloc

import numpy as np
import pytest

import ignis
import model_builders as mb

BIG = (1024, 4096)  # 16 MiB of float32
BIG_BYTES = BIG[0] * BIG[1] * 4
SMALL_BYTES = 1 << 20


def _traced_peak(fn):
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak - base


@pytest.fixture(scope="module")
def big_input():
    return np.random.default_rng(3).standard_normal(BIG, dtype=np.float32)


def test_contiguous_input_is_read_in_place(big_input):
    sess = ignis.InferenceSession(mb.reduce_sum())
    sess.run(None, {"x": big_input})  # plan outside the measurement
    (total,), peak = _traced_peak(lambda: sess.run(None, {"x": big_input}))
    assert peak < SMALL_BYTES, f"a run over a {BIG_BYTES}-byte input allocated {peak} bytes in numpy"
    np.testing.assert_allclose(total, big_input.sum(dtype=np.float64), rtol=1e-4)


def test_contiguous_view_into_a_larger_array_is_read_in_place(big_input):
    sess = ignis.InferenceSession(mb.reduce_sum())
    view = big_input[100:612]  # C-contiguous rows in the middle of the buffer
    assert view.base is big_input and view.flags.c_contiguous
    (total,), peak = _traced_peak(lambda: sess.run(None, {"x": view}))
    assert peak < SMALL_BYTES
    np.testing.assert_allclose(total, view.sum(dtype=np.float64), rtol=1e-4)


def test_read_only_input_is_accepted(big_input):
    frozen = big_input[:8].copy()
    frozen.flags.writeable = False
    (total,) = ignis.InferenceSession(mb.reduce_sum()).run(None, {"x": frozen})
    np.testing.assert_allclose(total, frozen.sum(dtype=np.float64), rtol=1e-5)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a[:, ::2],  # strided
        lambda a: a.T,  # Fortran order
        lambda a: a.astype(a.dtype.newbyteorder(">")),  # big-endian
    ],
    ids=["strided", "transposed", "byteswapped"],
)
def test_other_layouts_are_copied_once_and_give_the_right_result(big_input, make):
    sess = ignis.InferenceSession(mb.reduce_sum())
    x = make(big_input)
    (total,), peak = _traced_peak(lambda: sess.run(None, {"x": x}))
    assert peak >= x.size * 4, "a non-contiguous input must be copied into a contiguous one"
    np.testing.assert_allclose(total, np.asarray(x, np.float64).sum(), rtol=1e-4)


def test_outputs_wrap_the_engine_buffer_without_a_copy(big_input):
    sess = ignis.InferenceSession(mb.add_one())
    sess.run(None, {"x": big_input[:2]})
    (y,), peak = _traced_peak(lambda: sess.run(None, {"x": big_input}))
    assert peak < SMALL_BYTES, f"returning a {BIG_BYTES}-byte output allocated {peak} bytes in numpy"
    assert not y.flags.owndata
    assert type(y.base).__name__ == "PyCapsule"  # owns the engine's tensor handle
    assert y.flags.c_contiguous and y.flags.writeable and y.flags.aligned
    np.testing.assert_array_equal(y, big_input + np.float32(1))


def test_output_outlives_the_session_and_its_views_keep_it_alive(big_input):
    x = big_input[:64]
    sess = ignis.InferenceSession(mb.add_one())
    (y,) = sess.run(None, {"x": x})
    tail = y[32:]
    del sess, y
    gc.collect()
    for _ in range(3):  # reuse of freed memory would show up as changed values
        ignis.InferenceSession(mb.add_one()).run(None, {"x": np.zeros_like(x)})
    np.testing.assert_array_equal(tail, x[32:] + np.float32(1))


def test_runs_return_distinct_buffers():
    sess = ignis.InferenceSession(mb.add_one())
    (a,) = sess.run(None, {"x": np.zeros((4, 4), np.float32)})
    (b,) = sess.run(None, {"x": np.ones((4, 4), np.float32)})
    assert not np.shares_memory(a, b)
    a += 5
    np.testing.assert_array_equal(b, np.full((4, 4), 2, np.float32))
