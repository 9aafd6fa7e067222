# SPDX-License-Identifier: Apache-2.0
"""`ignis serve` over gRPC (inference.GRPCInferenceService) through Triton's own client
(tritonclient.grpc) and, for what that client never sends, the raw stub: health, metadata,
model configuration, inference for every datatype from raw_input_contents and from typed
contents, requested outputs, request ids, priority and timeout parameters, status codes and
messages (the same text as HTTP's), statistics, the model repository extension, message size
limit and a graceful SIGTERM with requests in flight.

Expected outputs come from onnxruntime on the same inputs (the digits CNN) or from exact
identities and casts; never from the server.
"""

import json
import re
import socket
import threading
import time

import ml_dtypes
import numpy as np
import pytest

grpc = pytest.importorskip("grpc")
tritonclient_grpc = pytest.importorskip("tritonclient.grpc")
from tritonclient.grpc import model_config_pb2, service_pb2, service_pb2_grpc  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

# Every datatype whose Identity both ignis and onnxruntime load; BF16 is compared bit-exactly
# (onnxruntime's Python API cannot feed bfloat16).
DATATYPES = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
             "FP16", "FP32", "FP64", "BF16"]
# The datatypes with a typed field in InferTensorContents, and that field.
TYPED_FIELD = {"BOOL": "bool_contents", "UINT8": "uint_contents", "UINT16": "uint_contents",
               "UINT32": "uint_contents", "UINT64": "uint64_contents", "INT8": "int_contents",
               "INT16": "int_contents", "INT32": "int_contents", "INT64": "int64_contents",
               "FP32": "fp32_contents", "FP64": "fp64_contents"}
NUMPY = {"BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
         "UINT64": np.uint64, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32,
         "INT64": np.int64, "FP16": np.float16, "FP32": np.float32, "FP64": np.float64,
         "BF16": ml_dtypes.bfloat16}
WIDTH = 3
MAX_BODY_MB = 1

PRIO_CONFIG = """
name: "prio"
platform: "onnxruntime_onnx"
max_batch_size: 8
dynamic_batching {
  max_queue_delay_microseconds: 100
  priority_levels: 2
  default_priority_level: 2
  default_queue_policy { max_queue_size: 64 default_timeout_microseconds: 5000000 allow_timeout_override: true }
}
instance_group { count: 1 kind: KIND_CPU }
parameters { key: "intra_op_thread_count" value { string_value: "1" } }
"""


@pytest.fixture(scope="module")
def repo(make_repo, models):
    r = make_repo("grpc")
    r.add("digits", models.digits)
    r.add("multi", models.identity(DATATYPES, width=WIDTH))
    r.add("typed", models.identity(list(TYPED_FIELD), width=WIDTH))
    r.add("cast", models.cast())
    r.add("toggle", models.cast())  # loaded and unloaded by the repository tests
    r.add("prio", models.cast(), config=PRIO_CONFIG)
    return r


@pytest.fixture(scope="module")
def server(start_server, repo):
    s = start_server(repo, "--grpc-port", "0", "--max-body-mb", str(MAX_BODY_MB))
    m = s.wait_for_log(r"grpc: listening on ([0-9.]+):(\d+)")
    s.grpc_url = f"{m.group(1)}:{m.group(2)}"
    return s


@pytest.fixture(scope="module")
def client(server):
    c = tritonclient_grpc.InferenceServerClient(url=server.grpc_url)
    yield c
    c.close()


@pytest.fixture(scope="module")
def stub(server):
    """The generated stub, for messages tritonclient never builds (typed contents, bad requests)."""
    channel = grpc.insecure_channel(server.grpc_url)
    yield service_pb2_grpc.GRPCInferenceServiceStub(channel)
    channel.close()


def assert_same(actual, expected, what):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    if expected.dtype == ml_dtypes.bfloat16:
        np.testing.assert_array_equal(actual.view(np.uint16), expected.view(np.uint16), err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)  # NaN equals NaN


def infer_input(name, array, datatype):
    i = tritonclient_grpc.InferInput(name, list(array.shape), datatype)
    i.set_data_from_numpy(array)
    return i


def raises_grpc(code, fn, *args, **kwargs):
    """Calls fn, expects an InferenceServerException with gRPC status `code`; returns its message."""
    with pytest.raises(InferenceServerException) as e:
        fn(*args, **kwargs)
    assert e.value.status() == f"StatusCode.{code}", (e.value.status(), e.value.message())
    return e.value.message()


