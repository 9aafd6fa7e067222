# SPDX-License-Identifier: Apache-2.0
"""Model repositories in Triton's format served by `ignis serve`: config.pbtxt files (batching,
instance groups, version policies, dynamic batching with priorities and queue policies, fields
ignis ignores), version selection, configs that contradict their model, polling for changes
on disk (`--repository-poll`) and the explicit load/unload endpoints.

Expected outputs are exact: each version of the `add_const` model adds its own constant.
"""

import re
import time
from pathlib import Path

import numpy as np
import pytest

DIGITS_CONFIG = """
name: "digits_cfg"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  {
    name: "input"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 1, 8, 8 ]
  }
]
output [
  {
    name: "logits"
    data_type: TYPE_FP32
    dims: [ 10 ]
  }
]
instance_group [
  {
    count: 2
    kind: KIND_CPU
  }
]
dynamic_batching {
  max_queue_delay_microseconds: 100
  priority_levels: 2
  default_priority_level: 2
  default_queue_policy {
    timeout_action: REJECT
    default_timeout_microseconds: 0
    allow_timeout_override: true
    max_queue_size: 0
  }
  priority_queue_policy {
    key: 1
    value {
      timeout_action: DELAY
      default_timeout_microseconds: 1000000
      max_queue_size: 16
    }
  }
}
optimization {
  cuda { graphs: true }
}
model_warmup [
  {
    name: "zeros"
    batch_size: 1
    inputs {
      key: "input"
      value {
        data_type: TYPE_FP32
        dims: [ 1, 8, 8 ]
        zero_data: true
      }
    }
  }
]
"""

BF16_CONFIG = """
max_batch_size: 8
parameters { key: "ignis.precision" value { string_value: "bf16" } }
parameters { key: "ignis.tuning" value { string_value: "off" } }
"""

ADD_CONFIG = """
name: "{name}"
backend: "onnxruntime"
max_batch_size: 4
input {{ name: "x" data_type: TYPE_FP32 dims: [ 4 ] }}
output {{ name: "y" data_type: TYPE_FP32 dims: [ 4 ] }}
{policy}
"""

BAD_CONFIGS = {
    # name: (model, config, words the reason must hold)
    "dims_wrong": ("digits", """
max_batch_size: 4
input [ { name: "input" data_type: TYPE_FP32 dims: [ 1, 9, 9 ] } ]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ 10 ] } ]
""", ["'input'", "dims"]),
    "rank_wrong": ("digits", """
max_batch_size: 4
input [ { name: "input" data_type: TYPE_FP32 dims: [ 64 ] } ]
""", ["'input'", "dims"]),
    "dtype_wrong": ("digits", """
max_batch_size: 4
input [ { name: "input" data_type: TYPE_INT32 dims: [ 1, 8, 8 ] } ]
""", ["'input'", "TYPE_INT32", "TYPE_FP32"]),
    "unknown_input": ("digits", """
max_batch_size: 4
input [ { name: "image" data_type: TYPE_FP32 dims: [ 1, 8, 8 ] } ]
""", ["'image'", "'input'"]),
    "syntax_error": ("digits", """
max_batch_size: 4
input [ { name: "input" data_type: TYPE_FP32 dims: [ 1, 8, 8 ]
""", ["config.pbtxt"]),
    "bad_value": ("digits", "max_batch_size: many\n", ["config.pbtxt", "max_batch_size"]),
    "name_mismatch": ("digits", 'name: "someone_else"\n', ["someone_else", "name_mismatch"]),
    "wrong_platform": ("digits", 'platform: "tensorflow_savedmodel"\n', ["tensorflow_savedmodel"]),
    "batch_on_fixed_model": ("fixed", "max_batch_size: 8\n", ["max_batch_size", "'x'"]),
    "policy_selects_none": ("add1", "version_policy: { specific: { versions: [ 5 ] } }\n", ["version policy", "[1]"]),
    "precision_unknown": ("digits", 'parameters { key: "ignis.precision" value { string_value: "int3" } }\n',
                          ["ignis.precision", "int3"]),
}


