#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Soak of `ignis serve`: many clients for a long time, every answer checked, memory watched.

    python3 bench/serve/soak.py [--ignis build/ignis] [--duration-s 600] [--clients 32]
                                [--malformed 0.05] [--seed 0] [--threads N]
                                [--rss-limit-pct 5] [--json-out soak.json]

The server gets a temporary repository with two batching models: the digits CNN
(assets/digits_cnn.onnx) and a small encoder built here (token embedding, a dense ReLU layer,
masked mean pooling over a variable sequence length), both with max_batch_size 8 and
dynamic_batching with two priority levels; the encoder batches lengths by shape buckets
(padded, the mask padded with 0). Each client thread then sends requests until the
time is up, each one choosing its model, its protocol (HTTP with JSON or binary tensors, or
gRPC), a priority, a batch of 1 or 2 rows and, for the encoder, a sequence length of 16 to
128; one request in ten carries a generous `timeout`. A fraction (--malformed) is malformed
on purpose (wrong input name, datatype or shape, a batch over max_batch_size, a body that is
not JSON, an unknown model) and must be refused with the right error class and a message.

Every answer is judged against onnxruntime run by the client on the same inputs:
  ok               outputs within rtol 1e-4 / atol 1e-5 (scaled by the output's largest
                   magnitude when above 1) of onnxruntime, right shape and dtype
  wrong            an answer that is not right: outputs off, or an error status for a valid
                   request (504 counts only when the request set no timeout)
  lost             no answer: connection or client error, client-side timeout, a 5xx
  rejected         429 / RESOURCE_EXHAUSTED (queue full): allowed, counted apart
  timed_out        504 / DEADLINE_EXCEEDED on a request that set a timeout: allowed
  malformed_ok     a malformed request refused with 400 or 404 (INVALID_ARGUMENT, NOT_FOUND)
  malformed_wrong  a malformed request answered any other way
