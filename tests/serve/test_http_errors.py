# SPDX-License-Identifier: Apache-2.0
"""Hostile and broken requests against `ignis serve` over HTTP, from http.client, curl and raw
sockets: malformed JSON, wrong names, datatypes and shapes, broken binary framing, unknown
models and versions, oversized bodies, HTTP garbage, slow clients, clients that vanish, many
connections at once and a corrupt model in the repository.

Every error must come back as a JSON `{"error": "..."}` body whose message names the problem,
with the right status, and the server must still answer a normal request correctly afterwards
(checked after every test).
"""

import http.client
import json
import re
import shutil
import socket
import struct
import subprocess
import threading
import time

import numpy as np
import pytest

INFER = "/v2/models/cast/infer"
MAX_BODY_MB = 1
READ_TIMEOUT_S = 1


# --- servers ----------------------------------------------------------------------------------


def tile_model(width=16, repeats=65536):
    """x:FP32[batch, width] -> Tile -> y[batch, width * repeats]: a small request, a big answer."""
    from onnx import TensorProto, helper, numpy_helper

    reps = numpy_helper.from_array(np.array([1, repeats], np.int64), "reps")
    g = helper.make_graph([helper.make_node("Tile", ["x", "reps"], ["y"])], "tile",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", width * repeats])],
                          initializer=[reps])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def unknown_op_model():
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Mystery", ["x"], ["y"], domain="com.example.nowhere")], "bad",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("com.example.nowhere", 1)])
    m.ir_version = 8
    return m


@pytest.fixture(scope="module")
def repo(make_repo, models):
    r = make_repo("errors")
    r.add("cast", models.cast())
    r.add("int8", models.identity(["INT8"], width=4))
    r.add("pair", models.identity(["FP32", "INT32"], width=2))
    r.add("big", tile_model())
    r.add("broken", models.corrupt)
    r.add("bad_op", unknown_op_model())
    (r.root / "no_versions" / "1").mkdir(parents=True)
    return r


@pytest.fixture(scope="module")
def server(start_server, repo):
    return start_server(repo)


@pytest.fixture(scope="module")
def limits_server(start_server, make_repo, models):
    r = make_repo("limits")
    r.add("cast", models.cast())
    return start_server(r, "--max-body-mb", str(MAX_BODY_MB), "--read-timeout", str(READ_TIMEOUT_S))


def cast_request(x, **extra):
    x = np.asarray(x, np.float32)
    return {"inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32", "data": x.ravel().tolist()}],
            **extra}


def assert_cast_ok(reply, x):
    """A correct answer of the cast model for input x (exact identities)."""
    assert reply.status == 200, reply
    x = np.asarray(x, np.float32)
    outs = {o["name"]: o for o in reply.json()["outputs"]}
    np.testing.assert_array_equal(np.array(outs["y"]["data"], np.float32).reshape(outs["y"]["shape"]), x)
    np.testing.assert_array_equal(np.array(outs["d"]["data"], np.float64).reshape(outs["d"]["shape"]),
                                  x.astype(np.float64))
    np.testing.assert_array_equal(np.array(outs["i"]["data"], np.float32).reshape(outs["i"]["shape"]), np.trunc(x))


def check_serves(srv, seed=0):
    assert srv.alive, f"server died:\n{srv.logs()}"
    x = np.random.default_rng(seed).standard_normal((3, 4)).astype(np.float32) * 100
    assert_cast_ok(srv.post(INFER, cast_request(x), timeout=20), x)


@pytest.fixture(autouse=True)
def still_serves(server, limits_server):
    yield
    server.close_sockets()  # those a failed test left open
    limits_server.close_sockets()
    check_serves(server, 1)
    check_serves(limits_server, 2)


def expect_error(reply, status, *words):
    assert reply.status == status, f"expected {status}, got {reply!r}"
    msg = reply.error
    for w in words:
        assert w.lower() in msg.lower(), f"{w!r} not in error message {msg!r}"
    return msg


# --- raw sockets ------------------------------------------------------------------------------


def raw_reply(sock, timeout=10):
    """Reads one HTTP response from a raw socket: (status, headers, body), or None when the
    server closed without one."""
    sock.settimeout(timeout)
    r = http.client.HTTPResponse(sock)
    try:
        r.begin()
    except (http.client.RemoteDisconnected, ConnectionResetError, http.client.BadStatusLine):
        return None
    body = r.read()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def read_responses(sock, timeout=10):
    """A reader of successive responses on one socket (pipelining, keep-alive): call it for each.
    One buffered file serves them all, so bytes read ahead belong to the next response."""
    sock.settimeout(timeout)
    f = sock.makefile("rb")

    def next_response():
        line = f.readline()
        if not line:
            return None
        status = int(line.split(b" ", 2)[1])
        headers = {}
        while True:
            h = f.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            k, v = h.decode("latin-1").split(":", 1)
            headers[k.strip().lower()] = v.strip()
        return status, headers, f.read(int(headers.get("content-length", 0)))

    return next_response


