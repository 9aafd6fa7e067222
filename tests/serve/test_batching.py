# SPDX-License-Identifier: Apache-2.0
"""Scheduling in `ignis serve`: dynamic batching (requests merged into one engine run and the
outputs split back), requests of different shapes kept apart, deadlines that fire while the
model is busy, priority levels overtaking, backpressure (429 / RESOURCE_EXHAUSTED), and a
model whose outputs cannot be split falling back to single runs.

Expected outputs come from onnxruntime run on each request's own inputs. Timing tests compare
the order of events (a timeout answered before the run that blocks it ends), scaled by the
measured duration of that run, never absolute speeds.
"""

import re
import threading
import time

import numpy as np
import pytest

tritonclient_http = pytest.importorskip("tritonclient.http")
tritonclient_grpc = pytest.importorskip("tritonclient.grpc")
from tritonclient.utils import InferenceServerException  # noqa: E402

SLOW_SIZE = 1024
BUSY_ROWS = 512

BATCHED_CONFIG = """
name: "batched"
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: 2000 preserve_ordering: true }
instance_group { count: 2 }
"""

# The queue delay learned from measured run times and arrivals, under a P99 target.
AUTO_CONFIG = """
name: "auto"
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: auto }
parameters { key: "ignis.p99_target_microseconds" value { string_value: "50000" } }
"""

# A long queue delay with a preferred size of 4: four requests must run as one batch long
# before the delay ends.
PREFERRED_CONFIG = """
name: "preferred"
max_batch_size: 8
dynamic_batching { preferred_batch_size: [4] max_queue_delay_microseconds: 5000000 }
"""

SEQ_CONFIG = """
name: "seq"
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: 2000 }
"""

BUSY_CONFIG = f"""
name: "busy"
max_batch_size: {BUSY_ROWS}
dynamic_batching {{
  priority_levels: 2
  default_priority_level: 2
  default_queue_policy {{ allow_timeout_override: true }}
}}
instance_group {{ count: 1 }}
"""

FULL_CONFIG = f"""
name: "full"
max_batch_size: {BUSY_ROWS}
dynamic_batching {{ default_queue_policy {{ max_queue_size: 1 }} }}
instance_group {{ count: 1 }}
"""

INFLIGHT_CONFIG = f"""
name: "inflight"
max_batch_size: {BUSY_ROWS}
instance_group {{ count: 1 }}
parameters {{ key: "ignis.max_inflight" value {{ string_value: "2" }} }}
"""

# Lengths 1..32 in buckets of 8, 16 and 32; four requests form a batch at once.
BUCKET_CONFIG = """
name: "bucketed"
max_batch_size: 8
dynamic_batching { preferred_batch_size: [4] max_queue_delay_microseconds: 5000000 }
parameters { key: "ignis.shape_buckets" value { string_value: "8, 16, 32" } }
"""

BUCKET_FAST_CONFIG = """
name: "bucketed_fast"
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: 2000 }
parameters { key: "ignis.shape_buckets" value { string_value: "8, 16, 32" } }
"""

# BYTES in, BYTES and INT64 out; four rows form one batch at once.
TEXT_CONFIG = """
name: "text"
max_batch_size: 8
dynamic_batching { preferred_batch_size: [4] max_queue_delay_microseconds: 5000000 }
"""

UNSPLIT_CONFIG = """
name: "unsplit"
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: 5000000 preferred_batch_size: [2] }
"""