The server's RSS (VmRSS) is sampled every second; its growth compares the median of the last
minute with the median of the minute that follows the first 20% of the run (windows shrink to
a fifth of the run on short runs). The server must be alive at the end and exit 0 on SIGTERM.
Exit status 1 when anything is wrong, lost, crashed or over the RSS limit.
"""

import argparse
import collections
import datetime
import json
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import numpy as np
import tritonclient.grpc as tgrpc
import tritonclient.http as thttp
from onnx import TensorProto, helper, numpy_helper
from tritonclient.utils import InferenceServerException

ROOT = Path(__file__).resolve().parents[2]
# The server harness, model repository and onnxruntime reference of the serving tests.
sys.path.insert(0, str(ROOT / "tests" / "serve"))
import conftest as serve_testing  # noqa: E402

from run import cpu_model  # noqa: E402  (bench/serve/run.py, this folder)

MAX_BATCH = 8
VOCAB, WIDTH = 1000, 64
SEQ_MIN, SEQ_MAX = 16, 128
ENCODER_SEED = 1234

DYNAMIC_BATCHING = """dynamic_batching {
  max_queue_delay_microseconds: 2000
  priority_levels: 2
  default_priority_level: 2
}
"""

DIGITS_CONFIG = f"""name: "digits"
platform: "onnxruntime_onnx"
max_batch_size: {MAX_BATCH}
input [ {{ name: "input" data_type: TYPE_FP32 dims: [ 1, 8, 8 ] }} ]
output [ {{ name: "logits" data_type: TYPE_FP32 dims: [ 10 ] }} ]
{DYNAMIC_BATCHING}"""

ENCODER_CONFIG = f"""name: "encoder"
platform: "onnxruntime_onnx"
max_batch_size: {MAX_BATCH}
input [
  {{ name: "input_ids" data_type: TYPE_INT64 dims: [ -1 ] }},
  {{ name: "attention_mask" data_type: TYPE_INT64 dims: [ -1 ] }}
]
output [ {{ name: "pooled" data_type: TYPE_FP32 dims: [ {WIDTH} ] }} ]
{DYNAMIC_BATCHING}
parameters {{ key: "ignis.shape_buckets" value {{ string_value: "32,64,96,128" }} }}
"""

OUTPUT_NAME = {"digits": "logits", "encoder": "pooled"}
CATEGORIES = ["ok", "wrong", "lost", "rejected", "timed_out", "malformed_ok", "malformed_wrong"]
MALFORMED_KINDS = ["wrong_input_name", "wrong_dtype", "wrong_shape", "batch_too_big", "not_json",
                   "unknown_model"]
TIMEOUT_FRACTION = 0.1
REQUEST_TIMEOUT_US = 10_000_000  # far above any latency seen here: a 504 means a stuck queue
CLIENT_TIMEOUT_S = 60            # the client gives up; the request counts as lost
RTOL, ATOL = 1e-4, 1e-5
FAILURES_KEPT = 10               # per category, with their inputs, for reproduction


# ---------------------------------------------------------------------------------------------
# Models and repository.


def encoder_model(seed=ENCODER_SEED):
    """input_ids, attention_mask: INT64[batch, seq] -> pooled: FP32[batch, WIDTH], the mean over
    the unmasked positions of Relu(Embedding(ids) @ W + b)."""
    rng = np.random.default_rng(seed)
    weights = {
        "embedding": (rng.standard_normal((VOCAB, WIDTH)) * 0.5).astype(np.float32),
        "w": (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32),
        "b": (rng.standard_normal(WIDTH) * 0.1).astype(np.float32),
        "seq_axis": np.array([1], np.int64),
        "last_axis": np.array([-1], np.int64),
    }
    node = helper.make_node
    nodes = [
        node("Gather", ["embedding", "input_ids"], ["tokens"], axis=0),
        node("MatMul", ["tokens", "w"], ["projected"]),
        node("Add", ["projected", "b"], ["biased"]),
        node("Relu", ["biased"], ["hidden"]),
        node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        node("Unsqueeze", ["mask", "last_axis"], ["mask3"]),
        node("Mul", ["hidden", "mask3"], ["masked"]),
        node("ReduceSum", ["masked", "seq_axis"], ["summed"], keepdims=0),
        node("ReduceSum", ["mask", "seq_axis"], ["count"], keepdims=1),
        node("Div", ["summed", "count"], ["pooled"]),
    ]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
              for n in ("input_ids", "attention_mask")]
    output = helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", WIDTH])
    inits = [numpy_helper.from_array(a, n) for n, a in weights.items()]
    # Opset 17 (serve_testing.OPSET), checked by onnx.checker like the test models.
    return serve_testing._finish(helper.make_graph(nodes, "encoder", inputs, [output], initializer=inits))


def build_repository(root):
    """Returns ({model name: model for the reference}, repository)."""
    repo = serve_testing.ModelRepo(root)
    models = {"digits": serve_testing.DIGITS_ONNX, "encoder": encoder_model()}
    repo.add("digits", models["digits"], config=DIGITS_CONFIG)
    repo.add("encoder", models["encoder"], config=ENCODER_CONFIG)
    return models, repo


# ---------------------------------------------------------------------------------------------
# Requests: what to send, as plain data, so that a failure can be written down with its inputs
# and sent again by hand.


class Request:
    def __init__(self, model, protocol, inputs, priority, timeout_us):
        self.model = model          # the model name sent (unknown_model changes it)
        self.target = model         # the model whose outputs are expected
        self.protocol = protocol    # "http_json", "http_binary", "grpc"; "http_raw" for not_json
        self.inputs = inputs        # [(name, array, KServe datatype)]
        self.priority = priority
        self.timeout_us = timeout_us
        self.malformed = None       # or one of MALFORMED_KINDS
        self.raw_body = None        # not_json: the bytes posted instead of a request

    def describe(self):
        d = {"model": self.model, "protocol": self.protocol, "priority": self.priority,
             "timeout_us": self.timeout_us, "malformed": self.malformed,
             "inputs": [{"name": n, "datatype": dt, "shape": list(a.shape), "data": a.ravel().tolist()}
                        for n, a, dt in self.inputs]}
        if self.raw_body is not None:
            d["raw_body"] = self.raw_body.decode("latin-1")
        return d


def digits_inputs(rng, batch):
    return [("input", rng.standard_normal((batch, 1, 8, 8)).astype(np.float32), "FP32")]


def encoder_inputs(rng, batch):
    """Random ids and an attention mask of 1s then 0s with at least one 1 per row."""
    seq = int(rng.integers(SEQ_MIN, SEQ_MAX, endpoint=True))
    ids = rng.integers(0, VOCAB, size=(batch, seq), dtype=np.int64)
    ones = rng.integers(1, seq, size=batch, endpoint=True)
    mask = (np.arange(seq)[None, :] < ones[:, None]).astype(np.int64)
    return [("input_ids", ids, "INT64"), ("attention_mask", mask, "INT64")]


def model_inputs(model, rng, batch):
    return digits_inputs(rng, batch) if model == "digits" else encoder_inputs(rng, batch)


def valid_request(rng):
    model = str(rng.choice(["digits", "encoder"]))
    protocol = str(rng.choice(["http_json", "http_binary", "grpc", "grpc"]))  # half HTTP, half gRPC
    batch = int(rng.integers(1, 2, endpoint=True))
    priority = int(rng.integers(1, 2, endpoint=True))
    timeout = REQUEST_TIMEOUT_US if rng.random() < TIMEOUT_FRACTION else None
    return Request(model, protocol, model_inputs(model, rng, batch), priority, timeout)


def wrong_shape(model, rng, batch):
    """An input of the right dtype whose shape or rank the config refuses."""
    if model == "digits":
        shape = [(batch, 1, 8, 7), (batch, 64), (batch, 1, 1, 8, 8)][rng.integers(3)]
        return [("input", rng.standard_normal(shape).astype(np.float32), "FP32")]
    ids, mask = encoder_inputs(rng, batch)
    if rng.random() < 0.5:  # rank 1: no batch dim
        return [(n, a[0], dt) for n, a, dt in (ids, mask)]
    return [(n, a[..., None], dt) for n, a, dt in (ids, mask)]


def malform(req, kind, rng):
    """Turns a valid request into a malformed one of `kind` (the inputs of the same model)."""
    batch = req.inputs[0][1].shape[0]
    name, array, dt = req.inputs[0]
    if kind == "wrong_input_name":
        req.inputs[0] = ("not_an_input", array, dt)
    elif kind == "wrong_dtype":  # the digits' FP32 sent as FP64, the encoder's INT64 as INT32
        wrong = {"FP32": (np.float64, "FP64"), "INT64": (np.int32, "INT32")}[dt]
        req.inputs[0] = (name, array.astype(wrong[0]), wrong[1])
    elif kind == "wrong_shape":
        req.inputs = wrong_shape(req.model, rng, batch)
    elif kind == "batch_too_big":
        req.inputs = model_inputs(req.model, rng, int(rng.integers(MAX_BATCH + 1, 2 * MAX_BATCH, endpoint=True)))
    elif kind == "not_json":
        req.protocol = "http_raw"
        req.raw_body = [b'{"inputs": [', b"this is not json", b'{"inputs": [{"name": "input",]}',
                        b"\xff\xfe\x00garbage"][rng.integers(4)]
    elif kind == "unknown_model":
        req.model = "no_such_model"
    req.malformed = kind
    return req


def make_request(rng, malformed_fraction):
    req = valid_request(rng)
    if rng.random() < malformed_fraction:
        req = malform(req, str(rng.choice(MALFORMED_KINDS)), rng)
    return req


# ---------------------------------------------------------------------------------------------
# Sending: every protocol gives back an Answer.


class Answer:
    """outputs ({name: ndarray}) on success; otherwise the status (HTTP status or gRPC code name)
    and message of an error, or `transport` for a failure without a status from the server."""

    def __init__(self, outputs=None, status=None, message="", transport=None):
        self.outputs = outputs
        self.status = status
        self.message = message
        self.transport = transport


# Error statuses by the class they belong to, for both protocols.
STATUS_CLASS = {
    "400": "invalid", "INVALID_ARGUMENT": "invalid",
    "404": "not_found", "NOT_FOUND": "not_found",
    "429": "rejected", "RESOURCE_EXHAUSTED": "rejected",
    "504": "timed_out", "DEADLINE_EXCEEDED": "timed_out",
}


# How tritonclient.http words an error body that is not {"error": "..."}.
CLIENT_DECODE_FAILURE = "an exception occurred in the client while decoding the response"


def infer_inputs(client_module, req, **data_options):
    """tritonclient InferInputs (of tritonclient.http or .grpc) holding the request's arrays."""
    inputs = []
    for name, array, dt in req.inputs:
        i = client_module.InferInput(name, list(array.shape), dt)
        i.set_data_from_numpy(array, **data_options)
        inputs.append(i)
    return inputs