def fixed_model():
    """x:FP32[2, 4] (no symbolic dims) -> Identity."""
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "fixed",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def add_versions(repo, models, name, versions, policy="", config=True):
    for v in versions:
        repo.add(name, models.add_const(float(v)), version=v)
    if config:
        repo.config(name, ADD_CONFIG.format(name=name, policy=policy))


@pytest.fixture(scope="module")
def repo(make_repo, models):
    r = make_repo("configs")
    r.add("digits_cfg", models.digits, config=DIGITS_CONFIG)
    add_versions(r, models, "latest2", [1, 2, 3], "version_policy: { latest: { num_versions: 2 } }")
    add_versions(r, models, "all", [1, 2, 3], "version_policy: { all: {} }")
    add_versions(r, models, "specific", [1, 2, 3], "version_policy: { specific: { versions: [ 1, 3 ] } }")
    add_versions(r, models, "default_policy", [1, 7, 3], config=False)
    for name, (model, config, _) in BAD_CONFIGS.items():
        src = {"digits": models.digits, "fixed": fixed_model(), "add1": models.add_const(1.0)}[model]
        r.add(name, src, config=config)
    r.add("renamed_file", models.add_const(5.0), filename="net.onnx",
          config='default_model_filename: "net.onnx"\nmax_batch_size: 2\n')
    r.add("no_batching", models.cast(), config="max_batch_size: 0\n")
    r.add("explicit", models.add_const(1.0), version=1)
    r.add("digits_bf16", models.digits, config=BF16_CONFIG)
    return r


@pytest.fixture(scope="module")
def server(start_server, repo):
    return start_server(repo)


def add_request(x, **extra):
    x = np.asarray(x, np.float32)
    return {"inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32", "data": x.ravel().tolist()}],
            **extra}


def infer_add(srv, model, version=None, rows=1):
    """Runs add_const and returns (status, the constant it added or the error, model_version)."""
    x = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version is not None else "") + "/infer"
    r = srv.post(path, add_request(x))
    if r.status != 200:
        return r.status, r.error, None
    doc = r.json()
    y = np.array(doc["outputs"][0]["data"], np.float32).reshape(rows, 4)
    delta = y - x
    assert np.all(delta == delta.flat[0]), delta
    return 200, float(delta.flat[0]), doc["model_version"]


def index(srv):
    r = srv.post("/v2/repository/index", b"{}")
    assert r.status == 200, r
    return r.json()


def states(srv, name):
    return {e.get("version"): (e["state"], e["reason"]) for e in index(srv) if e["name"] == name}


# --- config.pbtxt ------------------------------------------------------------------------------