def finish(graph):
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def seq_model():
    """x:FP32[batch, n] -> y = x * 2 + cumulative sum over n; n varies between requests."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("CumSum", ["x", "axis"], ["c"]),
             helper.make_node("Mul", ["x", "two"], ["d"]),
             helper.make_node("Add", ["c", "d"], ["y"])]
    inits = [numpy_helper.from_array(np.array(1, np.int64), "axis"),
             numpy_helper.from_array(np.array(2, np.float32), "two")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "n"])
    return finish(helper.make_graph(nodes, "seq", [x], [y], initializer=inits))


def attention_model(vocab=50, width=8, seed=3):
    """A one-head self-attention encoder with a padding mask, the shape of a transformer's:
    input_ids, attention_mask: INT64[batch, seq] -> last_hidden_state: FP32[batch, seq, width]
    and pooled: FP32[batch, width] (the mean over unmasked positions). Masked positions get
    -1e9 before the softmax, so padding does not change the real positions' results."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    f32 = lambda *shape: (rng.standard_normal(shape) / np.sqrt(width)).astype(np.float32)  # noqa: E731
    inits = [numpy_helper.from_array((f32(vocab, width) * np.sqrt(width)).astype(np.float32), "emb"),
             numpy_helper.from_array(f32(width, width), "wq"), numpy_helper.from_array(f32(width, width), "wk"),
             numpy_helper.from_array(f32(width, width), "wv"),
             numpy_helper.from_array(np.array(1 / np.sqrt(width), np.float32), "scale"),
             numpy_helper.from_array(np.array(1, np.float32), "one"),
             numpy_helper.from_array(np.array(-1e9, np.float32), "neg"),
             numpy_helper.from_array(np.array([1], np.int64), "axis1"),
             numpy_helper.from_array(np.array([2], np.int64), "axis2")]
    n = helper.make_node
    nodes = [n("Gather", ["emb", "input_ids"], ["e"]),
             n("MatMul", ["e", "wq"], ["q"]), n("MatMul", ["e", "wk"], ["k"]), n("MatMul", ["e", "wv"], ["v"]),
             n("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             n("MatMul", ["q", "kt"], ["qk"]), n("Mul", ["qk", "scale"], ["scores"]),
             n("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
             n("Sub", ["one", "m"], ["inv"]), n("Mul", ["inv", "neg"], ["bias2"]),
             n("Unsqueeze", ["bias2", "axis1"], ["bias"]),
             n("Add", ["scores", "bias"], ["masked"]), n("Softmax", ["masked"], ["p"], axis=-1),
             n("MatMul", ["p", "v"], ["last_hidden_state"]),
             n("Unsqueeze", ["m", "axis2"], ["m3"]), n("Mul", ["last_hidden_state", "m3"], ["hm"]),
             n("ReduceSum", ["hm", "axis1"], ["s"], keepdims=0),
             n("ReduceSum", ["m", "axis1"], ["count"], keepdims=1),
             n("Div", ["s", "count"], ["pooled"])]
    ins = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])
           for name in ("input_ids", "attention_mask")]
    outs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", width]),
            helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", width])]
    return finish(helper.make_graph(nodes, "attention", ins, outs, initializer=inits))


TEXT_LABELS = ["cat", "dog", "a label long enough to live outside std::string's inline buffer"]