def stub_error(code, call, request):
    with pytest.raises(grpc.RpcError) as e:
        call(request, timeout=30)
    assert e.value.code() == getattr(grpc.StatusCode, code), (e.value.code(), e.value.details())
    return e.value.details()


def digits_inputs(rows, rng):
    return (rng.random((rows, 1, 8, 8)) * 16).astype(np.float32)


# --- health and metadata ----------------------------------------------------------------------


def test_live_and_ready(client):
    assert client.is_server_live()
    assert client.is_server_ready()
    for m in ("digits", "multi", "typed", "cast", "prio"):
        assert client.is_model_ready(m), m
        assert client.is_model_ready(m, "1"), m
    # Unknown models and versions are "not ready", as Triton answers, not errors.
    assert not client.is_model_ready("no_such_model")
    assert not client.is_model_ready("digits", "2")


def test_server_metadata(client):
    md = client.get_server_metadata()
    assert md.name == "ignis"
    assert md.version
    for ext in ("binary_tensor_data", "model_configuration", "model_repository", "statistics"):
        assert ext in md.extensions, md


def test_server_metadata_matches_http(client, server):
    md = client.get_server_metadata()
    http = server.get("/v2").json()
    assert (md.name, md.version, list(md.extensions)) == (http["name"], http["version"], http["extensions"])


def test_model_metadata_digits(client):
    md = client.get_model_metadata("digits")
    assert md.name == "digits"
    assert list(md.versions) == ["1"]
    assert md.platform == "onnxruntime_onnx"
    assert [(t.name, t.datatype, list(t.shape)) for t in md.inputs] == [("input", "FP32", [-1, 1, 8, 8])]
    assert [(t.name, t.datatype, list(t.shape)) for t in md.outputs] == [("logits", "FP32", [-1, 10])]
    assert client.get_model_metadata("digits", "1") == md


def test_model_metadata_every_datatype(client):
    md = client.get_model_metadata("multi")
    ins = {t.name: (t.datatype, list(t.shape)) for t in md.inputs}
    outs = {t.name: (t.datatype, list(t.shape)) for t in md.outputs}
    for dt in DATATYPES:
        assert ins[f"in_{dt}"] == (dt, [-1, WIDTH])
        assert outs[f"out_{dt}"] == (dt, [-1, WIDTH])


def test_model_metadata_errors(client):
    assert raises_grpc("NOT_FOUND", client.get_model_metadata, "no_such_model") == "unknown model 'no_such_model'"
    assert "has no version 9" in raises_grpc("NOT_FOUND", client.get_model_metadata, "digits", "9")


# --- model configuration ----------------------------------------------------------------------


def test_model_config_digits(client):
    cfg = client.get_model_config("digits").config
    # No config.pbtxt and a symbolic leading dim everywhere: the default max_batch_size (32).
    assert cfg.name == "digits"
    assert cfg.platform == "onnxruntime_onnx"
    assert cfg.backend == "onnxruntime"
    assert cfg.max_batch_size == 32
    assert [(t.name, t.data_type, list(t.dims)) for t in cfg.input] == [("input", model_config_pb2.TYPE_FP32,
                                                                          [1, 8, 8])]
    assert [(t.name, t.data_type, list(t.dims)) for t in cfg.output] == [("logits", model_config_pb2.TYPE_FP32, [10])]
    assert cfg.version_policy.WhichOneof("policy_choice") == "latest"
    assert cfg.version_policy.latest.num_versions == 1
    assert [(g.kind, g.count) for g in cfg.instance_group] == [(model_config_pb2.ModelInstanceGroup.KIND_CPU, 1)]
    assert cfg.default_model_filename == "model.onnx"
    assert cfg.WhichOneof("scheduling_choice") is None
    assert not cfg.response_cache.enable


def test_model_config_every_datatype(client):
    cfg = client.get_model_config("multi").config
    types = {t.name: t.data_type for t in cfg.input}
    for dt in DATATYPES:
        assert types[f"in_{dt}"] == model_config_pb2.DataType.Value(f"TYPE_{dt}"), dt
    assert {t.name: list(t.dims) for t in cfg.output}["out_UINT64"] == [WIDTH]