class Connections:
    """One thread's clients of the server; a client is rebuilt after a transport failure so
    that one broken connection does not turn every later request into a loss."""

    def __init__(self, server, grpc_url):
        self.server = server
        self.grpc_url = grpc_url
        self._http = self._grpc = None

    def http(self):
        if self._http is None:
            self._http = thttp.InferenceServerClient(self.server.url, connection_timeout=CLIENT_TIMEOUT_S,
                                                  network_timeout=CLIENT_TIMEOUT_S)
        return self._http

    def grpc(self):
        if self._grpc is None:
            self._grpc = tgrpc.InferenceServerClient(self.grpc_url)
        return self._grpc

    def reset(self):
        for c in (self._http, self._grpc):
            try:
                if c is not None:
                    c.close()
            except Exception:  # a broken client may fail to close; it is dropped anyway
                pass
        self._http = self._grpc = None

    def send(self, req):
        if req.protocol == "http_raw":
            return self._send_raw(req)
        try:
            if req.protocol == "grpc":
                return Answer(outputs=self._send_grpc(req))
            return Answer(outputs=self._send_http(req))
        except InferenceServerException as e:
            status = (e.status() or "").removeprefix("StatusCode.")
            if not status or status in ("UNAVAILABLE", "CANCELLED", "UNKNOWN"):
                self.reset()  # the client could not reach the server, or the server went away
                return Answer(transport=f"{status or 'no status'}: {e.message()}")
            return Answer(status=status, message=e.message() or "")
        except Exception as e:  # socket errors, gevent timeouts, protocol errors in the client
            self.reset()
            return Answer(transport=f"{type(e).__name__}: {e}")

    def _send_http(self, req):
        binary = req.protocol == "http_binary"
        inputs = infer_inputs(thttp, req, binary_data=binary)
        outputs = [thttp.InferRequestedOutput(OUTPUT_NAME[req.target], binary_data=binary)]
        result = self.http().infer(req.model, inputs, outputs=outputs, priority=req.priority,
                                   timeout=req.timeout_us)
        return {o["name"]: result.as_numpy(o["name"]) for o in result.get_response()["outputs"]}

    def _send_grpc(self, req):
        result = self.grpc().infer(req.model, infer_inputs(tgrpc, req), priority=req.priority,
                                   timeout=req.timeout_us, client_timeout=CLIENT_TIMEOUT_S)
        return {o.name: result.as_numpy(o.name) for o in result.get_response().outputs}

    def _send_raw(self, req):
        """A body that is not a KServe request, on a fresh connection (tritonclient cannot)."""
        try:
            reply = self.server.post(f"/v2/models/{req.model}/infer", req.raw_body,
                                     headers={"Content-Type": "application/json"}, timeout=CLIENT_TIMEOUT_S)
        except OSError as e:
            return Answer(transport=f"{type(e).__name__}: {e}")
        if reply.status == 200:
            return Answer(outputs={})
        try:
            message = reply.error  # checks the body is {"error": "..."}
        except AssertionError as e:
            return Answer(status=str(reply.status), message="", transport=str(e))
        return Answer(status=str(reply.status), message=message)