def test_triton_config_served(server, models, close):
    r = server.get("/v2/models/digits_cfg/config")
    assert r.status == 200, r
    cfg = r.json()
    assert cfg["max_batch_size"] == 8
    assert cfg["instance_group"][0]["count"] == 2
    assert [(t["name"], t["data_type"], t["dims"]) for t in cfg["input"]] == [("input", "TYPE_FP32", [1, 8, 8])]
    assert [(t["name"], t["data_type"], t["dims"]) for t in cfg["output"]] == [("logits", "TYPE_FP32", [10])]
    db = cfg["dynamic_batching"]
    assert db["priority_levels"] == 2 and db["default_priority_level"] == 2
    assert db["max_queue_delay_microseconds"] == 100
    assert db["default_queue_policy"]["allow_timeout_override"] is True
    assert db["priority_queue_policy"]["1"]["max_queue_size"] == 16
    assert db["priority_queue_policy"]["1"]["timeout_action"] == "DELAY"
    md = server.get("/v2/models/digits_cfg").json()
    assert md["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [-1, 1, 8, 8]}]


def test_ignored_fields_warned(server):
    m = server.wait_for_log(r"model 'digits_cfg'.*ignored.*", timeout=5)
    line = m.group(0)
    assert "optimization.cuda" in line and "model_warmup" in line, line
    # Fields ignis understands are not reported.
    for known in ("dynamic_batching", "instance_group", "max_batch_size", "format"):
        assert known not in line, line


def digits_infer(srv, model, x, priority=None, version=None):
    body = {"inputs": [{"name": "input", "shape": list(x.shape), "datatype": "FP32", "data": x.ravel().tolist()}]}
    if priority is not None:
        body["parameters"] = {"priority": priority}
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
    return srv.post(path, body)


def test_triton_config_infers(server, models, close):
    rng = np.random.default_rng(3)
    for rows in (1, 8):
        x = (rng.random((rows, 1, 8, 8)) * 16).astype(np.float32)
        for priority in (None, 1, 2, 0):
            r = digits_infer(server, "digits_cfg", x, priority)
            assert r.status == 200, (priority, r)
            got = np.array(r.json()["outputs"][0]["data"], np.float32).reshape(rows, 10)
            close(got, models.reference.run(models.digits, {"input": x})["logits"], "logits", rtol=1e-4, atol=1e-4)


def test_session_settings_from_parameters(server, models, close):
    # ignis.precision bf16: MatMul/Gemm in bfloat16 where the CPU has AVX512_BF16 (float32
    # elsewhere), so the logits are the float model's within bfloat16 rounding.
    x = (np.random.default_rng(5).random((4, 1, 8, 8)) * 16).astype(np.float32)
    r = digits_infer(server, "digits_bf16", x)
    assert r.status == 200, r
    got = np.array(r.json()["outputs"][0]["data"], np.float32).reshape(4, 10)
    want = models.reference.run(models.digits, {"input": x})["logits"]
    close(got, want, "logits", rtol=3e-2, atol=3e-2 * float(np.abs(want).max()))
    assert (got.argmax(1) == want.argmax(1)).all()
    # Where bfloat16 runs, the answer is not the float32 one the same model gives elsewhere.
    if "avx512_bf16" in Path("/proc/cpuinfo").read_text():
        f32 = digits_infer(server, "digits_cfg", x)
        assert f32.status == 200, f32
        assert not np.array_equal(got, np.array(f32.json()["outputs"][0]["data"], np.float32).reshape(4, 10))


def test_triton_config_limits(server):
    x = np.zeros((9, 1, 8, 8), np.float32)
    r = digits_infer(server, "digits_cfg", x)
    assert r.status == 400 and "batch size 9" in r.error and "8" in r.error, r
    r = digits_infer(server, "digits_cfg", np.zeros((1, 1, 8, 8), np.float32), priority=3)
    assert r.status == 400 and "priority 3" in r.error, r
    r = digits_infer(server, "digits_cfg", np.zeros((1, 1, 8, 8), np.float32), priority=-1)
    assert r.status == 400 and "priority" in r.error, r


def test_two_instances_serve_concurrently(server, models, close):
    import threading

    rng = np.random.default_rng(4)
    xs = [(rng.random((4, 1, 8, 8)) * 16).astype(np.float32) for _ in range(16)]
    results = [None] * len(xs)

    def work(i):
        results[i] = digits_infer(server, "digits_cfg", xs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for x, r in zip(xs, results):
        assert r is not None and r.status == 200, r
        got = np.array(r.json()["outputs"][0]["data"], np.float32).reshape(4, 10)
        close(got, models.reference.run(models.digits, {"input": x})["logits"], "logits", rtol=1e-4, atol=1e-4)


def test_renamed_model_file(server):
    assert infer_add(server, "renamed_file", rows=2)[:2] == (200, 5.0)


def test_no_batching_config(server):
    cfg = server.get("/v2/models/no_batching/config").json()
    assert cfg["max_batch_size"] == 0
    assert cfg["input"][0]["dims"] == [-1, 4]
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    r = server.post("/v2/models/no_batching/infer", add_request(x))
    assert r.status == 200, r
    assert r.json()["outputs"][0]["data"] == x.ravel().tolist()
    # Without batching the first dim is the model's own: 40 rows are fine.
    x = np.ones((40, 4), np.float32)
    assert server.post("/v2/models/no_batching/infer", add_request(x)).status == 200


# --- versions --------------------------------------------------------------------------------


def test_version_policy_latest_two(server):
    assert infer_add(server, "latest2") == (200, 3.0, "3")
    assert infer_add(server, "latest2", 3) == (200, 3.0, "3")
    assert infer_add(server, "latest2", 2) == (200, 2.0, "2")
    status, err, _ = infer_add(server, "latest2", 1)
    assert status == 404 and "version 1" in err
    assert server.get("/v2/models/latest2").json()["versions"] == ["3", "2"]
    assert server.get("/v2/models/latest2/versions/2/ready").status == 200
    assert server.get("/v2/models/latest2/versions/1/ready").status == 404
    assert set(states(server, "latest2")) == {"2", "3"}


def test_version_policy_all(server):
    for v in (1, 2, 3):
        assert infer_add(server, "all", v) == (200, float(v), str(v))
    assert infer_add(server, "all") == (200, 3.0, "3")
    assert server.get("/v2/models/all").json()["versions"] == ["3", "2", "1"]
    assert server.get("/v2/models/all/versions/2/config").json()["version_policy"] == {"all": {}}


def test_version_policy_specific(server):
    assert infer_add(server, "specific", 1) == (200, 1.0, "1")
    assert infer_add(server, "specific", 3) == (200, 3.0, "3")
    assert infer_add(server, "specific")[1:] == (3.0, "3")
    status, err, _ = infer_add(server, "specific", 2)
    assert status == 404 and "version 2" in err


def test_default_policy_is_latest_one(server):
    # Versions compare as numbers: 7 is newer than 3.
    assert infer_add(server, "default_policy") == (200, 7.0, "7")
    assert infer_add(server, "default_policy", 3)[0] == 404
    assert server.get("/v2/models/default_policy").json()["versions"] == ["7"]


def test_version_statistics(server):
    before = server.get("/v2/models/all/versions/2/stats").json()["model_stats"]
    assert [s["version"] for s in before] == ["2"]
    for _ in range(3):
        infer_add(server, "all", 2, rows=2)
    after = server.get("/v2/models/all/versions/2/stats").json()["model_stats"][0]
    assert after["inference_count"] - before[0]["inference_count"] == 6
    assert after["execution_count"] - before[0]["execution_count"] == 3
    every = server.get("/v2/models/all/stats").json()["model_stats"]
    assert sorted(s["version"] for s in every) == ["1", "2", "3"]


# --- configs that contradict their models -------------------------------------------------------


@pytest.mark.parametrize("name", list(BAD_CONFIGS))
def test_bad_config_unavailable(server, name):
    words = BAD_CONFIGS[name][2]
    st = states(server, name)
    assert st, index(server)
    for state, reason in st.values():
        assert state == "UNAVAILABLE", st
        for w in words:
            assert w in reason, (w, reason)
    r = server.post(f"/v2/models/{name}/infer", add_request(np.zeros((1, 4))))
    assert r.status == 503, r
    assert name in r.error and "not ready" in r.error
    assert server.get(f"/v2/models/{name}/ready").status == 503
    assert re.search(rf"model '{name}'.*failed to load", server.logs())


def test_other_models_serve_despite_bad_configs(server):
    assert server.get("/v2/health/ready").status == 200
    assert infer_add(server, "all", 1)[:2] == (200, 1.0)


# --- explicit load / unload ---------------------------------------------------------------------


def test_explicit_unload_load(server, repo, models):
    assert infer_add(server, "explicit")[:2] == (200, 1.0)
    r = server.post("/v2/repository/models/explicit/unload", b"{}")
    assert r.status == 200, r
    assert server.get("/v2/models/explicit/ready").status == 503
    status, err, _ = infer_add(server, "explicit")
    assert status == 503 and "explicit" in err
    assert all(s == "UNAVAILABLE" for s, _ in states(server, "explicit").values())
    # Unloading twice is harmless.
    assert server.post("/v2/repository/models/explicit/unload").status == 200

    # What is on disk when it is loaded again is what serves: a new version 2.
    repo.add("explicit", models.add_const(2.0), version=2)
    r = server.post("/v2/repository/models/explicit/load", b"{}")
    assert r.status == 200, r
    assert server.get("/v2/models/explicit/ready").status == 200
    assert infer_add(server, "explicit") == (200, 2.0, "2")
    assert states(server, "explicit") == {"2": ("READY", "")}


def test_explicit_load_new_folder(server, repo, models):
    assert server.get("/v2/models/late/ready").status == 404
    repo.add("late", models.add_const(4.0), version=1)
    r = server.post("/v2/repository/models/late/load")
    assert r.status == 200, r
    assert infer_add(server, "late")[:2] == (200, 4.0)


def test_explicit_load_reloads_changed_model(server, repo, models):
    repo.add("late2", models.add_const(1.0), version=1)
    assert server.post("/v2/repository/models/late2/load").status == 200
    assert infer_add(server, "late2")[:2] == (200, 1.0)
    repo.add("late2", models.add_const(6.0), version=1)
    assert server.post("/v2/repository/models/late2/load").status == 200
    assert infer_add(server, "late2")[:2] == (200, 6.0)


def test_explicit_load_errors(server, repo):
    r = server.post("/v2/repository/models/not_there/load")
    assert r.status == 404 and "not_there" in r.error, r
    r = server.post("/v2/repository/models/..%2F..%2Fetc/load")
    assert r.status in (400, 404), r
    assert r.error
    r = server.post("/v2/repository/models/dims_wrong/load")
    assert r.status == 400 and "'input'" in r.error, r
    assert server.get("/v2/models/dims_wrong/ready").status == 503


def test_repository_request_bodies(server):
    import json
    ready = server.post("/v2/repository/index", body=b'{"ready": true}').json()
    everything = server.post("/v2/repository/index", body=b"{}").json()
    assert ready and all(e["state"] == "READY" for e in ready), ready
    assert any(e["state"] == "UNAVAILABLE" for e in everything), everything
    # "true" elsewhere in the body is not the ready filter.
    assert len(server.post("/v2/repository/index", body=b'{"ready": false, "x": "true"}').json()) == len(everything)
    r = server.post("/v2/repository/index", body=b'{"ready": 1}')
    assert r.status == 400 and "'ready'" in r.error, r
    r = server.post("/v2/repository/index", body=b"{not json")
    assert r.status == 400 and "JSON" in r.error, r
    # A config override (what tritonclient's load_model(config=...) sends) is refused, not dropped.
    body = json.dumps({"parameters": {"config": '{"max_batch_size": 4}'}}).encode()
    r = server.post("/v2/repository/models/explicit/load", body=body)
    assert r.status == 501 and "config" in r.error, r
    assert server.post("/v2/repository/models/explicit/load", body=b'{"parameters": {}}').status == 200


def test_unknown_repository_endpoint(server):
    r = server.post("/v2/repository/models/explicit/reload")
    assert r.status == 404 and r.error
    r = server.get("/v2/repository/models/explicit/load")
    assert r.status == 404 and r.error


def test_server_alive(server):
    assert server.alive
    for bad in ("terminate called", "Segmentation", "Aborted"):
        assert bad not in server.logs()


# --- polling ------------------------------------------------------------------------------------

POLL_TIMEOUT_S = 15


@pytest.fixture(scope="module")
def poll_repo(make_repo, models):
    r = make_repo("polled")
    add_versions(r, models, "polled", [1], "version_policy: { all: {} }")
    add_versions(r, models, "swapped", [1])
    return r


@pytest.fixture(scope="module")
def poll_server(start_server, poll_repo):
    return start_server(poll_repo, "--repository-poll", "1")


def wait_for(what, predicate, timeout=POLL_TIMEOUT_S):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last is True:
            return
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s (last: {last!r})")


def test_poll_new_version(poll_server, poll_repo, models):
    assert infer_add(poll_server, "polled") == (200, 1.0, "1")
    poll_repo.add("polled", models.add_const(2.0), version=2)
    wait_for("version 2 servable", lambda: infer_add(poll_server, "polled", 2) == (200, 2.0, "2") or
             infer_add(poll_server, "polled", 2))
    assert infer_add(poll_server, "polled") == (200, 2.0, "2")
    assert infer_add(poll_server, "polled", 1) == (200, 1.0, "1")


def test_poll_removed_version(poll_server, poll_repo):
    poll_repo.remove_version("polled", 2)
    wait_for("version 2 gone", lambda: infer_add(poll_server, "polled", 2)[0] == 404 or
             infer_add(poll_server, "polled", 2))
    assert infer_add(poll_server, "polled") == (200, 1.0, "1")
    assert set(states(poll_server, "polled")) == {"1"}


def test_poll_corrupt_replacement_keeps_old(poll_server, poll_repo, models):
    mark = poll_server.log_mark()
    poll_repo.add("swapped", models.corrupt, version=1)  # replaces model.onnx in one rename
    poll_server.wait_for_log(r"model 'swapped' version 1 failed to load", timeout=POLL_TIMEOUT_S, since=mark)
    # The version that was serving keeps serving.
    for _ in range(3):
        assert infer_add(poll_server, "swapped") == (200, 1.0, "1")
        time.sleep(0.5)
    assert poll_server.alive
    # A good file again: served at the next scan.
    poll_repo.add("swapped", models.add_const(9.0), version=1)
    wait_for("fixed model served", lambda: infer_add(poll_server, "swapped")[:2] == (200, 9.0) or
             infer_add(poll_server, "swapped"))


def test_poll_new_and_removed_model(poll_server, poll_repo, models):
    assert poll_server.get("/v2/models/arrival/ready").status == 404
    poll_repo.add("arrival", models.add_const(3.0), version=5)
    wait_for("new model servable", lambda: infer_add(poll_server, "arrival") == (200, 3.0, "5") or
             infer_add(poll_server, "arrival"))
    poll_repo.remove_model("arrival")
    wait_for("removed model gone", lambda: infer_add(poll_server, "arrival")[0] == 404 or
             infer_add(poll_server, "arrival"))
    assert not any(e["name"] == "arrival" for e in index(poll_server))


def test_poll_config_change(poll_server, poll_repo):
    cfg = poll_server.get("/v2/models/polled/config").json()
    assert cfg["max_batch_size"] == 4
    poll_repo.config("polled", ADD_CONFIG.format(name="polled", policy="version_policy: { all: {} }")
                     .replace("max_batch_size: 4", "max_batch_size: 2"))
    wait_for("new config applied",
             lambda: poll_server.get("/v2/models/polled/config").json()["max_batch_size"] == 2)
    status, err, _ = infer_add(poll_server, "polled", rows=3)
    assert status == 400 and "batch size 3" in err
    assert infer_add(poll_server, "polled", rows=2)[:2] == (200, 1.0)


def test_poll_server_alive(poll_server):
    assert poll_server.alive
    assert poll_server.get("/v2/health/ready").status == 200
    assert "terminate called" not in poll_server.logs()
