# SPDX-License-Identifier: Apache-2.0
"""The onnxruntime-style surface: model description, options, providers, metadata, profiling."""

import json
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

import ignis
import model_builders as mb


def _describe(args):
    return [(a.name, a.shape, a.type) for a in args]


def test_module_level_functions():
    assert ignis.get_available_providers() == ["CPUExecutionProvider"]
    assert ignis.get_device() == "CPU"
    assert isinstance(ignis.__version__, str) and ignis.__version__.count(".") == 2


@pytest.mark.parametrize(
    "model",
    [mb.io_shapes(), mb.mlp(), mb.mixed_types(), mb.encoder_block()[0], mb.add_model(10), mb.cnn()],
    ids=["io_shapes", "mlp", "mixed_types", "encoder_block", "float16", "cnn"],
)
def test_inputs_and_outputs_are_described_as_onnxruntime_does(model, ort):
    reference = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    sess = ignis.InferenceSession(model)
    assert _describe(sess.get_inputs()) == _describe(reference.get_inputs())
    assert _describe(sess.get_outputs()) == _describe(reference.get_outputs())


def test_symbolic_and_unknown_dims():
    sess = ignis.InferenceSession(mb.io_shapes())
    x, flags, count = sess.get_inputs()
    assert x.shape == ["batch", None, 3] and x.type == "tensor(float)"
    assert flags.shape == [2] and flags.type == "tensor(bool)"
    assert count.shape == [] and count.type == "tensor(int64)"
    assert repr(x) == "NodeArg(name='x', type='tensor(float)', shape=['batch', None, 3])"


def test_model_metadata_matches_onnxruntime(ort, tmp_path):
    model = mb.with_metadata()
    path = tmp_path / "meta.onnx"
    path.write_bytes(model)
    expected = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).get_modelmeta()
    for source in (model, path):
        meta = ignis.InferenceSession(source).get_modelmeta()
        for field in ("producer_name", "graph_name", "domain", "description", "graph_description", "version"):
            assert getattr(meta, field) == getattr(expected, field), field
        assert meta.custom_metadata_map == expected.custom_metadata_map == {"author": "tests", "license": "Apache-2.0"}


def test_model_metadata_defaults_match_onnxruntime(ort):
    model = mb.add_model()
    expected = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).get_modelmeta()
    meta = ignis.InferenceSession(model).get_modelmeta()
    assert (meta.producer_name, meta.graph_name, meta.version, meta.custom_metadata_map) == (
        expected.producer_name,
        expected.graph_name,
        expected.version,
        expected.custom_metadata_map,
    )


def test_session_options_defaults_follow_onnxruntime(ort):
    ours, theirs = ignis.SessionOptions(), ort.SessionOptions()
    for name in (
        "intra_op_num_threads",
        "inter_op_num_threads",
        "log_severity_level",
        "log_verbosity_level",
        "enable_profiling",
        "optimized_model_filepath",
        "enable_cpu_mem_arena",
        "enable_mem_pattern",
        "enable_mem_reuse",
        "use_deterministic_compute",
        "logid",
    ):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.graph_optimization_level.name == theirs.graph_optimization_level.name
    assert int(ours.graph_optimization_level) == int(theirs.graph_optimization_level)
    assert ours.execution_mode.name == theirs.execution_mode.name


def test_session_options_reject_unknown_attributes():
    options = ignis.SessionOptions()
    with pytest.raises(AttributeError):
        options.intra_op_threads = 2  # a typo must not pass silently


def test_optimization_level_accepts_ints_and_onnxruntime_enum(ort):
    options = ignis.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    assert options.graph_optimization_level is ignis.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.graph_optimization_level = 0
    assert options.graph_optimization_level is ignis.GraphOptimizationLevel.ORT_DISABLE_ALL
    with pytest.raises(ValueError, match="ORT_ENABLE_ALL"):
        options.graph_optimization_level = 5
    assert [m.name for m in ignis.GraphOptimizationLevel] == list(ort.GraphOptimizationLevel.__members__)


