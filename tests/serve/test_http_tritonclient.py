# SPDX-License-Identifier: Apache-2.0
"""`ignis serve` through Triton's own HTTP client (tritonclient.http): health, metadata, model
configuration, inference with JSON and binary tensors for every datatype, requested outputs,
request ids, batching, statistics and the model repository extension.

Expected outputs come from onnxruntime on the same inputs (the digits CNN) or from exact
identities (Identity and Cast models); never from the server.
"""

import ml_dtypes
import numpy as np
import pytest

tritonclient_http = pytest.importorskip("tritonclient.http")
from tritonclient.utils import InferenceServerException  # noqa: E402

# Every datatype whose Identity both ignis and onnxruntime load; BF16 is compared bit-exactly
# (onnxruntime's Python API cannot feed bfloat16).
DATATYPES = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
             "FP16", "FP32", "FP64", "BF16"]
NUMPY = {"BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
         "UINT64": np.uint64, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32,
         "INT64": np.int64, "FP16": np.float16, "FP32": np.float32, "FP64": np.float64,
         "BF16": ml_dtypes.bfloat16}
WIDTH = 3


@pytest.fixture(scope="module")
def repo(make_repo, models):
    r = make_repo("tritonclient")
    r.add("digits", models.digits)
    r.add("multi", models.identity(DATATYPES, width=WIDTH))
    r.add("cast", models.cast())
    r.add("toggle", models.cast())  # loaded and unloaded by the repository tests
    return r


@pytest.fixture(scope="module")
def server(start_server, repo):
    return start_server(repo)


@pytest.fixture(scope="module")
def client(server):
    c = tritonclient_http.InferenceServerClient(url=server.url, network_timeout=60, connection_timeout=10)
    yield c
    c.close()


_REFERENCE_MODEL = {}


def reference_identity_model(models):
    # The reference sees only the datatypes onnxruntime can feed from numpy.
    if "m" not in _REFERENCE_MODEL:
        _REFERENCE_MODEL["m"] = models.identity([d for d in DATATYPES if d != "BF16"], width=WIDTH)
    return _REFERENCE_MODEL["m"]


def expected_identity(models, arrays):
    """onnxruntime's outputs of the identity model; BF16 is its input unchanged."""
    feeds = {f"in_{dt}": a for dt, a in arrays.items() if dt != "BF16"}
    ref = models.reference.run(reference_identity_model(models), feeds, [f"out_{dt[3:]}" for dt in feeds])
    out = {name[4:]: v for name, v in ref.items()}
    if "BF16" in arrays:
        out["BF16"] = arrays["BF16"]
    return out


def assert_same(actual, expected, what):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if expected.dtype == ml_dtypes.bfloat16:
        np.testing.assert_array_equal(actual.astype(ml_dtypes.bfloat16).view(np.uint16),
                                      expected.view(np.uint16), err_msg=what)
        return
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    # Identities are exact: NaN equals NaN, every bit of every value must come back.
    np.testing.assert_array_equal(actual, expected, err_msg=what)


# --- health and metadata ----------------------------------------------------------------------


def test_live_and_ready(client):
    assert client.is_server_live()
    assert client.is_server_ready()
    for m in ("digits", "multi", "cast"):
        assert client.is_model_ready(m), m
        assert client.is_model_ready(m, "1"), m
    assert not client.is_model_ready("no_such_model")
    assert not client.is_model_ready("digits", "2")


def test_server_metadata(client):
    md = client.get_server_metadata()
    assert md["name"] == "ignis"
    assert isinstance(md["version"], str) and md["version"]
    for ext in ("binary_tensor_data", "model_configuration", "model_repository", "statistics"):
        assert ext in md["extensions"], md