# ---------------------------------------------------------------------------------------------
# Judging.


class Oracle:
    """onnxruntime's outputs for a request; one per client thread (sessions with 1 thread each)."""

    def __init__(self, models):
        self.models = models
        self.reference = serve_testing.Reference()

    def expected(self, req, name):
        feeds = {n: a for n, a, _ in req.inputs}
        return self.reference.run(self.models[req.target], feeds, [name])[name]


def scaled_atol(expected):
    """ATOL in units of the output's magnitude: an element that cancels to near zero from terms
    as large as the largest output (digits logits reach ~70) carries their rounding error, a few
    float32 ulps of ~70 (1e-5 and more), however exact the server's arithmetic."""
    return ATOL * max(1.0, float(np.max(np.abs(expected), initial=0.0)))


def judge_valid(req, answer, oracle, elapsed_s):
    """The category of a well-formed request's answer, and a reason when it is a failure."""
    if answer.transport is not None:
        return "lost", answer.transport
    if answer.outputs is None:
        cls = STATUS_CLASS.get(answer.status)
        if cls == "rejected":
            return "rejected", None
        if cls == "timed_out" and elapsed_s >= CLIENT_TIMEOUT_S:
            return "lost", f"client deadline passed: {answer.message}"
        if cls == "timed_out" and req.timeout_us is not None:
            return "timed_out", None
        if answer.status.startswith("5") or answer.status in ("INTERNAL", "UNIMPLEMENTED"):
            return "lost", f"{answer.status}: {answer.message}"
        return "wrong", f"valid request refused with {answer.status}: {answer.message}"
    name = OUTPUT_NAME[req.target]
    expected = oracle.expected(req, name)
    actual = answer.outputs.get(name)
    if actual is None:
        return "wrong", f"no output '{name}' in {sorted(answer.outputs)}"
    if actual.dtype != expected.dtype:
        return "wrong", f"output '{name}' has dtype {actual.dtype}, expected {expected.dtype}"
    try:
        serve_testing.assert_close(actual, expected, name, rtol=RTOL, atol=scaled_atol(expected))
    except AssertionError as e:
        return "wrong", str(e)
    return "ok", None