def text_model():
    """text:BYTES[batch, 2] -> echo:BYTES[batch, 2] (Identity) and ids:INT64[batch, 2]
    (LabelEncoder: TEXT_LABELS[i] -> i, anything else -> -1)."""
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Identity", ["text"], ["echo"]),
             helper.make_node("LabelEncoder", ["text"], ["ids"], domain="ai.onnx.ml", keys_strings=TEXT_LABELS,
                              values_int64s=list(range(len(TEXT_LABELS))), default_int64=-1)]
    text = helper.make_tensor_value_info("text", TensorProto.STRING, ["batch", 2])
    outs = [helper.make_tensor_value_info("echo", TensorProto.STRING, ["batch", 2]),
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", 2])]
    model = helper.make_model(helper.make_graph(nodes, "text", [text], outs),
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 2)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def column_sum_model():
    """x:FP32[batch, 4] -> y:FP32[4], the sum over the batch: an output without the batch
    dimension, so a batch of requests cannot be split back."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "axes")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch"])
    return finish(helper.make_graph(nodes, "column_sum", [x], [y], initializer=inits))


@pytest.fixture(scope="module")
def slow(models):
    return models.slow(layers=48, size=SLOW_SIZE)


@pytest.fixture(scope="module")
def repo(make_repo, models, slow):
    r = make_repo("batching")
    r.add("batched", models.digits, config=BATCHED_CONFIG)
    r.add("auto", models.digits, config=AUTO_CONFIG)
    r.add("preferred", models.add_const(1.5), config=PREFERRED_CONFIG)
    r.add("seq", seq_model(), config=SEQ_CONFIG)
    r.add("busy", slow, config=BUSY_CONFIG)
    r.add("full", slow, config=FULL_CONFIG)
    r.add("inflight", slow, config=INFLIGHT_CONFIG)
    r.add("unsplit", column_sum_model(), config=UNSPLIT_CONFIG)
    r.add("text", text_model(), config=TEXT_CONFIG)
    r.add("bucketed", attention_model(), config=BUCKET_CONFIG)
    r.add("bucketed_fast", attention_model(), config=BUCKET_FAST_CONFIG)
    return r


@pytest.fixture(scope="module")
def server(start_server, repo, helpers):
    s = start_server(repo, "--grpc-port", "0")
    s.helpers = helpers
    m = s.wait_for_log(r"grpc: listening on ([0-9.]+):(\d+)")
    s.grpc_url = f"{m.group(1)}:{m.group(2)}"
    return s


def request(server, model, x, parameters=None):
    """A binary-tensor request for input 'x': (path, body, headers)."""
    header = {"inputs": [{"name": "x", "datatype": "FP32", "shape": list(x.shape),
                          "parameters": {"binary_data_size": x.nbytes}}],
              "parameters": {"binary_data_output": True, **(parameters or {})}}
    body, head_len = server.helpers.binary_infer_body(header, [x])
    return (f"/v2/models/{model}/infer", body,
            {"Inference-Header-Content-Length": str(head_len), "Content-Type": "application/octet-stream"})


def send(server, prepared, timeout=120):
    """Sends a prepared request; returns (status, {name: array} or the Reply, seconds)."""
    path, body, headers = prepared
    start = time.monotonic()
    r = server.helpers.http_request(server.port, "POST", path, body, headers, timeout=timeout)
    elapsed = time.monotonic() - start
    if r.status != 200:
        return r.status, r, elapsed
    return r.status, server.helpers.parse_binary_response(r)[1], elapsed


def infer(server, model, x, parameters=None):
    return send(server, request(server, model, x, parameters))


def metric(server, name, model, extra=""):
    text = server.get("/metrics").body.decode()
    m = re.search(rf'^{name}\{{model="{model}",version="1"{extra}\}} (\S+)$', text, re.M)
    assert m, f"{name} for {model} not in /metrics"
    return float(m.group(1))


def wait_inflight(server, model, n, busy, timeout=30):
    """Waits until `model` has n requests in flight while the `busy` call still runs."""
    deadline = time.monotonic() + timeout
    while metric(server, "ignis_inflight_requests", model) < n:
        assert busy.is_alive(), f"the busy run ended before {model} had {n} requests in flight (too fast here?)"
        assert time.monotonic() < deadline, f"{model} never had {n} requests in flight"
        time.sleep(0.01)


class Call(threading.Thread):
    """A request on its own thread; `result` is infer()'s tuple, `finished` a monotonic time."""

    def __init__(self, server, model, x, parameters=None):
        super().__init__(daemon=True)
        self.server = server
        self.prepared = request(server, model, x, parameters)  # here, not on the thread: sent at once
        self.result = self.finished = None
        self.start()

    def run(self):
        self.result = send(self.server, self.prepared)
        self.finished = time.monotonic()

    def wait(self):
        self.join(120)
        assert not self.is_alive(), "request never answered"
        return self.result


def random_rows(rng, rows, size=SLOW_SIZE):
    return rng.standard_normal((rows, size)).astype(np.float32)


@pytest.fixture(scope="module")
def busy_seconds(server):
    """How long one full-size run of the slow model takes here (the faster of two runs)."""
    x = random_rows(np.random.default_rng(1), BUSY_ROWS)
    times = []
    for _ in range(2):
        status, _, elapsed = infer(server, "busy", x)
        assert status == 200
        times.append(elapsed)
    return min(times)


# ---------------------------------------------------------------------------------------------
# Batching.


@pytest.mark.parametrize("model", ["batched", "auto"])
def test_concurrent_clients_get_their_own_results(server, models, close, model):
    """16 clients over HTTP and gRPC, 1 to 3 rows each: every answer equals onnxruntime on that
    request's own images, and with a fixed delay the server ran fewer engine runs than requests."""
    runs_before = metric(server, "ignis_batch_size_count", model)
    clients, per_client = 16, 12
    failures, answered = [], [0]
    lock = threading.Lock()

    def client(i):
        rng = np.random.default_rng(100 + i)
        grpc = i % 2 == 1
        mod = tritonclient_grpc if grpc else tritonclient_http
        c = mod.InferenceServerClient(url=server.grpc_url if grpc else server.url)
        try:
            for _ in range(per_client):
                x = rng.random((int(rng.integers(1, 4)), 1, 8, 8), dtype=np.float32)
                inp = mod.InferInput("input", list(x.shape), "FP32")
                inp.set_data_from_numpy(x) if grpc else inp.set_data_from_numpy(x, binary_data=True)
                got = c.infer(model, [inp]).as_numpy("logits")
                expected = models.reference.run(models.digits, {"input": x})["logits"]
                close(got, expected, f"client {i}")
                with lock:
                    answered[0] += 1
        except Exception as e:  # noqa: BLE001 - reported below with the client's number
            failures.append(f"client {i}: {e}")
        finally:
            c.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not failures, failures[:3]
    assert answered[0] == clients * per_client
    runs = metric(server, "ignis_batch_size_count", model) - runs_before
    if model == "batched":  # a fixed 2 ms delay; `auto` may rightly run this tiny model's requests alone
        assert 0 < runs < clients * per_client, f"{runs} engine runs for {clients * per_client} requests"


def test_preferred_size_runs_before_the_delay(server, models):
    """Four requests reach the preferred size 4: they run as one batch at once, not after the
    5 s queue delay; each gets its own rows back."""
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((1, 4)).astype(np.float32) for _ in range(4)]
    runs_before = metric(server, "ignis_batch_size_count", "preferred")
    start = time.monotonic()
    calls = [Call(server, "preferred", x) for x in xs]
    for x, call in zip(xs, calls):
        status, out, _ = call.wait()
        assert status == 200, out
        np.testing.assert_array_equal(out["y"], x + np.float32(1.5))
    assert time.monotonic() - start < 4.0, "the batch waited for the queue delay"
    assert metric(server, "ignis_batch_size_count", "preferred") - runs_before == 1
    assert metric(server, "ignis_batch_size_sum", "preferred") >= 4