def test_model_config_from_pbtxt(client):
    cfg = client.get_model_config("prio").config
    assert cfg.max_batch_size == 8
    assert cfg.WhichOneof("scheduling_choice") == "dynamic_batching"
    db = cfg.dynamic_batching
    assert db.max_queue_delay_microseconds == 100
    assert db.priority_levels == 2 and db.default_priority_level == 2
    q = db.default_queue_policy
    assert q.max_queue_size == 64 and q.default_timeout_microseconds == 5000000 and q.allow_timeout_override
    assert q.timeout_action == model_config_pb2.ModelQueuePolicy.REJECT
    assert cfg.parameters["intra_op_thread_count"].string_value == "1"
    assert [t.name for t in cfg.input] == ["x"] and [t.name for t in cfg.output] == ["y", "d", "i"]


@pytest.mark.parametrize("model", ["digits", "multi", "cast", "prio"])
def test_model_config_matches_http(client, server, model):
    """The message decodes to the same values as HTTP's JSON config."""
    cfg = client.get_model_config(model).config
    http = server.get(f"/v2/models/{model}/config").json()
    assert (cfg.name, cfg.platform, cfg.backend, cfg.max_batch_size, cfg.default_model_filename) == \
        (http["name"], http["platform"], http["backend"], http["max_batch_size"], http["default_model_filename"])
    name = model_config_pb2.DataType.Name
    assert [(t.name, name(t.data_type), list(t.dims), t.optional) for t in cfg.input] == \
        [(t["name"], t["data_type"], t["dims"], t["optional"]) for t in http["input"]]
    assert [(t.name, name(t.data_type), list(t.dims)) for t in cfg.output] == \
        [(t["name"], t["data_type"], t["dims"]) for t in http["output"]]
    assert [(g.name, g.count) for g in cfg.instance_group] == [(g["name"], g["count"]) for g in http["instance_group"]]
    assert {k: v.string_value for k, v in cfg.parameters.items()} == \
        {k: v["string_value"] for k, v in http["parameters"].items()}
    assert cfg.response_cache.enable == http["response_cache"]["enable"]
    assert cfg.version_policy.latest.num_versions == http["version_policy"]["latest"]["num_versions"]
    assert cfg.HasField("dynamic_batching") == ("dynamic_batching" in http)
    if "dynamic_batching" in http:
        db, hdb = cfg.dynamic_batching, http["dynamic_batching"]
        assert (list(db.preferred_batch_size), db.max_queue_delay_microseconds, db.preserve_ordering,
                db.priority_levels, db.default_priority_level) == \
            (hdb["preferred_batch_size"], hdb["max_queue_delay_microseconds"], hdb["preserve_ordering"],
             hdb["priority_levels"], hdb["default_priority_level"])


def test_model_config_errors(client):
    assert raises_grpc("NOT_FOUND", client.get_model_config, "no_such_model") == "unknown model 'no_such_model'"


# --- inference --------------------------------------------------------------------------------


@pytest.mark.parametrize("rows", [1, 7, 32])
def test_infer_digits(client, models, close, rows):
    rng = np.random.default_rng(rows)
    x = digits_inputs(rows, rng)
    result = client.infer("digits", [infer_input("input", x, "FP32")])
    expected = models.reference.run(models.digits, {"input": x})["logits"]
    got = result.as_numpy("logits")
    assert got.dtype == np.float32
    close(got, expected, "digits logits", rtol=1e-5, atol=1e-5)
    resp = result.get_response()
    assert (resp.model_name, resp.model_version) == ("digits", "1")
    assert [(o.name, o.datatype, list(o.shape)) for o in resp.outputs] == [("logits", "FP32", [rows, 10])]
    assert len(resp.raw_output_contents) == 1


def test_infer_digits_real_images(client, models, close):
    """The bundled test digits: same logits and same predicted classes as onnxruntime."""
    data = np.load(models.digits.parent / "digits_test.npz")
    key = [k for k in data.files if data[k].ndim == 4 or data[k].size % 64 == 0][0]
    x = data[key].astype(np.float32).reshape(-1, 1, 8, 8)[:32]
    got = client.infer("digits", [infer_input("input", x, "FP32")]).as_numpy("logits")
    expected = models.reference.run(models.digits, {"input": x})["logits"]
    close(got, expected, "logits", rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got.argmax(1), expected.argmax(1))


def expected_identity(models, arrays):
    """onnxruntime's outputs of an identity model over `arrays`; BF16 is its input unchanged."""
    fed = [dt for dt in arrays if dt != "BF16"]
    ref = models.reference.run(_reference_model(models, tuple(fed)), {f"in_{dt}": arrays[dt] for dt in fed})
    out = {name[4:]: v for name, v in ref.items()}
    if "BF16" in arrays:
        out["BF16"] = arrays["BF16"]
    return out