def judge_malformed(req, answer):
    expected = "not_found" if req.malformed == "unknown_model" else "invalid"
    if answer.transport is not None and answer.status is None:
        return "malformed_wrong", f"expected {expected}, got no answer: {answer.transport}"
    if answer.outputs is not None:
        return "malformed_wrong", f"expected {expected}, the request succeeded"
    if STATUS_CLASS.get(answer.status) != expected:
        return "malformed_wrong", f"expected {expected}, got {answer.status}: {answer.message}"
    if not answer.message.strip() or answer.message.startswith(CLIENT_DECODE_FAILURE):
        return "malformed_wrong", f"{answer.status} without an error message: {answer.transport or answer.message}"
    return "malformed_ok", None


# ---------------------------------------------------------------------------------------------
# The load.


class Tally:
    """Counts, latencies of the valid requests answered ok, and the first failures of each kind.
    Each client thread has its own; they are merged at the end."""

    def __init__(self):
        # Every category from the start: the progress thread reads these while they change.
        self.counts = collections.Counter({k: 0 for k in CATEGORIES})
        self.malformed_kinds = collections.Counter()
        self.latencies_s = []
        self.failures = collections.defaultdict(list)

    def add(self, req, category, reason, elapsed_s):
        self.counts[category] += 1
        if req.malformed:
            self.malformed_kinds[req.malformed] += 1
        if category == "ok":
            self.latencies_s.append(elapsed_s)
        if reason is not None and len(self.failures[category]) < FAILURES_KEPT:
            self.failures[category].append({"reason": reason, "elapsed_s": round(elapsed_s, 4),
                                            "request": req.describe()})

    def merge(self, other):
        self.counts.update(other.counts)
        self.malformed_kinds.update(other.malformed_kinds)
        self.latencies_s += other.latencies_s
        for k, v in other.failures.items():
            self.failures[k] = (self.failures[k] + v)[:FAILURES_KEPT]