def test_bytes_inputs_batch_and_each_request_gets_its_own_strings(server):
    """Three requests with BYTES inputs (1, 2 and 1 rows) reach the preferred size of 4 rows
    and run as one batch; each gets back its own strings and labels, over HTTP and gRPC."""
    rng = np.random.default_rng(8)
    words = TEXT_LABELS + ["unknown", ""]
    batches = [rng.choice(words, size=(1 + i % 2, 2)).astype(object) for i in range(3)]
    runs_before = metric(server, "ignis_batch_size_count", "text")
    results, failures = [None] * 3, []

    def call(i):
        grpc = i % 2 == 1
        mod = tritonclient_grpc if grpc else tritonclient_http
        c = mod.InferenceServerClient(url=server.grpc_url if grpc else server.url)
        try:
            inp = mod.InferInput("text", list(batches[i].shape), "BYTES")
            inp.set_data_from_numpy(batches[i])
            r = c.infer("text", [inp])
            results[i] = (r.as_numpy("echo"), r.as_numpy("ids"))
        except Exception as e:  # noqa: BLE001 - reported below with the request's number
            failures.append(f"request {i}: {e}")
        finally:
            c.close()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures, failures
    for x, (echo, ids) in zip(batches, results):
        assert [[v.decode() if isinstance(v, bytes) else v for v in row] for row in echo] == x.tolist()
        want = [[TEXT_LABELS.index(w) if w in TEXT_LABELS else -1 for w in row] for row in x]
        np.testing.assert_array_equal(ids, np.array(want, np.int64))
    assert metric(server, "ignis_batch_size_count", "text") - runs_before == 1
    assert metric(server, "ignis_batch_size_sum", "text") == 3  # requests in that run