_REFERENCE_MODELS = {}


def _reference_model(models, datatypes):
    if datatypes not in _REFERENCE_MODELS:
        _REFERENCE_MODELS[datatypes] = models.identity(list(datatypes), width=WIDTH)
    return _REFERENCE_MODELS[datatypes]


@pytest.mark.parametrize("rows", [1, 5])
def test_infer_every_datatype_raw(client, models, helpers, rows):
    rng = np.random.default_rng([rows, 1])
    arrays = {dt: helpers.sample_values(NUMPY, dt, (rows, WIDTH), rng, special=True) for dt in DATATYPES}
    inputs = [infer_input(f"in_{dt}", a, dt) for dt, a in arrays.items()]
    result = client.infer("multi", inputs, request_id=f"raw-{rows}")
    resp = result.get_response()
    assert resp.id == f"raw-{rows}"
    assert [(o.name, o.datatype, list(o.shape)) for o in resp.outputs] == \
        [(f"out_{dt}", dt, [rows, WIDTH]) for dt in DATATYPES]
    expected = expected_identity(models, arrays)
    for dt in DATATYPES:
        assert_same(result.as_numpy(f"out_{dt}"), expected[dt], f"out_{dt}")


def typed_request(model, arrays, request_id=""):
    """A ModelInferRequest carrying each array in its typed contents field."""
    req = service_pb2.ModelInferRequest(model_name=model, id=request_id)
    for dt, a in arrays.items():
        t = req.inputs.add(name=f"in_{dt}", datatype=dt, shape=list(a.shape))
        getattr(t.contents, TYPED_FIELD[dt]).extend(a.ravel().tolist())
    return req


def raw_outputs(resp):
    out = {}
    for o, raw in zip(resp.outputs, resp.raw_output_contents):
        out[o.name] = np.frombuffer(raw, dtype=NUMPY[o.datatype]).reshape(list(o.shape))
    return out


@pytest.mark.parametrize("rows", [1, 4])
def test_infer_every_datatype_typed_contents(stub, models, helpers, rows):
    rng = np.random.default_rng([rows, 2])
    arrays = {dt: helpers.sample_values(NUMPY, dt, (rows, WIDTH), rng, special=True) for dt in TYPED_FIELD}
    resp = stub.ModelInfer(typed_request("typed", arrays, "typed"), timeout=30)
    assert resp.id == "typed" and resp.model_name == "typed"
    # Outputs always come back raw.
    assert len(resp.raw_output_contents) == len(TYPED_FIELD)
    assert all(not o.HasField("contents") for o in resp.outputs)
    got = raw_outputs(resp)
    expected = expected_identity(models, arrays)
    for dt in TYPED_FIELD:
        assert_same(got[f"out_{dt}"], expected[dt], f"out_{dt}")


def test_infer_cast_exact(client):
    x = np.array([[0.0, -1.5, 2.75, 1e6], [-3.99, 3.99, 123456.5, -0.25]], dtype=np.float32)
    result = client.infer("cast", [infer_input("x", x, "FP32")])
    np.testing.assert_array_equal(result.as_numpy("y"), x)
    d = result.as_numpy("d")
    assert d.dtype == np.float64
    np.testing.assert_array_equal(d, x.astype(np.float64))
    np.testing.assert_array_equal(result.as_numpy("i"), np.trunc(x))


def test_requested_outputs_only(client):
    x = np.arange(8, dtype=np.float32).reshape(2, 4) - 3.5
    inp = infer_input("x", x, "FP32")
    result = client.infer("cast", [inp], outputs=[tritonclient_grpc.InferRequestedOutput("d")])
    assert [o.name for o in result.get_response().outputs] == ["d"]
    assert result.as_numpy("y") is None and result.as_numpy("i") is None
    np.testing.assert_array_equal(result.as_numpy("d"), x.astype(np.float64))
    # Two of three, in the order asked.
    result = client.infer("cast", [inp], outputs=[tritonclient_grpc.InferRequestedOutput("i"),
                                                   tritonclient_grpc.InferRequestedOutput("y")])
    assert [o.name for o in result.get_response().outputs] == ["i", "y"]
    np.testing.assert_array_equal(result.as_numpy("y"), x)
    np.testing.assert_array_equal(result.as_numpy("i"), np.trunc(x))