def test_onnxruntime_session_options_are_accepted(ort, rng):
    theirs = ort.SessionOptions()
    theirs.intra_op_num_threads = 1
    theirs.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ignis.InferenceSession(mb.mlp(), theirs)
    assert sess.get_session_options().intra_op_num_threads == 1
    assert sess.get_session_options().graph_optimization_level == ignis.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess.run(None, {"x": rng.standard_normal((1, 16), dtype=np.float32)})


def test_session_config_entries_are_stored():
    options = ignis.SessionOptions()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    with pytest.raises(ignis.IgnisError, match="no.such.key"):
        options.get_session_config_entry("no.such.key")


def test_cpu_provider_is_accepted_in_every_spelling():
    for providers in (None, [], ["CPUExecutionProvider"], [("CPUExecutionProvider", {})], ("CPUExecutionProvider",)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sess = ignis.InferenceSession(mb.mlp(), providers=providers)
        assert sess.get_providers() == ["CPUExecutionProvider"]
        assert sess.get_provider_options() == {"CPUExecutionProvider": {}}


def test_other_providers_warn_and_fall_back_to_cpu_like_onnxruntime(rng):
    with pytest.warns(UserWarning, match="'CUDAExecutionProvider' is not in available provider names.*CPUExecutionProvider"):
        sess = ignis.InferenceSession(mb.mlp(), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    sess.run(None, {"x": rng.standard_normal((1, 16), dtype=np.float32)})
    with pytest.warns(UserWarning, match="TensorrtExecutionProvider"):
        sess.set_providers(["TensorrtExecutionProvider"])


def test_malformed_providers_argument_raises():
    with pytest.raises(ValueError):
        ignis.InferenceSession(mb.mlp(), providers="CPUExecutionProvider")
    with pytest.raises(ValueError):
        ignis.InferenceSession(mb.mlp(), providers=[42])
    with pytest.raises(ValueError, match="same length"):
        ignis.InferenceSession(mb.mlp(), providers=["CPUExecutionProvider"], provider_options=[{}, {}])


def test_threads_option_is_used(rng):
    feed = {"image": rng.standard_normal((2, 3, 16, 16), dtype=np.float32)}
    results = []
    for threads in (1, 2, 0):
        options = ignis.SessionOptions()
        options.intra_op_num_threads = threads
        results.append(ignis.InferenceSession(mb.cnn(), options).run(None, feed)[0])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[0], results[2], rtol=1e-5, atol=1e-6)


def test_profiling_writes_a_chrome_trace(tmp_path, monkeypatch, rng):
    monkeypatch.chdir(tmp_path)
    options = ignis.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = "mlp_profile_"
    sess = ignis.InferenceSession(mb.mlp(), options)
    assert sess.get_profiling_start_time_ns() > 0
    feed = {"x": rng.standard_normal((2, 16), dtype=np.float32)}
    plain = ignis.InferenceSession(mb.mlp()).run(None, feed)
    for _ in range(2):
        profiled = sess.run(None, feed)
    np.testing.assert_array_equal(profiled[0], plain[0])
    path = sess.end_profiling()
    assert path.startswith("mlp_profile_") and path.endswith(".json")
    events = json.loads((tmp_path / path).read_text())
    runs = [e for e in events if e["name"] == "model_run"]
    nodes = [e for e in events if e["cat"] == "Node"]
    # One event per executed node (fewer than the model's six when the optimizer fuses some).
    assert len(runs) == 2 and len(nodes) >= 2 and len(nodes) % 2 == 0
    assert all(e["args"]["op_name"] and e["args"]["kernel"] for e in nodes)
    first = runs[0]
    assert all(first["ts"] <= e["ts"] <= first["ts"] + first["dur"] + 1 for e in nodes[: len(nodes) // 2])
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    assert sess.end_profiling() == ""  # profiling stopped


def test_profiling_off_by_default():
    assert ignis.InferenceSession(mb.mlp()).end_profiling() == ""


def test_overridable_initializers_and_fallback_calls():
    sess = ignis.InferenceSession(mb.mlp())
    assert sess.get_overridable_initializers() == []
    sess.disable_fallback()
    sess.enable_fallback()


def test_run_options_are_accepted(rng):
    run_options = ignis.RunOptions()
    run_options.log_severity_level = 3
    run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert run_options.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    ignis.InferenceSession(mb.mlp()).run(None, {"x": rng.standard_normal((1, 16), dtype=np.float32)}, run_options)


def test_default_logger_severity():
    ignis.set_default_logger_severity(3)
    try:
        ignis.InferenceSession(mb.mlp())
        with pytest.raises(ValueError):
            ignis.set_default_logger_severity(7)
    finally:
        ignis.set_default_logger_severity(2)


def test_optimize_writes_an_equivalent_model(tmp_path, ort, rng):
    source = tmp_path / "cnn.onnx"
    source.write_bytes(mb.cnn())
    target = tmp_path / "cnn_opt.onnx"
    report = ignis.optimize(source, target)  # "extended": standard ONNX ops only
    assert target.is_file() and str(target) in report.files_written
    assert report.ops_before["BatchNormalization"] == 1
    assert report.nodes_after < report.nodes_before  # Conv + BatchNormalization folded
    assert dict(report.passes), report
    feed = {"image": rng.standard_normal((2, 3, 16, 16), dtype=np.float32)}
    expected = ort.InferenceSession(str(source), providers=["CPUExecutionProvider"]).run(None, feed)
    rewritten = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"]).run(None, feed)
    np.testing.assert_allclose(rewritten[0], expected[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ignis.InferenceSession(target).run(None, feed)[0], expected[0], rtol=1e-4, atol=1e-5)


def test_optimized_model_filepath_saves_the_optimized_model(tmp_path, ort):
    source = tmp_path / "cnn.onnx"
    source.write_bytes(mb.cnn())
    options = ignis.SessionOptions()
    options.graph_optimization_level = ignis.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(tmp_path / "saved.onnx")
    ignis.InferenceSession(source, options)
    saved = ort.InferenceSession(str(tmp_path / "saved.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in saved.get_inputs()] == ["image"]


def test_info_logging_reports_the_kernel_selection(capfd):
    options = ignis.SessionOptions()
    options.log_severity_level = 1  # info
    ignis.InferenceSession(mb.mlp(), options)
    err = capfd.readouterr().err
    assert "ignis: session: kernels " in err and "(cpu: " in err
    ignis.InferenceSession(mb.mlp())  # default: warnings only
    assert "ignis: session" not in capfd.readouterr().err


def test_fp16_precision_stores_matmul_weights_as_half():
    """precision='fp16': MatMul weights rounded to float16 (nearest even), float32 arithmetic.
    On a CPU without F16C the session runs float32, which the rounded reference also bounds."""
    model = mb.mlp(in_features=64, hidden=96, classes=8)
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load_from_string(model).graph.initializer}
    x = np.random.default_rng(5).standard_normal((3, 64)).astype(np.float32)
    options = ignis.SessionOptions()
    options.precision = "fp16"
    assert options.precision == "fp16"
    probs, hidden = ignis.InferenceSession(model, options).run(None, {"x": x})
    _, hidden32 = ignis.InferenceSession(model).run(None, {"x": x})
    w1 = weights["w1"].astype(np.float16).astype(np.float64)
    want = np.maximum(x.astype(np.float64) @ w1 + weights["b1"], 0.0)
    np.testing.assert_allclose(hidden, want, rtol=1e-5, atol=1e-5)
    # float16 keeps 11 significant bits: the layer moves by about 2^-11 of its products' size.
    scale = np.abs(x).astype(np.float64) @ np.abs(weights["w1"])
    assert np.all(np.abs(hidden - hidden32) <= scale * 2.0**-11 + 1e-6)
    assert probs.shape == (3, 8)