def test_different_shapes_are_not_batched_together(server, models, close):
    """Requests whose variable dimension differs run in separate batches and each gets its
    own extent back."""
    rng = np.random.default_rng(6)
    xs = [rng.standard_normal((1 + i % 2, 3 + 2 * (i % 3))).astype(np.float32) for i in range(12)]
    calls = [Call(server, "seq", x) for x in xs]
    model = seq_model()
    for x, call in zip(xs, calls):
        status, out, _ = call.wait()
        assert status == 200, out
        close(out["y"], models.reference.run(model, {"x": x})["y"], f"shape {x.shape}")


def test_outputs_without_the_batch_dimension_fall_back_to_single_runs(server, models, close):
    """Two requests batched into one run give a column sum over both; the server notices the
    output has no batch dimension and answers each from its own run."""
    model = column_sum_model()
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((1, 4)).astype(np.float32) for _ in range(2)]
    calls = [Call(server, "unsplit", x) for x in xs]
    for x, call in zip(xs, calls):
        status, out, _ = call.wait()
        assert status == 200, out
        close(out["y"], models.reference.run(model, {"x": x})["y"], "column sum")
    server.wait_for_log(r"model 'unsplit': an output's first dimension is not the batch .* no longer batched")


def text_request(rng, length, vocab=50):
    ids = rng.integers(1, vocab, size=(1, length), dtype=np.int64)
    return ids, np.ones_like(ids)


def infer_text(client, ids, mask, model="bucketed"):
    inputs = []
    for name, a in (("input_ids", ids), ("attention_mask", mask)):
        inp = tritonclient_http.InferInput(name, list(a.shape), "INT64")
        inp.set_data_from_numpy(a, binary_data=True)
        inputs.append(inp)
    r = client.infer(model, inputs)
    return r.as_numpy("last_hidden_state"), r.as_numpy("pooled")


def bucket_fill(server, bucket):
    text = server.get("/metrics").body.decode()
    found = {}
    for stat in ("sum", "count"):
        m = re.search(rf'^ignis_bucket_fill_ratio_{stat}\{{model="bucketed",version="1",bucket="{bucket}"\}} (\S+)$',
                      text, re.M)
        found[stat] = float(m.group(1)) if m else 0.0
    return found


def test_shape_buckets_batch_different_lengths_with_padding(server, models, close):
    """Lengths 9, 12, 13 and 14 share the bucket 16: they run as one batch padded to the edge 16
    (mask 0 on the padding), and each answer equals onnxruntime on that request alone, cut back
    to its own length. The bucket's fill ratio is the real over the padded elements."""
    model = attention_model()
    rng = np.random.default_rng(12)
    lengths = [9, 12, 13, 14]
    feeds = [text_request(rng, n) for n in lengths]
    before = bucket_fill(server, "16")
    results = [None] * len(lengths)

    def one(i):
        c = tritonclient_http.InferenceServerClient(url=server.url)
        results[i] = infer_text(c, *feeds[i])
        c.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(lengths))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for (ids, mask), got in zip(feeds, results):
        assert got is not None, "a request was not answered"
        want = models.reference.run(model, {"input_ids": ids, "attention_mask": mask})
        close(got[0], want["last_hidden_state"], f"hidden, length {ids.shape[1]}")
        close(got[1], want["pooled"], f"pooled, length {ids.shape[1]}")
    after = bucket_fill(server, "16")
    assert after["count"] - before["count"] == 1, "the four lengths did not run as one padded batch"
    assert after["sum"] - before["sum"] == pytest.approx(sum(lengths) / (4 * 16), abs=1e-9)