def test_no_outputs_listed_returns_all(client):
    result = client.infer("cast", [infer_input("x", np.ones((1, 4), np.float32), "FP32")])
    assert [o.name for o in result.get_response().outputs] == ["y", "d", "i"]


def test_request_id_echoed(client):
    inp = infer_input("x", np.ones((1, 4), np.float32), "FP32")
    for rid in ("req-42", "ünïcode id ✓", "with \"quotes\" and \\ backslash"):
        assert client.infer("cast", [inp], request_id=rid).get_response().id == rid
    assert client.infer("cast", [inp]).get_response().id == ""


def test_priority_and_timeout(client, stub):
    x = np.full((2, 4), 1.25, np.float32)
    inp = infer_input("x", x, "FP32")
    for priority in (0, 1, 2):
        r = client.infer("prio", [inp], priority=priority, timeout=2_000_000)
        np.testing.assert_array_equal(r.as_numpy("y"), x)
    msg = raises_grpc("INVALID_ARGUMENT", client.infer, "prio", [inp], priority=3)
    assert msg == "priority 3 is outside the model's levels 1 to 2"
    # Both integer encodings are read; negative values are refused.
    req = service_pb2.ModelInferRequest(model_name="prio")
    t = req.inputs.add(name="x", datatype="FP32", shape=[2, 4])
    t.contents.fp32_contents.extend(x.ravel().tolist())
    req.parameters["priority"].int64_param = 1
    req.parameters["timeout"].uint64_param = 1_000_000
    assert raw_outputs(stub.ModelInfer(req, timeout=30))["y"].tolist() == x.tolist()
    req.parameters["priority"].int64_param = -1
    assert stub_error("INVALID_ARGUMENT", stub.ModelInfer, req) == \
        "request parameter 'priority' must be a non-negative integer"
    req.parameters["priority"].uint64_param = 1
    req.parameters["timeout"].string_param = "soon"
    assert stub_error("INVALID_ARGUMENT", stub.ModelInfer, req) == \
        "request parameter 'timeout' must be a non-negative integer"


def test_concurrent_async_infers(client, models, close):
    """Many calls in flight at once: each answered once, with its own outputs."""
    rng = np.random.default_rng(11)
    xs = [digits_inputs(1 + i % 4, rng) for i in range(24)]
    results, done = [None] * len(xs), threading.Semaphore(0)

    def callback(i):
        def cb(result, error):
            results[i] = (result, error)
            done.release()
        return cb

    for i, x in enumerate(xs):
        client.async_infer("digits", [infer_input("input", x, "FP32")], callback(i), request_id=str(i))
    for _ in xs:
        assert done.acquire(timeout=60)
    for i, (result, error) in enumerate(results):
        assert error is None, error
        assert result.get_response().id == str(i)
        # Calls in flight together are batched, and a batch's rows may take other kernels (the
        # transposed GEMM, another thread split) than a lone run, summing in another order:
        # the bound of the HTTP tests' batched runs.
        close(result.as_numpy("logits"), models.reference.run(models.digits, {"input": xs[i]})["logits"],
              f"request {i}", rtol=1e-4, atol=1e-4)


# --- errors -----------------------------------------------------------------------------------


def http_error(server, model, inputs):
    """The error message HTTP gives for the same JSON request."""
    body = {"inputs": [{"name": n, "shape": list(a.shape), "datatype": dt, "data": a.ravel().tolist()}
                       for n, a, dt in inputs]}
    reply = server.post(f"/v2/models/{model}/infer", body)
    assert reply.status >= 400, reply
    return reply.error


@pytest.mark.parametrize("case", ["wrong_shape", "wrong_dtype", "unknown_input", "missing_input", "batch_too_big"])
def test_invalid_requests_match_http(client, server, case):
    """INVALID_ARGUMENT with the same message HTTP sends with its 400."""
    f32 = np.ones((1, 1, 8, 8), np.float32)
    model, inputs = {
        "wrong_shape": ("digits", [("input", np.ones((1, 1, 8, 7), np.float32), "FP32")]),
        "wrong_dtype": ("digits", [("input", f32.astype(np.float64), "FP64")]),
        "unknown_input": ("digits", [("nope", f32, "FP32")]),
        "missing_input": ("multi", [("in_FP32", np.ones((1, WIDTH), np.float32), "FP32")]),
        "batch_too_big": ("digits", [("input", np.ones((33, 1, 8, 8), np.float32), "FP32")]),
    }[case]
    msg = raises_grpc("INVALID_ARGUMENT", client.infer, model, [infer_input(n, a, dt) for n, a, dt in inputs])
    assert msg == http_error(server, model, inputs)
    expect = {"wrong_shape": "has shape [1, 1, 8, 7]", "wrong_dtype": "has datatype FP64",
              "unknown_input": "unknown input 'nope'", "missing_input": "missing input",
              "batch_too_big": "batch size 33"}[case]
    assert expect in msg


