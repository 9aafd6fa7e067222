# SPDX-License-Identifier: Apache-2.0
"""SessionOptions.tuning and tuning_cache: a measuring session writes the cache file for this
CPU; the results equal those of a session with tuning off (every tactic computes the same
convolution); bad values are refused by name."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ignis


def _conv_model():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((24, 16, 3, 3)).astype(np.float32) * 0.1
    b = rng.standard_normal(24).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W", "B"], ["y"], pads=[1, 1, 1, 1])],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 20, 20])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _session(model, tuning, cache):
    options = ignis.SessionOptions()
    options.tuning = tuning
    options.tuning_cache = str(cache)
    options.intra_op_num_threads = 2
    return ignis.InferenceSession(model, options)


def test_measure_writes_the_cache_and_matches_tuning_off(tmp_path):
    model = _conv_model()
    cache = tmp_path / "cache" / "tuning.tsv"
    x = np.random.default_rng(1).standard_normal((1, 16, 20, 20)).astype(np.float32)
    off = _session(model, "off", cache).run(None, {"x": x})[0]
    assert not cache.exists()
    measured = _session(model, "measure", cache).run(None, {"x": x})[0]
    np.testing.assert_allclose(measured, off, rtol=1e-4, atol=1e-4)
    if cache.exists():  # absent only where a single kernel can run the convolution
        lines = [l for l in cache.read_text().splitlines() if l and not l.startswith("#")]
        assert len(lines) == 1
        fields = lines[0].split("\t")
        assert len(fields) == 6 and fields[1] == "2" and fields[2].startswith("Conv@17 ")
        cached = _session(model, "cached", cache).run(None, {"x": x})[0]
        np.testing.assert_array_equal(cached, measured)


def test_bad_tuning_values_are_refused():
    options = ignis.SessionOptions()
    with pytest.raises(ignis.InvalidArgument, match="tuning 'fast'"):
        options.tuning = "fast"
    assert options.tuning == "cached"
    options.tuning = "MEASURE"
    assert options.tuning == "measure"