def test_shape_buckets_under_concurrent_mixed_lengths(server, models, close):
    """12 clients, lengths drawn from 1..40 (40 is above the last edge: its own bucket), a mask
    with padding of the client's own on some requests: every answer equals onnxruntime."""
    model = attention_model()
    failures = []

    def client(i):
        rng = np.random.default_rng(200 + i)
        c = tritonclient_http.InferenceServerClient(url=server.url)
        try:
            for _ in range(8):
                ids, mask = text_request(rng, int(rng.integers(1, 41)))
                if i % 3 == 0 and ids.shape[1] > 2:
                    mask[0, -1] = 0  # the client's own padding, masked out
                got = infer_text(c, ids, mask, "bucketed_fast")
                want = models.reference.run(model, {"input_ids": ids, "attention_mask": mask})
                close(got[0], want["last_hidden_state"], f"client {i} hidden {ids.shape}")
                close(got[1], want["pooled"], f"client {i} pooled {ids.shape}")
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(f"client {i}: {e}")
        finally:
            c.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not failures, failures[:3]


# ---------------------------------------------------------------------------------------------
# Deadlines and priorities.


def test_timeout_fires_while_the_model_is_busy(server, busy_seconds):
    """A queued request whose timeout passes while the only instance runs a long batch gets 504
    at its deadline, before that batch ends, not a late answer."""
    rng = np.random.default_rng(8)
    busy = Call(server, "busy", random_rows(rng, BUSY_ROWS))
    wait_inflight(server, "busy", 1, busy)
    timeout_s = min(0.02, busy_seconds / 10)  # far inside the busy run, however fast this machine
    status, reply, elapsed = infer(server, "busy", random_rows(rng, 1),
                                   {"timeout": int(timeout_s * 1e6)})
    answered = time.monotonic()
    assert status == 504, reply
    assert "timed out" in reply.error
    assert elapsed >= timeout_s * 0.9, f"answered after {elapsed:.3f} s, before its {timeout_s:.3f} s timeout"
    assert busy.wait()[0] == 200
    assert answered < busy.finished, "the timeout was answered only after the busy run ended"


def test_higher_priority_overtakes_queued_lower_priority(server):
    """With the instance busy, a level-2 request queued first runs after a level-1 request
    queued later (full-size requests, so the two cannot share a batch)."""
    rng = np.random.default_rng(9)
    busy = Call(server, "busy", random_rows(rng, BUSY_ROWS))
    wait_inflight(server, "busy", 1, busy)
    low = Call(server, "busy", random_rows(rng, BUSY_ROWS), {"priority": 2})
    wait_inflight(server, "busy", 2, busy)
    high = Call(server, "busy", random_rows(rng, BUSY_ROWS), {"priority": 1})
    for call in (busy, low, high):
        assert call.wait()[0] == 200
    assert high.finished < low.finished, "the level-1 request did not overtake the level-2 one"


def busy_and_queued(server, model, rng):
    """One full-size request running on the model's only instance and one queued behind it."""
    busy = Call(server, model, random_rows(rng, BUSY_ROWS))
    wait_inflight(server, model, 1, busy)
    queued = Call(server, model, random_rows(rng, BUSY_ROWS))
    wait_inflight(server, model, 2, busy)
    return busy, queued


def busy_stats(server):
    return server.get("/v2/models/busy/stats").json()["model_stats"][0]


def assert_dropped_unrun(server, before, busy, queued):
    """The busy and queued requests succeed, a third one is answered as failed, and the model
    ran only the first two."""
    assert busy.wait()[0] == 200 and queued.wait()[0] == 200
    deadline = time.monotonic() + 30
    while busy_stats(server)["inference_stats"]["fail"]["count"] == before["inference_stats"]["fail"]["count"]:
        assert time.monotonic() < deadline, "the abandoned request was never answered"
        time.sleep(0.01)
    assert busy_stats(server)["execution_count"] - before["execution_count"] == 2