def test_unknown_model_and_version(client, server):
    inp = infer_input("x", np.ones((1, 4), np.float32), "FP32")
    msg = raises_grpc("NOT_FOUND", client.infer, "no_such_model", [inp])
    assert msg == "unknown model 'no_such_model'"
    assert msg == http_error(server, "no_such_model", [("x", np.ones((1, 4), np.float32), "FP32")])
    assert raises_grpc("NOT_FOUND", client.infer, "cast", [inp], model_version="9") == "model 'cast' has no version 9"
    assert "is not a number" in raises_grpc("INVALID_ARGUMENT", client.infer, "cast", [inp], model_version="x")


def test_unknown_output(client):
    inp = infer_input("x", np.ones((1, 4), np.float32), "FP32")
    msg = raises_grpc("INVALID_ARGUMENT", client.infer, "cast", [inp],
                      outputs=[tritonclient_grpc.InferRequestedOutput("zzz")])
    assert msg.startswith("unknown output 'zzz' for model 'cast'")


def bad_request(**fields):
    req = service_pb2.ModelInferRequest(model_name="cast")
    t = req.inputs.add(name="x", datatype=fields.get("datatype", "FP32"), shape=fields.get("shape", [1, 4]))
    if "fp32" in fields:
        t.contents.fp32_contents.extend(fields["fp32"])
    for raw in fields.get("raw", []):
        req.raw_input_contents.append(raw)
    return req


@pytest.mark.parametrize("case,message", [
    ("short_contents", "input 'x': FP32 data goes in contents.fp32_contents, which has 3 elements "
                       "but shape [1, 4] needs 4"),
    ("short_raw", "input 'x': raw_input_contents has 15 bytes but shape [1, 4] of FP32 needs 16"),
    ("both", "input 'x' has both contents and raw_input_contents"),
    ("raw_count", "the request has 2 raw_input_contents for 1 inputs; give one per input, in order, or none"),
    ("no_data", "input 'x' has no data: neither contents nor raw_input_contents"),
    ("bad_datatype", "input 'x': unknown datatype 'FLOAT32'"),
    ("negative_dim", "input 'x': shape [1, -4] has a negative extent"),
    ("fp16_contents", "input 'x': FP16 has no typed contents field; send its data in raw_input_contents"),
    ("wrong_field", "input 'x': INT32 data goes in contents.int_contents, which has 0 elements "
                    "but shape [1, 4] needs 4"),
])
def test_malformed_requests(stub, case, message):
    req = {
        "short_contents": lambda: bad_request(fp32=[1, 2, 3]),
        "short_raw": lambda: bad_request(raw=[b"\0" * 15]),
        "both": lambda: bad_request(fp32=[1, 2, 3, 4], raw=[b"\0" * 16]),
        "raw_count": lambda: bad_request(raw=[b"\0" * 16, b"\0" * 16]),
        "no_data": lambda: bad_request(),
        "bad_datatype": lambda: bad_request(datatype="FLOAT32", fp32=[1, 2, 3, 4]),
        "negative_dim": lambda: bad_request(shape=[1, -4]),
        "fp16_contents": lambda: bad_request(datatype="FP16", fp32=[1, 2, 3, 4]),
        "wrong_field": lambda: bad_request(datatype="INT32", fp32=[1, 2, 3, 4]),
    }[case]()
    assert stub_error("INVALID_ARGUMENT", stub.ModelInfer, req) == message


def test_integer_contents_out_of_range(stub):
    req = service_pb2.ModelInferRequest(model_name="typed")
    t = req.inputs.add(name="in_INT8", datatype="INT8", shape=[1, WIDTH])
    t.contents.int_contents.extend([1, 300, 2])
    assert stub_error("INVALID_ARGUMENT", stub.ModelInfer, req) == \
        "input 'in_INT8': element 1 (300) is outside the range of INT8"