def closed_by_peer(sock, within):
    """True when the server closes the socket (EOF or reset) within `within` seconds; any bytes it
    sends first (an error response) are ignored."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if sock.recv(65536) == b"":
                return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False
    return False


def http_connections(srv):
    text = srv.get("/metrics").body.decode()
    m = re.search(r"^ignis_http_connections(?:\{[^}]*\})? (\S+)$", text, re.M)
    assert m, text[:2000]
    return float(m.group(1))


def wait_connections_at_most(srv, n, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        c = http_connections(srv)  # counts the scrape's own connection
        if c <= n + 1:
            return c
        if time.monotonic() > deadline:
            raise AssertionError(f"{c} HTTP connections still open, expected at most {n + 1}")
        time.sleep(0.1)


# --- the request body: JSON -------------------------------------------------------------------

GOOD_INPUT = {"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}

BAD_BODIES = {
    "malformed_json": (b'{"inputs": [', ["malformed JSON"]),
    "trailing_garbage": (b'{"inputs": []} xyz', ["malformed JSON"]),
    "nan_literal": (b'{"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[NaN,1,2,3]}]}',
                    ["malformed JSON"]),
    "array_not_object": (b"[1, 2, 3]", ["JSON object"]),
    "string_not_object": (b'"hello"', ["JSON object"]),
    "number_not_object": (b"42", ["JSON object"]),
    "null_not_object": (b"null", ["JSON object"]),
    "empty_body": (b"", ["empty"]),
    "no_inputs": (b"{}", ["'inputs'"]),
    "inputs_not_array": (json.dumps({"inputs": {"x": 1}}).encode(), ["'inputs'"]),
    "inputs_empty": (json.dumps({"inputs": []}).encode(), ["empty"]),
    "input_not_object": (json.dumps({"inputs": [1]}).encode(), ["object"]),
    "input_no_name": (json.dumps({"inputs": [{"shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}).encode(),
                      ["name"]),
    "input_no_datatype": (json.dumps({"inputs": [{"name": "x", "shape": [1, 4], "data": [1, 2, 3, 4]}]}).encode(),
                          ["'x'", "datatype"]),
    "unknown_datatype": (json.dumps({"inputs": [{**GOOD_INPUT, "datatype": "FLOAT32"}]}).encode(),
                         ["unknown datatype", "FLOAT32"]),
    "no_shape": (json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "data": [1, 2, 3, 4]}]}).encode(),
                 ["'x'", "shape"]),
    "negative_shape": (json.dumps({"inputs": [{**GOOD_INPUT, "shape": [-1, 4]}]}).encode(), ["'x'", "shape"]),
    "fractional_shape": (json.dumps({"inputs": [{**GOOD_INPUT, "shape": [1.5, 4]}]}).encode(), ["'x'", "shape"]),
    "no_data": (json.dumps({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32"}]}).encode(),
                ["'x'", "data"]),
    "string_in_fp32_data": (json.dumps({"inputs": [{**GOOD_INPUT, "data": [1, "two", 3, 4]}]}).encode(),
                            ["'x'", "number", "FP32"]),
    "bool_in_fp32_data": (json.dumps({"inputs": [{**GOOD_INPUT, "data": [1, True, 3, 4]}]}).encode(),
                          ["'x'", "number"]),
    "object_in_data": (json.dumps({"inputs": [{**GOOD_INPUT, "data": [1, {"a": 2}, 3, 4]}]}).encode(),
                       ["'x'", "number"]),
    "too_few_elements": (json.dumps({"inputs": [{**GOOD_INPUT, "data": [1, 2, 3]}]}).encode(),
                         ["'x'", "3 elements", "4"]),
    "too_many_elements": (json.dumps({"inputs": [{**GOOD_INPUT, "data": [1, 2, 3, 4, 5]}]}).encode(),
                          ["'x'", "more elements", "4"]),
    "too_many_nested": (json.dumps({"inputs": [{**GOOD_INPUT, "data": [[1, 2, 3], [4, 5]]}]}).encode(),
                        ["'x'", "more elements"]),
    "input_twice": (json.dumps({"inputs": [GOOD_INPUT, GOOD_INPUT]}).encode(), ["'x'", "twice"]),
    "id_not_string": (json.dumps({"id": 7, "inputs": [GOOD_INPUT]}).encode(), ["'id'", "string"]),
    "parameters_not_object": (json.dumps({"parameters": [1], "inputs": [GOOD_INPUT]}).encode(), ["parameters"]),
    "binary_output_not_bool": (json.dumps({"parameters": {"binary_data_output": "yes"},
                                           "inputs": [GOOD_INPUT]}).encode(), ["binary_data_output"]),
    "outputs_not_array": (json.dumps({"inputs": [GOOD_INPUT], "outputs": {"y": 1}}).encode(), ["'outputs'"]),
    "output_no_name": (json.dumps({"inputs": [GOOD_INPUT], "outputs": [{}]}).encode(), ["name"]),
    "output_twice": (json.dumps({"inputs": [GOOD_INPUT], "outputs": [{"name": "y"}, {"name": "y"}]}).encode(),
                     ["'y'", "twice"]),
    "unknown_output": (json.dumps({"inputs": [GOOD_INPUT], "outputs": [{"name": "zzz"}]}).encode(),
                       ["unknown output 'zzz'", "'y'"]),
    "output_binary_not_bool": (json.dumps({"inputs": [GOOD_INPUT],
                                           "outputs": [{"name": "y", "parameters": {"binary_data": 1}}]}).encode(),
                               ["'y'", "binary_data"]),
    "unknown_input": (json.dumps({"inputs": [{**GOOD_INPUT, "name": "bogus"}]}).encode(),
                      ["unknown input 'bogus'", "'x'"]),
    "wrong_datatype": (json.dumps({"inputs": [{**GOOD_INPUT, "datatype": "INT32"}]}).encode(),
                       ["'x'", "INT32", "FP32"]),
    "fp64_for_fp32": (json.dumps({"inputs": [{**GOOD_INPUT, "datatype": "FP64"}]}).encode(),
                      ["'x'", "FP64", "FP32"]),
    "bytes_to_float_model": (json.dumps({"inputs": [{**GOOD_INPUT, "datatype": "BYTES",
                                                     "data": ["a", "b", "c", "d"]}]}).encode(),
                             ["'x'", "BYTES", "FP32"]),
    "wrong_inner_dim": (json.dumps({"inputs": [{**GOOD_INPUT, "shape": [1, 5], "data": [1, 2, 3, 4, 5]}]}).encode(),
                        ["'x'", "shape"]),
    "wrong_rank": (json.dumps({"inputs": [{**GOOD_INPUT, "shape": [4]}]}).encode(), ["'x'", "shape"]),
    "rank_too_high": (json.dumps({"inputs": [{**GOOD_INPUT, "shape": [1, 1, 4]}]}).encode(), ["'x'", "shape"]),
    "batch_zero": (json.dumps({"inputs": [{**GOOD_INPUT, "shape": [0, 4], "data": []}]}).encode(),
                   ["'x'", "batch size 0"]),
    "batch_over_max": (json.dumps({"inputs": [{**GOOD_INPUT, "shape": [33, 4],
                                               "data": list(range(132))}]}).encode(), ["'x'", "batch size 33", "32"]),
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
def test_bad_request_body(server, case):
    body, words = BAD_BODIES[case]
    expect_error(server.post(INFER, body, headers={"Content-Type": "application/json"}), 400, *words)


def test_shared_memory_is_unsupported(server):
    shm = {"shared_memory_region": "r0", "shared_memory_byte_size": 16}
    body = {"inputs": [{"name": GOOD_INPUT["name"], "shape": GOOD_INPUT["shape"], "datatype": GOOD_INPUT["datatype"],
                        "parameters": shm}]}
    expect_error(server.post(INFER, body), 501, "shared-memory")
    body = {"inputs": [GOOD_INPUT], "outputs": [{"name": "y", "parameters": shm}]}
    expect_error(server.post(INFER, body), 501, "shared-memory")


def test_classification_extension_is_unsupported(server):
    body = {"inputs": [GOOD_INPUT], "outputs": [{"name": "y", "parameters": {"classification": 2}}]}
    expect_error(server.post(INFER, body), 501, "classification")


def test_content_encoding_is_unsupported(server):
    expect_error(server.post(INFER, json.dumps(cast_request([[1, 2, 3, 4]])),
                             headers={"Content-Encoding": "gzip"}), 501, "Content-Encoding", "gzip")


def test_missing_input(server):
    body = {"inputs": [{"name": "in_FP32", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]}]}
    expect_error(server.post("/v2/models/pair/infer", body), 400, "missing input 'in_INT32'")


def test_inputs_disagree_on_batch(server):
    body = {"inputs": [{"name": "in_FP32", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]},
                       {"name": "in_INT32", "shape": [2, 2], "datatype": "INT32", "data": [1, 2, 3, 4]}]}
    expect_error(server.post("/v2/models/pair/infer", body), 400, "batch size", "1", "2")


def test_nested_data_arrays(server):
    x = np.arange(8, dtype=np.float32).reshape(2, 4) * 1.25 - 3
    for data in (x.tolist(), x.reshape(2, 2, 2).tolist(), [x.tolist()], x.ravel().tolist()):
        body = {"inputs": [{"name": "x", "shape": [2, 4], "datatype": "FP32", "data": data}]}
        assert_cast_ok(server.post(INFER, body), x)


@pytest.mark.parametrize("value", [128, -129, 1000, -100000, 2**63, 2**64 + 5])
def test_int8_out_of_range(server, value):
    body = {"inputs": [{"name": "in_INT8", "shape": [1, 4], "datatype": "INT8", "data": [0, 1, value, 2]}]}
    r = server.post("/v2/models/int8/infer", body)
    if value >= 2**64:  # not an integer JSON parsers keep exactly; still no wrap-around
        assert r.status == 400, r
        return
    expect_error(r, 400, "'in_INT8'", "range", str(value))


@pytest.mark.parametrize("value", [1.5, "1", True, None])
def test_int8_not_an_integer(server, value):
    body = {"inputs": [{"name": "in_INT8", "shape": [1, 4], "datatype": "INT8", "data": [0, 1, value, 2]}]}
    expect_error(server.post("/v2/models/int8/infer", body), 400, "'in_INT8'", "integer")


def test_int8_limits_exact(server):
    data = [-128, 127, 0, -1]
    body = {"inputs": [{"name": "in_INT8", "shape": [1, 4], "datatype": "INT8", "data": data}]}
    r = server.post("/v2/models/int8/infer", body)
    assert r.status == 200, r
    assert r.json()["outputs"][0]["data"] == data


# --- the request body: binary tensors ---------------------------------------------------------


def binary_request(srv, header, payload, header_length=None, extra_headers=None, path=INFER):
    head = json.dumps(header).encode()
    hl = len(head) if header_length is None else header_length
    headers = {"Inference-Header-Content-Length": str(hl), "Content-Type": "application/octet-stream",
               **(extra_headers or {})}
    return srv.post(path, head + payload, headers=headers)


def bin_input(size, shape=(1, 4)):
    return {"name": "x", "shape": list(shape), "datatype": "FP32", "parameters": {"binary_data_size": size}}


def test_binary_request_works(server, helpers):
    x = np.array([[1.5, -2, 3, 1e30]], np.float32)
    r = binary_request(server, {"inputs": [bin_input(16)], "outputs": [{"name": "y", "parameters": {"binary_data": True}}]},
                       x.tobytes())
    assert r.status == 200, r
    _, outs = helpers.parse_binary_response(r)
    np.testing.assert_array_equal(outs["y"], x)


def test_binary_size_does_not_match_shape(server):
    x = np.ones(3, np.float32).tobytes()
    expect_error(binary_request(server, {"inputs": [bin_input(12)]}, x), 400, "'x'", "binary_data_size", "12", "16")


def test_binary_size_too_large_for_shape(server):
    x = np.ones(5, np.float32).tobytes()
    expect_error(binary_request(server, {"inputs": [bin_input(20)]}, x), 400, "'x'", "binary_data_size", "20", "16")


def test_header_length_larger_than_body(server):
    head_len = len(json.dumps({"inputs": [bin_input(16)]}))
    r = binary_request(server, {"inputs": [bin_input(16)]}, np.ones(4, np.float32).tobytes(),
                       header_length=head_len + 1000)
    expect_error(r, 400, "Inference-Header-Content-Length", str(head_len + 1000))


@pytest.mark.parametrize("value", ["abc", "-5", "12abc", "1e3", "0x10"])
def test_header_length_not_a_number(server, value):
    r = binary_request(server, {"inputs": [bin_input(16)]}, np.ones(4, np.float32).tobytes(), header_length=value)
    expect_error(r, 400, "Inference-Header-Content-Length")


def test_header_length_cuts_the_json(server):
    r = binary_request(server, {"inputs": [bin_input(16)]}, np.ones(4, np.float32).tobytes(), header_length=10)
    expect_error(r, 400, "malformed JSON")


def test_truncated_binary_data(server):
    r = binary_request(server, {"inputs": [bin_input(16)]}, np.ones(2, np.float32).tobytes())
    expect_error(r, 400, "'x'", "16 bytes", "8 remain")


def test_extra_bytes_after_binary_data(server):
    r = binary_request(server, {"inputs": [bin_input(16)]}, np.ones(4, np.float32).tobytes() + b"trailing!")
    expect_error(r, 400, "9 bytes after")


def test_binary_without_header_length(server):
    body = json.dumps({"inputs": [bin_input(16)]}).encode()
    expect_error(server.post(INFER, body), 400, "'x'", "binary_data_size", "Inference-Header-Content-Length")
    # With the binary data appended, the body as a whole is not JSON.
    expect_error(server.post(INFER, body + np.full(4, -1, np.int32).tobytes()), 400, "malformed JSON")


def test_binary_and_json_data_together(server):
    inp = {**bin_input(16), "data": [1, 2, 3, 4]}
    expect_error(binary_request(server, {"inputs": [inp]}, np.ones(4, np.float32).tobytes()), 400, "'x'", "both")


@pytest.mark.parametrize("size", [-16, 16.5, "16"])
def test_binary_size_not_an_integer(server, size):
    expect_error(binary_request(server, {"inputs": [bin_input(size)]}, np.ones(4, np.float32).tobytes()),
                 400, "'x'", "binary_data_size")


def test_binary_bytes_input_to_float_model(server):
    payload = b"".join(struct.pack("<I", 1) + b"a" for _ in range(4))
    inp = {"name": "x", "shape": [1, 4], "datatype": "BYTES", "parameters": {"binary_data_size": len(payload)}}
    expect_error(binary_request(server, {"inputs": [inp]}, payload), 400, "'x'", "BYTES", "FP32")


def test_binary_bytes_length_prefix_overruns(server):
    payload = struct.pack("<I", 1000) + b"abc"
    inp = {"name": "x", "shape": [1], "datatype": "BYTES", "parameters": {"binary_data_size": len(payload)}}
    expect_error(binary_request(server, {"inputs": [inp]}, payload), 400, "'x'", "1000")


def test_invalid_utf8_in_json(server):
    body = b'{"id": "caf\xc3 \xff\xfe", "inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", ' \
           b'"data": [1, 2, 3, 4]}]}'
    expect_error(server.post(INFER, body, headers={"Content-Type": "application/json"}), 400,
                 "malformed JSON", "UTF-8")


def test_invalid_utf8_in_input_name(server):
    body = b'{"inputs": [{"name": "\xff", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}'
    expect_error(server.post(INFER, body), 400, "UTF-8")


# --- the URL ------------------------------------------------------------------------------------


def test_unknown_model(server):
    expect_error(server.post("/v2/models/nope/infer", cast_request([[1, 2, 3, 4]])), 404, "unknown model 'nope'")
    expect_error(server.get("/v2/models/nope"), 404, "nope")
    expect_error(server.get("/v2/models/nope/ready"), 404, "nope")
    expect_error(server.get("/v2/models/nope/config"), 404, "nope")


def test_unknown_version(server):
    expect_error(server.post("/v2/models/cast/versions/7/infer", cast_request([[1, 2, 3, 4]])), 404,
                 "'cast'", "version 7")
    expect_error(server.get("/v2/models/cast/versions/7"), 404, "version 7")
    expect_error(server.get("/v2/models/cast/versions/7/ready"), 404, "version 7")


@pytest.mark.parametrize("version", ["abc", "-1", "1.0", "0x1", "1a", "99999999999999999999999"])
def test_non_numeric_version(server, version):
    expect_error(server.post(f"/v2/models/cast/versions/{version}/infer", cast_request([[1, 2, 3, 4]])), 400,
                 "version", "not a number")


def test_known_version(server):
    x = np.array([[1, 2, 3, 4]], np.float32)
    assert_cast_ok(server.post("/v2/models/cast/versions/1/infer", cast_request(x)), x)


@pytest.mark.parametrize("path", ["/v2/models/%FF/infer", "/v2/models/cast/versions/%FF/infer",
                                  "/v2/models/caf%C3/ready", "/v2/repository/models/%FF%FE/load"])
def test_non_utf8_names_in_url_give_json_errors(server, path):
    """Whatever the URL holds, the error body is valid UTF-8 JSON."""
    method = "GET" if path.endswith("ready") else "POST"
    r = server.request(method, path, json.dumps(cast_request([[1, 2, 3, 4]])).encode())
    assert r.status in (400, 404), r
    r.error  # noqa: B018  (asserts a JSON error body)


def test_bad_percent_encoding(server):
    expect_error(server.post("/v2/models/ca%Gst/infer", cast_request([[1, 2, 3, 4]])), 400, "percent")
    expect_error(server.post("/v2/models/cast%/infer", cast_request([[1, 2, 3, 4]])), 400, "percent")


def test_percent_encoded_name_works(server):
    x = np.array([[1, 2, 3, 4]], np.float32)
    assert_cast_ok(server.post("/v2/models/%63ast/infer", cast_request(x)), x)


@pytest.mark.parametrize("method,path", [("GET", "/nothing"), ("GET", "/v2/nothing"), ("GET", INFER),
                                         ("POST", "/v2/models/cast"), ("DELETE", "/v2/models/cast"),
                                         ("GET", "/v2/models/cast/infer/extra"), ("PUT", INFER)])
def test_unknown_endpoint(server, method, path):
    r = server.request(method, path, b"{}")
    assert r.status in (404, 405), r
    assert r.error


# --- the corrupt models -------------------------------------------------------------------------


def test_corrupt_model_reported(server):
    idx = server.post("/v2/repository/index", b"{}")
    assert idx.status == 200, idx
    entries = {(e["name"], e.get("version")): e for e in idx.json()}
    assert entries[("cast", "1")]["state"] == "READY"
    for name, words in (("broken", []), ("bad_op", ["Mystery"]), ("no_versions", ["model.onnx"])):
        rows = [e for (n, _), e in entries.items() if n == name]
        assert rows, entries
        for e in rows:
            assert e["state"] == "UNAVAILABLE", e
            assert e["reason"], e
            for w in words:
                assert w in e["reason"], e
    # ready:true lists only the ready ones.
    ready = server.post("/v2/repository/index", {"ready": True}).json()
    assert {e["name"] for e in ready} == {"cast", "int8", "pair", "big"}


@pytest.mark.parametrize("name", ["broken", "bad_op", "no_versions"])
def test_corrupt_model_unavailable(server, name):
    body = cast_request([[1, 2, 3, 4]])
    expect_error(server.post(f"/v2/models/{name}/infer", body), 503, name, "not ready")
    expect_error(server.get(f"/v2/models/{name}/ready"), 503, name)
    expect_error(server.get(f"/v2/models/{name}"), 503, name)
    assert server.get("/v2/health/ready").status == 200  # one bad model does not make the server unready


def test_broken_model_logged(server):
    log = server.logs()
    assert re.search(r"model 'broken'.*failed to load", log), log
    assert re.search(r"model 'bad_op'.*failed to load.*Mystery", log), log


# --- limits ---------------------------------------------------------------------------------------


def big_body():
    x = np.ones((1, 4), np.float32)
    body = json.dumps(cast_request(x)).encode()
    return body + b" " * (2 * 1024 * 1024 - len(body))  # valid JSON, 2 MB with padding


def test_oversized_body_http_client(limits_server):
    """A plain client (http.client, like `requests`) sends all 2 MB, then reads: it must see the
    413, not a reset connection."""
    for _ in range(5):
        try:
            r = limits_server.post(INFER, big_body(), headers={"Content-Type": "application/json"})
        except (BrokenPipeError, ConnectionResetError) as e:
            raise AssertionError(f"the server reset the connection instead of letting the client read its 413: {e!r}")
        expect_error(r, 413, "limit", str(MAX_BODY_MB * 1024 * 1024))


def test_oversized_body_raw_socket(limits_server):
    """Writes the 2 MB body while reading: the 413 comes back, the connection is closed."""
    body = big_body()
    s = limits_server.connect()
    head = f"POST {INFER} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"

    def send():
        try:
            s.sendall(head.encode() + body)
        except OSError:
            pass

    t = threading.Thread(target=send)
    t.start()
    reply = raw_reply(s)
    t.join(10)
    s.close()
    assert reply is not None, "connection closed without a response"
    status, headers, data = reply
    assert status == 413, reply
    assert "limit" in json.loads(data)["error"]


def test_oversized_body_chunked(limits_server):
    """No Content-Length: the limit still applies while the chunks arrive."""
    s = limits_server.connect()
    s.sendall(f"POST {INFER} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
    chunk = b" " * 65536

    def send():
        try:
            for _ in range(40):
                s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            s.sendall(b"0\r\n\r\n")
        except OSError:
            pass

    t = threading.Thread(target=send)
    t.start()
    reply = raw_reply(s)
    t.join(10)
    s.close()
    assert reply is not None and reply[0] == 413, reply
    assert "limit" in json.loads(reply[2])["error"]


def test_body_under_limit_works(limits_server):
    x = np.ones((1, 4), np.float32)
    body = json.dumps(cast_request(x)).encode()
    body += b" " * (MAX_BODY_MB * 1024 * 1024 - 4096 - len(body))
    assert_cast_ok(limits_server.post(INFER, body), x)


needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")


def curl(srv, *args, data=None, timeout=30):
    cmd = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", *args]
    r = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout)
    out = r.stdout
    body, _, code = out.rpartition(b"\n")
    return r.returncode, int(code or 0), body, r.stderr.decode()


@needs_curl
@pytest.mark.parametrize("expect", ["100-continue", ""])
def test_oversized_body_curl(limits_server, tmp_path, expect):
    f = tmp_path / "big.json"
    f.write_bytes(big_body())
    rc, code, body, err = curl(limits_server, "-H", f"Expect: {expect}", "-H", "Content-Type: application/json",
                               "--data-binary", f"@{f}", f"{limits_server.base}{INFER}")
    assert code == 413, (rc, code, body, err)
    assert "limit" in json.loads(body)["error"]


@needs_curl
def test_curl_errors(server):
    rc, code, body, err = curl(server, "-X", "POST", "-d", "{not json", f"{server.base}{INFER}")
    assert rc == 0 and code == 400, (rc, code, body, err)
    assert "malformed JSON" in json.loads(body)["error"]
    rc, code, body, err = curl(server, "-X", "POST", "-d", json.dumps(cast_request([[1, 2, 3, 4]])),
                               f"{server.base}/v2/models/nope/infer")
    assert code == 404 and "nope" in json.loads(body)["error"], (code, body)
    rc, code, body, err = curl(server, "-X", "POST", "-d", json.dumps(cast_request([[1, 2, 3, 4]])),
                               f"{server.base}/v2/models/cast/versions/x/infer")
    assert code == 400 and "not a number" in json.loads(body)["error"], (code, body)
    rc, code, body, err = curl(server, "-X", "POST", "-H", "Content-Type: application/json",
                               "-d", json.dumps(cast_request([[1.5, 2, 3, 4]])), f"{server.base}{INFER}")
    assert rc == 0 and code == 200, (code, body, err)
    assert json.loads(body)["outputs"][0]["data"] == [1.5, 2, 3, 4]


def test_header_too_large(server):
    r = server.get("/v2/health/ready", headers={"X-Filler": "a" * (1 << 20)})
    assert r.status == 431, r
    assert "header" in r.error


# --- HTTP garbage on a raw socket -----------------------------------------------------------------

GARBAGE = {
    "binary": b"\x00\x01\x02\xff\xfe garbage \r\n\r\n",
    "tls_hello": bytes.fromhex("16030100a5010000a10303") + bytes(range(64)) + b"\r\n\r\n",
    "bad_version": b"GET /v2 HTTP/7.3\r\nHost: x\r\n\r\n",
    "no_colon_header": b"GET /v2 HTTP/1.1\r\nthis header has no colon\r\n\r\n",
    "negative_length": b"POST /v2/models/cast/infer HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    "text_length": b"POST /v2/models/cast/infer HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n",
    "two_lengths": b"POST /v2/models/cast/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
                   b"Content-Length: 5\r\n\r\n{}{}",
    "bad_chunk": b"POST /v2/models/cast/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                 b"zz\r\nhello\r\n0\r\n\r\n",
    "random": np.random.default_rng(3).integers(0, 256, 65536, dtype=np.uint8).tobytes(),
}


@pytest.mark.parametrize("case", list(GARBAGE))
def test_http_garbage(server, case):
    with server.connect() as s:
        try:
            s.sendall(GARBAGE[case])
        except (BrokenPipeError, ConnectionResetError):
            pass
        reply = raw_reply(s)
        if reply is not None:  # else: closed without a word, also fine
            status, headers, body = reply
            assert status == 400, reply
            assert "error" in json.loads(body), reply
        assert closed_by_peer(s, 5), "the server kept a connection open after garbage"


def test_unknown_method(server):
    """An extension method is valid HTTP: a JSON error, and the connection stays usable."""
    with server.connect() as s:
        next_response = read_responses(s)
        s.sendall(b"BREW /v2/models/cast/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        status, headers, body = next_response()
        assert status in (400, 404, 405, 501), (status, body)
        assert "BREW" in json.loads(body)["error"]
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        assert next_response()[0] == 200


def test_pipelined_requests_in_order(server):
    """Three requests in one write come back in order on one connection."""
    xs = [np.full((1, 4), v, np.float32) for v in (1.0, 2.0, 3.0)]
    data = b""
    for i, x in enumerate(xs):
        body = json.dumps(cast_request(x, id=f"p{i}")).encode()
        data += f"POST {INFER} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    with server.connect() as s:
        s.sendall(data)
        next_response = read_responses(s)
        for i, x in enumerate(xs):
            status, _, body = next_response()
            assert status == 200
            doc = json.loads(body)
            assert doc["id"] == f"p{i}"
            assert doc["outputs"][0]["data"] == x.ravel().tolist()


# --- slow clients ------------------------------------------------------------------------------------


def test_slow_loris_half_header(limits_server):
    s = limits_server.connect()
    s.sendall(f"POST {INFER} HTTP/1.1\r\nHost: x\r\nContent-Le".encode())
    t0 = time.monotonic()
    # Meanwhile another client is served at once.
    x = np.array([[5, 6, 7, 8]], np.float32)
    assert_cast_ok(limits_server.post(INFER, cast_request(x), timeout=READ_TIMEOUT_S * 0.9), x)
    assert time.monotonic() - t0 < READ_TIMEOUT_S
    assert closed_by_peer(s, READ_TIMEOUT_S + 3), "a half-sent header kept its connection open"
    assert time.monotonic() - t0 >= READ_TIMEOUT_S * 0.8, "closed before the read timeout"
    s.close()


def test_slow_loris_half_body(limits_server):
    s = limits_server.connect()
    s.sendall(f"POST {INFER} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{{\"inputs\"".encode())
    x = np.array([[1, 2, 3, 4]], np.float32)
    assert_cast_ok(limits_server.post(INFER, cast_request(x)), x)
    assert closed_by_peer(s, READ_TIMEOUT_S + 3), "a half-sent body kept its connection open"
    s.close()


def test_slow_loris_trickle(limits_server):
    """One byte every 0.2 s keeps the connection busy but does not extend the deadline."""
    s = limits_server.connect()
    req = f"GET /v2/health/ready HTTP/1.1\r\nHost: x\r\nX-Pad: {'a' * 200}\r\n\r\n".encode()
    t0 = time.monotonic()
    closed = False
    for i in range(len(req) - 4):
        try:
            s.sendall(req[i:i + 1])
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
        if closed_by_peer(s, 0.2):
            closed = True
            break
        if time.monotonic() - t0 > READ_TIMEOUT_S + 4:
            break
    assert closed, "a trickling client kept its connection open past the read timeout"
    assert time.monotonic() - t0 < READ_TIMEOUT_S + 3
    s.close()


def test_many_slow_lorises(limits_server):
    socks = [limits_server.connect() for _ in range(50)]
    for s in socks:
        s.sendall(b"GET /v2/health/ready HTTP/1.1\r\nHo")
    x = np.array([[9, 8, 7, 6]], np.float32)
    assert_cast_ok(limits_server.post(INFER, cast_request(x)), x)
    deadline = time.monotonic() + READ_TIMEOUT_S + 4
    for s in socks:
        assert closed_by_peer(s, max(0.1, deadline - time.monotonic()))
        s.close()


# --- clients that vanish -------------------------------------------------------------------------------


def reset_close(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


@pytest.mark.parametrize("how", ["fin", "rst"])
def test_disconnect_mid_body(server, how):
    for _ in range(5):
        s = server.connect()
        s.sendall(f"POST {INFER} HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n".encode() + b"{" * 100)
        time.sleep(0.02)
        reset_close(s) if how == "rst" else s.close()
    wait_connections_at_most(server, 0)


def test_disconnect_mid_response(server):
    """A request whose JSON answer is tens of MB; the client reads a little and goes."""
    x = np.arange(16, dtype=np.float32).reshape(1, 16)
    body = json.dumps({"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": x.ravel().tolist()}],
                       "outputs": [{"name": "y", "parameters": {"binary_data": False}}]}).encode()
    req = f"POST /v2/models/big/infer HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    for how in ("fin", "rst", "fin", "rst"):
        s = server.connect()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(req)
        s.settimeout(30)
        got = s.recv(1000)
        assert got.startswith(b"HTTP/1.1 200"), got[:200]
        reset_close(s) if how == "rst" else s.close()
    # The same request read in full is right.
    r = server.post("/v2/models/big/infer", body, timeout=60)
    assert r.status == 200
    y = np.array(r.json()["outputs"][0]["data"], np.float32)
    np.testing.assert_array_equal(y, np.tile(x.ravel(), 65536))
    wait_connections_at_most(server, 0)


def test_disconnect_while_queued(server):
    """Requests whose clients leave before the answer is written are run and dropped quietly."""
    x = np.arange(16, dtype=np.float32).reshape(1, 16)
    body = json.dumps({"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": x.ravel().tolist()}],
                       "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
    req = f"POST /v2/models/big/infer HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    socks = []
    for _ in range(10):
        s = server.connect()
        s.sendall(req)
        socks.append(s)
    for s in socks:
        reset_close(s)
    wait_connections_at_most(server, 0, timeout=30)


# --- many connections ----------------------------------------------------------------------------------


def test_many_idle_connections(server):
    socks = [server.connect() for _ in range(200)]
    try:
        for i, s in enumerate(socks[:100]):  # half of them send part of a request
            s.sendall(b"POST /v2/models/cast/infer HTTP/1.1\r\n")
        x = np.array([[4, 3, 2, 1]], np.float32)
        for _ in range(3):
            assert_cast_ok(server.post(INFER, cast_request(x)), x)
        assert http_connections(server) >= 200
    finally:
        for s in socks:
            s.close()
    wait_connections_at_most(server, 0)


def test_many_concurrent_requests(server):
    n = 200
    rng = np.random.default_rng(11)
    xs = [rng.standard_normal((1 + i % 4, 4)).astype(np.float32) * 50 for i in range(n)]
    socks = [server.connect(timeout=60) for _ in range(n)]
    try:
        for i, s in enumerate(socks):
            body = json.dumps(cast_request(xs[i], id=f"c{i}")).encode()
            s.sendall(f"POST {INFER} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        for i, s in enumerate(socks):
            reply = raw_reply(s, timeout=60)
            assert reply is not None, f"request {i}: no response"
            status, headers, body = reply
            assert status == 200, (i, reply)
            doc = json.loads(body)
            assert doc["id"] == f"c{i}"
            y = {o["name"]: o for o in doc["outputs"]}["y"]
            np.testing.assert_array_equal(np.array(y["data"], np.float32).reshape(y["shape"]), xs[i])
    finally:
        for s in socks:
            s.close()
    wait_connections_at_most(server, 0)


def test_many_threads_with_http_client(server):
    errors = []

    def worker(k):
        try:
            for j in range(10):
                x = np.full((2, 4), k * 100 + j, np.float32)
                assert_cast_ok(server.post(INFER, cast_request(x), timeout=60), x)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]


def test_server_log_has_no_crash_traces(server, limits_server):
    for srv in (server, limits_server):
        log = srv.logs()
        for bad in ("terminate called", "Segmentation", "AddressSanitizer", "Aborted", "std::bad_alloc"):
            assert bad not in log, log
