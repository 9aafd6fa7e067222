# SPDX-License-Identifier: Apache-2.0
"""The response cache of `ignis serve`: a model that enables `response_cache` answers a repeated
request from the cache (same outputs, the new request's id and binary choice), over HTTP and
gRPC, counted in /stats and /metrics; different inputs miss; models without it never hit; a
reloaded model never answers from what its earlier load computed; a TTL expires entries; and
`--response-cache-mb 0` turns the cache off.

Expected outputs are the model's arithmetic (x + c), never taken from the server.
"""

import re
import time

import numpy as np
import pytest

tritonclient_grpc = pytest.importorskip("tritonclient.grpc")

CACHED = """
name: "cached"
max_batch_size: 8
response_cache { enable: true }
"""

PLAIN = """
name: "plain"
max_batch_size: 8
"""

RELOADED = """
name: "reloaded"
max_batch_size: 8
response_cache { enable: true }
"""


@pytest.fixture(scope="module")
def repo(make_repo, models):
    r = make_repo("cache")
    r.add("cached", models.add_const(1.0), config=CACHED)
    r.add("plain", models.add_const(2.0), config=PLAIN)
    r.add("reloaded", models.add_const(3.0), config=RELOADED)
    return r


@pytest.fixture(scope="module")
def server(start_server, repo):
    s = start_server(repo, "--grpc-port", "0")
    m = s.wait_for_log(r"grpc: listening on ([0-9.]+):(\d+)")
    s.grpc_url = f"{m.group(1)}:{m.group(2)}"
    return s


def infer(server, model, x, request_id="", binary=False):
    body = {"id": request_id,
            "inputs": [{"name": "x", "datatype": "FP32", "shape": list(x.shape), "data": x.flatten().tolist()}],
            "outputs": [{"name": "y", "parameters": {"binary_data": binary}}]}
    r = server.post(f"/v2/models/{model}/infer", body)
    assert r.status == 200, r
    return r


def outputs(helpers, reply):
    doc, out = helpers.parse_binary_response(reply)
    return doc, out["y"]


def stats(server, model):
    s = server.get(f"/v2/models/{model}/stats").json()["model_stats"][0]["inference_stats"]
    return s["cache_hit"]["count"], s["cache_miss"]["count"]


def metric(server, name, model):
    text = server.get("/metrics").body.decode()
    m = re.search(rf'^{name}\{{model="{model}"\}} (\S+)$', text, re.M)
    return float(m.group(1)) if m else 0.0


def test_repeated_request_is_answered_from_the_cache(server, helpers):
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    hits, misses = stats(server, "cached")
    doc1, y1 = outputs(helpers, infer(server, "cached", x, "first"))
    doc2, y2 = outputs(helpers, infer(server, "cached", x, "second", binary=True))
    np.testing.assert_array_equal(y1, x + 1)
    np.testing.assert_array_equal(y2, x + 1)
    assert doc1["id"] == "first" and doc2["id"] == "second"
    assert "data" in doc1["outputs"][0]                      # JSON, as the first request asked
    assert "binary_data_size" in doc2["outputs"][0]["parameters"]  # binary, as the second asked
    assert doc2["model_version"] == "1"
    assert stats(server, "cached") == (hits + 1, misses + 1)
    assert metric(server, "ignis_cache_hits_total", "cached") >= 1


def test_different_inputs_miss(server, helpers):
    x = np.full((1, 4), 7, np.float32)
    hits, misses = stats(server, "cached")
    _, y1 = outputs(helpers, infer(server, "cached", x))
    _, y2 = outputs(helpers, infer(server, "cached", x + 1))
    np.testing.assert_array_equal(y1, x + 1)
    np.testing.assert_array_equal(y2, x + 2)
    assert stats(server, "cached") == (hits, misses + 2)


def test_models_without_response_cache_never_hit(server, helpers):
    x = np.ones((1, 4), np.float32)
    for _ in range(3):
        _, y = outputs(helpers, infer(server, "plain", x))
        np.testing.assert_array_equal(y, x + 2)
    assert stats(server, "plain") == (0, 0)


def test_grpc_hits_what_http_stored(server):
    x = np.full((1, 4), 11, np.float32)
    hits, _ = stats(server, "cached")
    c = tritonclient_grpc.InferenceServerClient(url=server.grpc_url)
    for _ in range(2):
        inp = tritonclient_grpc.InferInput("x", [1, 4], "FP32")
        inp.set_data_from_numpy(x)
        np.testing.assert_array_equal(c.infer("cached", [inp]).as_numpy("y"), x + 1)
    c.close()
    assert stats(server, "cached")[0] == hits + 1


def test_a_reloaded_model_does_not_answer_from_its_earlier_load(server, repo, models, helpers):
    x = np.full((1, 4), 5, np.float32)
    for _ in range(2):
        np.testing.assert_array_equal(outputs(helpers, infer(server, "reloaded", x))[1], x + 3)
    repo.add("reloaded", models.add_const(30.0), config=RELOADED)  # same version number, new weights
    assert server.post("/v2/repository/models/reloaded/load").status == 200
    np.testing.assert_array_equal(outputs(helpers, infer(server, "reloaded", x))[1], x + 30)


def test_entries_expire_after_the_ttl(start_server, repo, helpers):
    s = start_server(repo, "--grpc-port", "-1", "--response-cache-ttl", "0.5")
    x = np.full((1, 4), 9, np.float32)
    infer(s, "cached", x)
    infer(s, "cached", x)
    assert stats(s, "cached") == (1, 1)
    time.sleep(0.7)
    np.testing.assert_array_equal(outputs(helpers, infer(s, "cached", x))[1], x + 1)
    assert stats(s, "cached") == (1, 2)


def test_zero_budget_turns_the_cache_off(start_server, repo):
    s = start_server(repo, "--grpc-port", "-1", "--response-cache-mb", "0")
    x = np.full((1, 4), 4, np.float32)
    for _ in range(2):
        infer(s, "cached", x)
    assert stats(s, "cached") == (0, 0)