def client_loop(index, args, server, grpc_url, models, stop, tally):
    rng = np.random.default_rng([args.seed, index])
    oracle = Oracle(models)
    conns = Connections(server, grpc_url)
    try:
        while not stop.is_set():
            req = make_request(rng, args.malformed)
            start = time.monotonic()
            answer = conns.send(req)
            elapsed = time.monotonic() - start
            try:
                if req.malformed:
                    category, reason = judge_malformed(req, answer)
                else:
                    category, reason = judge_valid(req, answer, oracle, elapsed)
            except Exception:  # a bug of the soak's own fails the run with its traceback
                category, reason = "lost", "client error while judging:\n" + traceback.format_exc()
            tally.add(req, category, reason, elapsed)
    finally:
        conns.reset()


class RssSampler(threading.Thread):
    """VmRSS of the server (kB) every second, with the time since the load started; sets `stop`
    when the server process disappears so the clients do not spin on a dead port."""

    def __init__(self, proc, stop, period_s=1.0):
        super().__init__(daemon=True)
        self.proc, self.stop, self.period_s = proc, stop, period_s
        self.samples = []
        self.t0 = time.monotonic()

    def run(self):
        while not self.stop.is_set():
            kb = read_rss_kb(self.proc.pid)
            if kb is None or self.proc.poll() is not None:
                self.stop.set()
                return
            self.samples.append((time.monotonic() - self.t0, kb))
            self.stop.wait(self.period_s)


def read_rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def rss_summary(samples, duration_s):
    """Baseline: the median of the window just after the first 20% of the run; end: the median of
    the last window; windows are a minute, or a fifth of shorter runs."""
    if not samples:
        return {"samples": 0}
    window = min(60.0, 0.2 * duration_s)
    start = 0.2 * duration_s
    last = samples[-1][0]
    base = [kb for t, kb in samples if start <= t < start + window] or [samples[0][1]]
    end = [kb for t, kb in samples if t >= last - window]
    baseline, final = float(np.median(base)), float(np.median(end))
    return {"samples": len(samples), "window_s": round(window, 2), "baseline_kb": baseline, "end_kb": final,
            "max_kb": max(kb for _, kb in samples), "growth_pct": round(100.0 * (final - baseline) / baseline, 3)}


def report_progress(tally_list, stop, t0, period_s=10.0):
    while not stop.wait(period_s):
        total = collections.Counter()
        for t in tally_list:
            total.update(t.counts)  # a racy read of live counters: progress only
        print(f"[{time.monotonic() - t0:6.0f} s] " + " ".join(f"{k}={v}" for k, v in sorted(total.items())),
              file=sys.stderr, flush=True)


def run_load(args, server, grpc_url, models):
    """Runs the clients for the duration; returns (merged tally, seconds, RSS samples)."""
    stop = threading.Event()
    tallies = [Tally() for _ in range(args.clients)]
    sampler = RssSampler(server.proc, stop)
    threads = [threading.Thread(target=client_loop, args=(i, args, server, grpc_url, models, stop, tallies[i]),
                                daemon=True) for i in range(args.clients)]
    t0 = time.monotonic()
    sampler.start()
    for t in threads:
        t.start()
    threading.Thread(target=report_progress, args=(tallies, stop, t0), daemon=True).start()
    stop.wait(args.duration_s)
    stop.set()
    for t in threads:
        t.join(CLIENT_TIMEOUT_S + 10)
    elapsed = time.monotonic() - t0
    total = Tally()
    for t in tallies:
        total.merge(t)
    hung = sum(t.is_alive() for t in threads)
    if hung:
        total.counts["lost"] += hung
        total.failures["lost"].append({"reason": f"{hung} client thread(s) still waiting after the run"})
    return total, elapsed, sampler.samples


