# SPDX-License-Identifier: Apache-2.0
"""One session shared by several Python threads: every result is right, and the GIL is
released while the engine runs."""

import threading
import time

import numpy as np
from conftest import assert_close

import ignis
import model_builders as mb

THREADS = 4
RUNS_PER_THREAD = 25


def _run_threads(target, count):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as e:  # reported by the main thread
            errors.append((i, e))

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_threads_share_one_session_and_get_their_own_results(ort, rng):
    model = mb.cnn()
    # Different batch sizes too, so threads also ask for different plans at the same time.
    feeds = [
        {"image": rng.standard_normal((1 + k % 3, 3, 16, 16), dtype=np.float32)}
        for k in range(THREADS * RUNS_PER_THREAD)
    ]
    reference = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    expected = [reference.run(None, f)[0] for f in feeds]

    sess = ignis.InferenceSession(model)

    def work(t):
        for r in range(RUNS_PER_THREAD):
            k = t * RUNS_PER_THREAD + r
            (scores,) = sess.run(None, feeds[k])
            assert_close(scores, expected[k], f"thread {t} run {r}")

    _run_threads(work, THREADS)


def test_threads_running_different_sessions(ort, rng):
    models = [mb.mlp(), mb.encoder_block()[0]]
    feeds = [
        {"x": rng.standard_normal((4, 16), dtype=np.float32)},
        {"ids": rng.integers(0, 50, size=(2, 11)).astype(np.int64)},
    ]
    expected = [ort.InferenceSession(m, providers=["CPUExecutionProvider"]).run(None, f) for m, f in zip(models, feeds)]
    sessions = [ignis.InferenceSession(m) for m in models]

    def work(t):
        k = t % 2
        for _ in range(RUNS_PER_THREAD):
            for a, e in zip(sessions[k].run(None, feeds[k]), expected[k]):
                assert_close(a, e, f"thread {t}")

    _run_threads(work, THREADS)


def _slow_feed(sess):
    """A cnn batch big enough that one run takes at least ~0.2 s here."""
    batch = 8
    while True:
        feed = {"image": np.random.default_rng(0).standard_normal((batch, 3, 16, 16), dtype=np.float32)}
        start = time.perf_counter()
        sess.run(None, feed)
        if time.perf_counter() - start >= 0.2 or batch >= 8192:
            return feed
        batch *= 2


def test_the_gil_is_released_while_a_session_runs():
    options = ignis.SessionOptions()
    options.intra_op_num_threads = 1
    sess = ignis.InferenceSession(mb.cnn(), options)
    feed = _slow_feed(sess)
    window = {}

    def work():
        window["start"] = time.perf_counter()
        sess.run(None, feed)
        window["end"] = time.perf_counter()

    worker = threading.Thread(target=work)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    # With the GIL held for the whole run, this thread could not execute a single bytecode
    # between the worker's two timestamps.
    inside = [t for t in ticks if window["start"] < t < window["end"]]
    assert len(inside) > 100, f"{len(inside)} ticks during a {window['end'] - window['start']:.3f}s run"


def test_run_async_delivers_results_to_the_callback(ort, rng):
    feed = {"x": rng.standard_normal((3, 16), dtype=np.float32)}
    expected = ort.InferenceSession(mb.mlp(), providers=["CPUExecutionProvider"]).run(None, feed)
    sess = ignis.InferenceSession(mb.mlp())
    done = threading.Event()
    received = {}

    def callback(outputs, user_data, error):
        received.update(outputs=outputs, user_data=user_data, error=error)
        done.set()

    sess.run_async(None, feed, callback, "token")
    assert done.wait(60)
    assert received["error"] == "" and received["user_data"] == "token"
    for a, e in zip(received["outputs"], expected):
        assert_close(a, e)

    done.clear()
    sess.run_async(None, {"x": np.zeros((3, 15), np.float32)}, callback, None)
    assert done.wait(60)
    assert received["outputs"] is None and "input 'x'" in received["error"]


def test_sessions_with_pinned_workers_agree_with_onnxruntime(ort, rng):
    """pin_threads binds the workers to cores; several sessions (sharing one pool) run from
    several threads at once and each result matches onnxruntime's."""
    model = mb.cnn()
    options = ignis.SessionOptions()
    options.intra_op_num_threads = 2
    options.pin_threads = True
    sessions = [ignis.InferenceSession(model, options) for _ in range(3)]
    reference = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    feeds = [{"image": rng.standard_normal((2, 3, 16, 16), dtype=np.float32)} for _ in range(THREADS)]
    expected = [reference.run(None, f)[0] for f in feeds]

    def work(i):
        for r in range(RUNS_PER_THREAD):
            (actual,) = sessions[(i + r) % len(sessions)].run(None, feeds[i])
            assert_close(actual, expected[i], f"thread {i} run {r}")

    _run_threads(work, THREADS)