def test_model_metadata_digits(client):
    md = client.get_model_metadata("digits")
    assert md["name"] == "digits"
    assert md["versions"] == ["1"]
    assert md["platform"] == "onnxruntime_onnx"
    assert md["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [-1, 1, 8, 8]}]
    assert md["outputs"] == [{"name": "logits", "datatype": "FP32", "shape": [-1, 10]}]
    assert client.get_model_metadata("digits", "1") == md


def test_model_metadata_every_datatype(client):
    md = client.get_model_metadata("multi")
    ins = {t["name"]: t for t in md["inputs"]}
    outs = {t["name"]: t for t in md["outputs"]}
    for dt in DATATYPES:
        assert ins[f"in_{dt}"] == {"name": f"in_{dt}", "datatype": dt, "shape": [-1, WIDTH]}
        assert outs[f"out_{dt}"] == {"name": f"out_{dt}", "datatype": dt, "shape": [-1, WIDTH]}


def test_model_config(client):
    cfg = client.get_model_config("digits")
    # No config.pbtxt and a symbolic leading dim everywhere: the default max_batch_size (32).
    assert cfg["name"] == "digits"
    assert cfg["max_batch_size"] == 32
    assert [(t["name"], t["data_type"], t["dims"]) for t in cfg["input"]] == [("input", "TYPE_FP32", [1, 8, 8])]
    assert [(t["name"], t["data_type"], t["dims"]) for t in cfg["output"]] == [("logits", "TYPE_FP32", [10])]
    multi = client.get_model_config("multi")
    assert multi["max_batch_size"] == 32
    assert {t["name"]: t["data_type"] for t in multi["input"]}["in_BF16"] == "TYPE_BF16"
    assert {t["name"]: t["dims"] for t in multi["output"]}["out_UINT64"] == [WIDTH]


# --- inference --------------------------------------------------------------------------------


def digits_inputs(rows, rng):
    return (rng.random((rows, 1, 8, 8)) * 16).astype(np.float32)


@pytest.mark.parametrize("binary_in", [True, False])
@pytest.mark.parametrize("binary_out", [True, False])
@pytest.mark.parametrize("rows", [1, 7])
def test_infer_digits(client, models, close, binary_in, binary_out, rows):
    rng = np.random.default_rng(rows * 10 + binary_in * 2 + binary_out)
    x = digits_inputs(rows, rng)
    inp = tritonclient_http.InferInput("input", list(x.shape), "FP32")
    inp.set_data_from_numpy(x, binary_data=binary_in)
    out = tritonclient_http.InferRequestedOutput("logits", binary_data=binary_out)
    result = client.infer("digits", [inp], outputs=[out])
    expected = models.reference.run(models.digits, {"input": x})["logits"]
    got = result.as_numpy("logits")
    assert got.dtype == np.float32
    close(got, expected, "digits logits", rtol=1e-4, atol=1e-4)
    resp = result.get_response()
    assert resp["model_name"] == "digits"
    assert resp["model_version"] == "1"
    params = resp["outputs"][0].get("parameters") or {}
    assert ("binary_data_size" in params) == binary_out, resp


def test_infer_digits_real_images(client, models, close):
    """The bundled test digits: same logits and same predicted classes as onnxruntime."""
    data = np.load(models.digits.parent / "digits_test.npz")
    key = [k for k in data.files if data[k].ndim == 4 or data[k].size % 64 == 0][0]
    x = data[key].astype(np.float32).reshape(-1, 1, 8, 8)[:32]
    inp = tritonclient_http.InferInput("input", list(x.shape), "FP32").set_data_from_numpy(x)
    got = client.infer("digits", [inp]).as_numpy("logits")
    expected = models.reference.run(models.digits, {"input": x})["logits"]
    close(got, expected, "logits", rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got.argmax(1), expected.argmax(1))


MODES = {
    "json": lambda i: False,
    "binary": lambda i: True,
    "mixed": lambda i: i % 2 == 0,
    "mixed_other": lambda i: i % 2 == 1,
}


@pytest.mark.parametrize("in_mode", list(MODES))
@pytest.mark.parametrize("out_mode", list(MODES))
@pytest.mark.parametrize("rows", [1, 7])
def test_infer_every_datatype(client, models, helpers, in_mode, out_mode, rows):
    rng = np.random.default_rng([list(MODES).index(in_mode), list(MODES).index(out_mode), rows])
    arrays, inputs, outputs = {}, [], []
    for i, dt in enumerate(DATATYPES):
        binary_in = MODES[in_mode](i) or dt == "BF16"  # tritonclient sends BF16 only as binary
        a = helpers.sample_values(NUMPY, dt, (rows, WIDTH), rng, special=binary_in)
        arrays[dt] = a
        inp = tritonclient_http.InferInput(f"in_{dt}", list(a.shape), dt)
        inp.set_data_from_numpy(a, binary_data=binary_in)
        inputs.append(inp)
        outputs.append(tritonclient_http.InferRequestedOutput(f"out_{dt}", binary_data=MODES[out_mode](i)))
    result = client.infer("multi", inputs, outputs=outputs, request_id=f"{in_mode}-{out_mode}-{rows}")
    expected = expected_identity(models, arrays)
    resp = result.get_response()
    assert resp["id"] == f"{in_mode}-{out_mode}-{rows}"
    assert [o["name"] for o in resp["outputs"]] == [f"out_{dt}" for dt in DATATYPES]
    for i, dt in enumerate(DATATYPES):
        o = resp["outputs"][i]
        assert o["datatype"] == dt and o["shape"] == [rows, WIDTH], o
        assert ("binary_data_size" in (o.get("parameters") or {})) == MODES[out_mode](i), o
        got = result.as_numpy(f"out_{dt}")
        want = expected[dt]
        if dt == "BF16" and not MODES[out_mode](i):
            got = np.asarray(got, dtype=np.float32).astype(ml_dtypes.bfloat16)
        assert_same(got, want, f"out_{dt} ({in_mode} in, {out_mode} out)")


def test_infer_cast_exact(client, close):
    x = np.array([[0.0, -1.5, 2.75, 1e6], [-3.99, 3.99, 123456.5, -0.25]], dtype=np.float32)
    inp = tritonclient_http.InferInput("x", list(x.shape), "FP32").set_data_from_numpy(x, binary_data=False)
    result = client.infer("cast", [inp], outputs=[tritonclient_http.InferRequestedOutput(n, binary_data=b)
                                                   for n, b in (("y", False), ("d", True), ("i", False))])
    np.testing.assert_array_equal(result.as_numpy("y"), x)
    d = result.as_numpy("d")
    assert d.dtype == np.float64
    np.testing.assert_array_equal(d, x.astype(np.float64))
    np.testing.assert_array_equal(result.as_numpy("i"), np.trunc(x))


@pytest.mark.parametrize("binary", [True, False])
def test_requested_outputs_only(client, binary):
    x = np.arange(8, dtype=np.float32).reshape(2, 4) - 3.5
    inp = tritonclient_http.InferInput("x", [2, 4], "FP32").set_data_from_numpy(x)
    result = client.infer("cast", [inp], outputs=[tritonclient_http.InferRequestedOutput("d", binary_data=binary)])
    names = [o["name"] for o in result.get_response()["outputs"]]
    assert names == ["d"]
    assert result.as_numpy("y") is None and result.as_numpy("i") is None
    np.testing.assert_array_equal(result.as_numpy("d"), x.astype(np.float64))
    # Two of three, in the order asked.
    result = client.infer("cast", [inp], outputs=[tritonclient_http.InferRequestedOutput("i", binary_data=binary),
                                                   tritonclient_http.InferRequestedOutput("y", binary_data=not binary)])
    assert [o["name"] for o in result.get_response()["outputs"]] == ["i", "y"]
    np.testing.assert_array_equal(result.as_numpy("y"), x)
    np.testing.assert_array_equal(result.as_numpy("i"), np.trunc(x))


def test_no_outputs_listed_returns_all(client):
    x = np.ones((1, 4), dtype=np.float32)
    inp = tritonclient_http.InferInput("x", [1, 4], "FP32").set_data_from_numpy(x)
    result = client.infer("cast", [inp])
    assert [o["name"] for o in result.get_response()["outputs"]] == ["y", "d", "i"]


def test_request_id_echoed(client):
    x = np.ones((1, 4), dtype=np.float32)
    inp = tritonclient_http.InferInput("x", [1, 4], "FP32").set_data_from_numpy(x)
    for rid in ("req-42", "ünïcode id ✓", "with \"quotes\" and \\ backslash"):
        assert client.infer("cast", [inp], request_id=rid).get_response()["id"] == rid
    # Without an id the response carries none (or an empty one).
    assert client.infer("cast", [inp]).get_response().get("id", "") == ""


def test_unknown_model_and_input_raise(client):
    x = np.ones((1, 4), dtype=np.float32)
    inp = tritonclient_http.InferInput("x", [1, 4], "FP32").set_data_from_numpy(x)
    with pytest.raises(InferenceServerException) as e:
        client.infer("no_such_model", [inp])
    assert e.value.status() == "404" and "no_such_model" in e.value.message()
    bad = tritonclient_http.InferInput("nope", [1, 4], "FP32").set_data_from_numpy(x)
    with pytest.raises(InferenceServerException) as e:
        client.infer("cast", [bad])
    assert e.value.status() == "400" and "nope" in e.value.message()


# --- statistics -------------------------------------------------------------------------------


def model_stats(client, name):
    stats = client.get_inference_statistics(name)["model_stats"]
    assert len(stats) == 1, stats
    return stats[0]


def test_statistics_count_inferences(client):
    before = model_stats(client, "digits")
    assert before["name"] == "digits" and before["version"] == "1"
    rng = np.random.default_rng(5)
    for rows in (1, 7, 3):
        x = digits_inputs(rows, rng)
        client.infer("digits", [tritonclient_http.InferInput("input", list(x.shape), "FP32").set_data_from_numpy(x)])
    after = model_stats(client, "digits")
    assert after["inference_count"] - before["inference_count"] == 11
    assert after["execution_count"] - before["execution_count"] == 3
    succ_b, succ_a = before["inference_stats"]["success"], after["inference_stats"]["success"]
    assert succ_a["count"] - succ_b["count"] == 3
    assert succ_a["ns"] > succ_b["ns"]
    assert after["inference_stats"]["compute_infer"]["count"] - before["inference_stats"]["compute_infer"]["count"] == 3
    assert after["last_inference"] >= before["last_inference"] and after["last_inference"] > 0
    # A failed request counts as a failure, not a success.
    with pytest.raises(InferenceServerException):
        x = np.ones((1, 1, 8, 7), np.float32)
        client.infer("digits", [tritonclient_http.InferInput("input", [1, 1, 8, 7], "FP32").set_data_from_numpy(x)])
    failed = model_stats(client, "digits")
    assert failed["inference_stats"]["fail"]["count"] == after["inference_stats"]["fail"]["count"] + 1
    assert failed["inference_stats"]["success"]["count"] == succ_a["count"]


def test_statistics_all_models(client):
    names = {s["name"] for s in client.get_inference_statistics()["model_stats"]}
    assert {"digits", "multi", "cast"} <= names
    with pytest.raises(InferenceServerException) as e:
        client.get_inference_statistics("no_such_model")
    assert e.value.status() == "404"


# --- model repository -------------------------------------------------------------------------


def index_of(client):
    return {(e["name"], e.get("version")): e for e in client.get_model_repository_index()}


def test_repository_index(client):
    idx = index_of(client)
    for m in ("digits", "multi", "cast", "toggle"):
        assert idx[(m, "1")]["state"] == "READY", idx


def test_unload_and_load(client, server):
    x = np.full((1, 4), 2.5, np.float32)
    inp = tritonclient_http.InferInput("x", [1, 4], "FP32").set_data_from_numpy(x)
    np.testing.assert_array_equal(client.infer("toggle", [inp]).as_numpy("y"), x)

    client.unload_model("toggle")
    assert not client.is_model_ready("toggle")
    with pytest.raises(InferenceServerException) as e:
        client.infer("toggle", [inp])
    assert e.value.status() == "503", (e.value.status(), e.value.message())
    assert "toggle" in e.value.message() and ("unloaded" in e.value.message() or "not ready" in e.value.message())
    idx = index_of(client)
    entry = [v for (n, _), v in idx.items() if n == "toggle"]
    assert entry and all(v["state"] == "UNAVAILABLE" for v in entry), idx
    # The other models do not notice.
    np.testing.assert_array_equal(client.infer("cast", [inp]).as_numpy("y"), x)

    client.load_model("toggle")
    assert client.is_model_ready("toggle")
    np.testing.assert_array_equal(client.infer("toggle", [inp]).as_numpy("y"), x)
    assert index_of(client)[("toggle", "1")]["state"] == "READY"


def test_load_unknown_model_fails(client):
    with pytest.raises(InferenceServerException) as e:
        client.load_model("no_such_model")
    assert e.value.status() == "404" and "no_such_model" in e.value.message()
    with pytest.raises(InferenceServerException) as e:
        client.unload_model("no_such_model")
    assert e.value.status() == "404"


def test_server_alive_at_end(client, server):
    assert server.alive
    assert client.is_server_ready()