def test_unsupported_features(stub, client):
    req = bad_request(fp32=[1, 2, 3, 4])
    req.inputs[0].parameters["shared_memory_region"].string_param = "region0"
    assert stub_error("UNIMPLEMENTED", stub.ModelInfer, req) == "input 'x': shared memory is not supported"
    req = bad_request(fp32=[1, 2, 3, 4])
    req.outputs.add(name="y").parameters["classification"].int64_param = 3
    assert "classification" in stub_error("UNIMPLEMENTED", stub.ModelInfer, req)
    # Methods of Triton's service that ignis does not serve.
    raises_grpc("UNIMPLEMENTED", client.get_system_shared_memory_status)
    raises_grpc("UNIMPLEMENTED", client.get_log_settings)


def test_message_over_the_body_limit(stub):
    req = bad_request(shape=[1, MAX_BODY_MB * 1024 * 256 + 16], raw=[b"\0" * (MAX_BODY_MB * 1024 * 1024 + 64)])
    stub_error("RESOURCE_EXHAUSTED", stub.ModelInfer, req)


# --- statistics -------------------------------------------------------------------------------


def model_stats(client, name):
    stats = client.get_inference_statistics(name).model_stats
    assert len(stats) == 1, stats
    return stats[0]


def test_statistics_count_inferences(client):
    before = model_stats(client, "digits")
    assert (before.name, before.version) == ("digits", "1")
    rng = np.random.default_rng(5)
    for rows in (1, 7, 3):
        client.infer("digits", [infer_input("input", digits_inputs(rows, rng), "FP32")])
    after = model_stats(client, "digits")
    assert after.inference_count - before.inference_count == 11
    assert after.execution_count - before.execution_count == 3
    succ_b, succ_a = before.inference_stats.success, after.inference_stats.success
    assert succ_a.count - succ_b.count == 3
    assert succ_a.ns > succ_b.ns
    assert after.inference_stats.compute_infer.count - before.inference_stats.compute_infer.count == 3
    assert after.last_inference >= before.last_inference > 0
    # Executions by batch size (rows, as Triton counts them): one more of each size sent.
    counts = lambda st: {b.batch_size: b.compute_infer.count for b in st.batch_stats}  # noqa: E731
    grew = {size: counts(after)[size] - counts(before).get(size, 0) for size in counts(after)}
    assert {size: n for size, n in grew.items() if n} == {1: 1, 3: 1, 7: 1}
    # A request the model refuses counts as a failure, not a success.
    raises_grpc("INVALID_ARGUMENT", client.infer, "digits",
                [infer_input("input", np.ones((1, 1, 8, 7), np.float32), "FP32")])
    failed = model_stats(client, "digits")
    assert failed.inference_stats.fail.count == after.inference_stats.fail.count + 1
    assert failed.inference_stats.success.count == succ_a.count


def test_statistics_match_http(client, server):
    """With no traffic in between, both front ends report the same counters."""
    g = model_stats(client, "cast")
    h = server.get("/v2/models/cast/stats").json()["model_stats"][0]
    assert (g.name, g.version, g.inference_count, g.execution_count, g.last_inference) == \
        (h["name"], h["version"], h["inference_count"], h["execution_count"], h["last_inference"])
    for key in ("success", "fail", "queue", "compute_input", "compute_infer", "compute_output"):
        d = getattr(g.inference_stats, key)
        assert (d.count, d.ns) == (h["inference_stats"][key]["count"], h["inference_stats"][key]["ns"]), key


def test_statistics_all_models(client):
    names = {s.name for s in client.get_inference_statistics().model_stats}
    assert {"digits", "multi", "typed", "cast", "prio"} <= names
    assert raises_grpc("NOT_FOUND", client.get_inference_statistics, "no_such_model") == \
        "unknown model 'no_such_model'"


# --- model repository -------------------------------------------------------------------------


def index_of(client, ready=False):
    return {(m.name, m.version): m for m in client.get_model_repository_index().models
            if not ready or m.state == "READY"}


def test_repository_index(client, server):
    idx = index_of(client)
    for m in ("digits", "multi", "typed", "cast", "prio", "toggle"):
        assert idx[(m, "1")].state == "READY", idx
    http = {(e["name"], e.get("version", "")): e["state"] for e in server.post("/v2/repository/index").json()}
    assert {k: v.state for k, v in idx.items()} == http