def test_grpc_request_whose_client_gave_up_is_not_run(server, busy_seconds):
    """A gRPC client whose own deadline passes while its request waits behind two long runs:
    the server answers it without running it (two executions, the long ones)."""
    rng = np.random.default_rng(13)
    before = busy_stats(server)
    busy, queued = busy_and_queued(server, "busy", rng)
    c = tritonclient_grpc.InferenceServerClient(url=server.grpc_url)
    inp = tritonclient_grpc.InferInput("x", [1, SLOW_SIZE], "FP32")
    inp.set_data_from_numpy(random_rows(rng, 1))
    answered = threading.Event()
    outcome = []
    # Queued third, it runs no sooner than the two long runs end (about 2x busy_seconds away);
    # its client gives up well before that.
    c.async_infer("busy", [inp], lambda result, error: (outcome.append(error), answered.set()),
                  client_timeout=0.8 * busy_seconds)
    wait_inflight(server, "busy", 3, busy)
    assert answered.wait(60)
    assert outcome[0] is not None and "DEADLINE" in str(outcome[0].status()), outcome
    c.close()
    assert_dropped_unrun(server, before, busy, queued)


def test_http_request_whose_client_closed_is_not_run(server, busy_seconds):
    """An HTTP client that closes its connection while its request waits behind two long runs:
    the server drops the request without running it (two executions, the long ones), and keeps
    serving."""
    import socket

    rng = np.random.default_rng(14)
    before = busy_stats(server)
    busy, queued = busy_and_queued(server, "busy", rng)
    path, body, headers = request(server, "busy", random_rows(rng, 1))
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    raw = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n{head}\r\n").encode() + body
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(raw)
        wait_inflight(server, "busy", 3, busy)
    # The connection is closed; the third request is still queued behind the two long runs.
    assert_dropped_unrun(server, before, busy, queued)
    status, _, _ = infer(server, "busy", random_rows(rng, 1))
    assert status == 200


# ---------------------------------------------------------------------------------------------
# Backpressure.


def test_queue_full_is_429_with_retry_after(server):
    rng = np.random.default_rng(10)
    before = metric(server, "ignis_inference_failure_total", "full", ',reason="rejected"')
    busy, queued = busy_and_queued(server, "full", rng)
    status, reply, elapsed = infer(server, "full", random_rows(rng, 1))
    assert status == 429, reply
    assert reply.headers.get("retry-after") == "1"
    assert "max_queue_size" in reply.error
    c = tritonclient_grpc.InferenceServerClient(url=server.grpc_url)
    inp = tritonclient_grpc.InferInput("x", [1, SLOW_SIZE], "FP32")
    inp.set_data_from_numpy(random_rows(rng, 1))
    with pytest.raises(InferenceServerException) as e:
        c.infer("full", [inp])
    assert "RESOURCE_EXHAUSTED" in str(e.value.status())
    c.close()
    assert busy.wait()[0] == 200 and queued.wait()[0] == 200
    assert metric(server, "ignis_inference_failure_total", "full", ',reason="rejected"') - before == 2
    assert metric(server, "ignis_rejected_total", "full", ',cause="queue_full"') == 2


def test_max_inflight_rejects_beyond_the_limit(server):
    rng = np.random.default_rng(11)
    busy, queued = busy_and_queued(server, "inflight", rng)
    status, reply, _ = infer(server, "inflight", random_rows(rng, 1))
    assert status == 429, reply
    assert "ignis.max_inflight" in reply.error
    assert metric(server, "ignis_rejected_total", "inflight", ',cause="max_inflight"') == 1
    assert busy.wait()[0] == 200 and queued.wait()[0] == 200
    status, _, _ = infer(server, "inflight", random_rows(rng, 1))
    assert status == 200