# ---------------------------------------------------------------------------------------------
# Main.


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ignis", default=str(ROOT / "build" / "ignis"), help="the ignis binary")
    p.add_argument("--duration-s", type=float, default=600)
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--malformed", type=float, default=0.05, help="fraction of malformed requests")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, help="ignis serve --threads (default: the server's)")
    p.add_argument("--rss-limit-pct", type=float, default=5.0, help="largest RSS growth allowed")
    p.add_argument("--json-out", help="write the results here")
    return p.parse_args(argv)


def start_server(args, repo):
    extra = ["--http-port", "0", "--grpc-port", "0"]
    if args.threads is not None:
        extra += ["--threads", str(args.threads)]
    server = serve_testing.IgnisServer(args.ignis, repo, extra).start()
    grpc_port = server.wait_for_log(r"grpc: listening on [0-9.]+:(\d+)").group(1)
    return server, f"{server.host}:{grpc_port}"


def percentile_ms(values, q):
    return round(1000.0 * float(np.percentile(values, q)), 3) if values else None


def problems_of(counts, rss, server_state, rss_limit_pct):
    problems = [f"{counts[k]} {k}" for k in ("wrong", "lost", "malformed_wrong") if counts[k]]
    if counts["ok"] == 0:
        problems.append("no request answered ok")
    if not server_state["alive_at_end"]:
        problems.append(f"the server died during the run (exit status {server_state['exit_code']})")
    elif server_state["exit_code"] != 0:
        problems.append(f"the server exited with {server_state['exit_code']} on SIGTERM")
    if rss.get("growth_pct", 0.0) > rss_limit_pct:
        problems.append(f"RSS grew {rss['growth_pct']:.1f}% (limit {rss_limit_pct}%)")
    return problems


def summary(args, tally, elapsed_s, rss, server_state, problems):
    counts = {k: tally.counts[k] for k in CATEGORIES}
    total = sum(counts.values())
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": [sys.executable, *sys.argv],
        "cpu": cpu_model(),
        "ignis": str(args.ignis),
        "duration_s": round(elapsed_s, 2),
        "clients": args.clients,
        "threads": args.threads,
        "seed": args.seed,
        "malformed_fraction": args.malformed,
        "counts": counts,
        "malformed_kinds": dict(tally.malformed_kinds),
        "requests": total,
        "requests_per_s": round(total / elapsed_s, 1),
        "latency_ms": {"p50": percentile_ms(tally.latencies_s, 50), "p99": percentile_ms(tally.latencies_s, 99)},
        "rss": rss,
        "rss_limit_pct": args.rss_limit_pct,
        "server": server_state,
        "failures": dict(tally.failures),
        "problems": problems,
        "passed": not problems,
    }


def print_summary(s):
    c, r = s["counts"], s["rss"]
    print(f"{s['requests']} requests in {s['duration_s']} s ({s['requests_per_s']} req/s), "
          f"{s['clients']} clients; p50 {s['latency_ms']['p50']} ms, p99 {s['latency_ms']['p99']} ms")
    print("  " + ", ".join(f"{k} {v}" for k, v in c.items()))
    if r.get("samples"):
        print(f"  RSS {r['baseline_kb'] / 1024:.1f} MiB -> {r['end_kb'] / 1024:.1f} MiB "
              f"({r['growth_pct']:+.2f}%, limit {s['rss_limit_pct']}%), max {r['max_kb'] / 1024:.1f} MiB")
    print(f"  server: alive at end {s['server']['alive_at_end']}, exit code {s['server']['exit_code']}")
    for category, failures in s["failures"].items():
        for f in failures[:3]:
            print(f"  {category}: {f['reason'][:500]}")
    print("PASSED" if s["passed"] else "FAILED: " + "; ".join(s["problems"]))


def main(argv=None):
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ignis-soak-") as tmp:
        models, repo = build_repository(tmp)
        server, grpc_url = start_server(args, repo)
        try:
            tally, elapsed, samples = run_load(args, server, grpc_url, models)
            alive = server.alive
        finally:
            exit_code = server.stop()
    server_state = {"alive_at_end": alive, "exit_code": exit_code}
    if not alive or exit_code != 0:
        server_state["log_tail"] = server.logs()[-4000:]
    rss = rss_summary(samples, elapsed)
    problems = problems_of(tally.counts, rss, server_state, args.rss_limit_pct)
    s = summary(args, tally, elapsed, rss, server_state, problems)
    print_summary(s)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(s, indent=1) + "\n")
    return 0 if s["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