def test_unload_and_load(client):
    x = np.full((1, 4), 2.5, np.float32)
    inp = infer_input("x", x, "FP32")
    np.testing.assert_array_equal(client.infer("toggle", [inp]).as_numpy("y"), x)

    client.unload_model("toggle")
    assert not client.is_model_ready("toggle")
    msg = raises_grpc("UNAVAILABLE", client.infer, "toggle", [inp])
    assert "toggle" in msg and "not ready" in msg
    entries = [m for m in client.get_model_repository_index().models if m.name == "toggle"]
    assert entries and all(m.state == "UNAVAILABLE" for m in entries), entries
    assert ("toggle", "1") not in index_of(client, ready=True)
    # The other models do not notice.
    np.testing.assert_array_equal(client.infer("cast", [inp]).as_numpy("y"), x)

    client.load_model("toggle")
    assert client.is_model_ready("toggle")
    np.testing.assert_array_equal(client.infer("toggle", [inp]).as_numpy("y"), x)
    assert index_of(client)[("toggle", "1")].state == "READY"


def test_load_and_unload_errors(client):
    assert raises_grpc("NOT_FOUND", client.load_model, "no_such_model") == \
        "no model folder 'no_such_model' in the repository"
    raises_grpc("NOT_FOUND", client.unload_model, "no_such_model")
    assert "not a valid model name" in raises_grpc("INVALID_ARGUMENT", client.load_model, "../etc")
    # A config sent with the request would be silently ignored otherwise.
    msg = raises_grpc("UNIMPLEMENTED", client.load_model, "toggle", config='{"max_batch_size": 4}')
    assert "'config'" in msg
    assert client.is_model_ready("toggle")


def test_server_alive_at_end(client, server):
    assert server.alive
    assert client.is_server_ready()


# --- shutdown ---------------------------------------------------------------------------------


def slow_counters(server):
    """(requests in flight, requests answered) of model 'slow', from /metrics."""
    text = server.get("/metrics").body.decode()

    def value(name):
        m = re.search(rf'^{name}\{{[^}}]*model="slow"[^}}]*\}} (\S+)$', text, re.M)
        return int(float(m.group(1))) if m else 0
    return value("ignis_inflight_requests"), value("ignis_inference_success_total")


def test_sigterm_drains_grpc_requests(start_server, make_repo, models):
    """Calls accepted before SIGTERM are answered; then the process exits 0."""
    slow = models.slow(layers=24, size=1024)
    repo = make_repo("grpc_drain")
    repo.add("slow", slow)
    s = start_server(repo, "--grpc-port", "0")
    m = s.wait_for_log(r"grpc: listening on ([0-9.]+):(\d+)")
    c = tritonclient_grpc.InferenceServerClient(url=f"{m.group(1)}:{m.group(2)}")
    x = np.random.default_rng(3).standard_normal((32, 1024)).astype(np.float32)
    results, done = {}, threading.Semaphore(0)

    def callback(i):
        def cb(result, error):
            results[i] = (result, error)
            done.release()
        return cb

    n = 8
    for i in range(n):
        c.async_infer("slow", [infer_input("x", x, "FP32")], callback(i))
    # SIGTERM once the server has accepted every call (queued, running or answered).
    deadline = time.monotonic() + 60
    while sum(slow_counters(s)) < n:
        assert time.monotonic() < deadline, slow_counters(s)
        time.sleep(0.002)
    in_flight = slow_counters(s)[0]
    s.terminate()
    for _ in range(n):
        assert done.acquire(timeout=60)
    assert all(err is None for _, err in results.values()), results
    assert in_flight > 0, "every call finished before SIGTERM; the drain was not exercised"
    expected = models.reference.run(slow, {"x": x})["y"]
    np.testing.assert_allclose(results[n - 1][0].as_numpy("y"), expected, rtol=1e-4, atol=1e-5)
    assert s.stop() == 0, s.logs()
    assert "drained" in s.logs()
    c.close()


def test_grpc_port_in_use_fails_start(start_server, make_repo, models):
    repo = make_repo("grpc_busy")
    repo.add("cast", models.cast())
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        s = start_server(repo, "--grpc-port", str(busy.getsockname()[1]), "--log-format", "json", wait_ready=False)
        assert s.proc.wait(30) == 1
    s.stop()
    logs = s.logs()
    assert "grpc: cannot listen on 127.0.0.1:" in logs
    # gRPC's own messages go through the server's log too: every line is one JSON object.
    for line in logs.splitlines():
        assert json.loads(line)["msg"], line
