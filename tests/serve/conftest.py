# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the `ignis serve` integration tests (tests/serve).

* `make_repo`: temporary model repositories in Triton's layout,
  <repo>/<model>/<version>/model.onnx plus an optional <repo>/<model>/config.pbtxt.
* `start_server`: starts `ignis serve` (IGNIS_BIN, default build/ignis) as a subprocess on a
  free port, waits for /v2/health/ready, keeps its stderr for assertions and stops it (SIGTERM,
  then SIGKILL after a timeout) when the module ends. Modules skip when the binary is missing.
* `models`: ONNX models built with onnx.helper (identity per datatype, a slow MatMul chain,
  a corrupt file) and the digits CNN from assets/, plus onnxruntime as the reference.

Servers are expensive on a small machine: modules share one per scenario (module scope).
"""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import types
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
DIGITS_ONNX = ASSETS / "digits_cnn.onnx"

READY_TIMEOUT_S = 60
STOP_TIMEOUT_S = 30


def ignis_bin():
    return Path(os.environ.get("IGNIS_BIN", ROOT / "build" / "ignis"))


# ---------------------------------------------------------------------------------------------
# HTTP without a client library: one request on a fresh connection.


class Reply:
    """An HTTP response read in full: status, headers (lower-case names) and body bytes."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    @property
    def error(self):
        """The message of a `{"error": "..."}` body; fails the test when the body is not one."""
        try:
            doc = json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise AssertionError(f"error body is not JSON ({e}): {self.body[:300]!r}") from None
        assert isinstance(doc, dict) and isinstance(doc.get("error"), str), \
            f"error body is not {{\"error\": \"...\"}}: {doc!r}"
        assert self.headers.get("content-type", "").startswith("application/json"), self.headers
        return doc["error"]

    def __repr__(self):
        return f"Reply({self.status}, {self.body[:300]!r})"


def http_request(port, method, path, body=None, headers=None, timeout=30, host="127.0.0.1"):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = {"Content-Type": "application/json", **(headers or {})}
        elif isinstance(body, str):
            body = body.encode()
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
    finally:
        conn.close()


def binary_infer_body(header, tensors):
    """Body of a binary-tensor request: the JSON header then each array's bytes; returns
    (body, json_length)."""
    head = json.dumps(header).encode()
    return head + b"".join(np.ascontiguousarray(t).tobytes() for t in tensors), len(head)


def parse_binary_response(reply):
    """Splits a response that may carry binary outputs into {name: ndarray}."""
    hl = reply.headers.get("inference-header-content-length")
    head_len = int(hl) if hl is not None else len(reply.body)
    doc = json.loads(reply.body[:head_len])
    out, pos = {}, head_len
    for o in doc["outputs"]:
        dtype = KSERVE_NUMPY[o["datatype"]]
        size = (o.get("parameters") or {}).get("binary_data_size")
        if size is not None:
            raw = reply.body[pos:pos + size]
            pos += size
            out[o["name"]] = np.frombuffer(raw, dtype=dtype).reshape(o["shape"])
        else:
            out[o["name"]] = np.array(o["data"], dtype=dtype).reshape(o["shape"])
    assert pos == len(reply.body), f"{len(reply.body) - pos} bytes after the last binary output"
    return doc, out


# ---------------------------------------------------------------------------------------------
# The server process.


class IgnisServer:
    def __init__(self, binary, repository, args=(), env=None):
        self.binary = Path(binary)
        self.repository = Path(repository)
        self.args = list(args)
        if "--grpc-port" not in self.args:
            self.args += ["--grpc-port", "-1"]
        if "--http-port" not in self.args:
            self.args += ["--http-port", "0"]
        self.env = env
        self.proc = None
        self.port = None
        self.host = "127.0.0.1"
        self._lines = []
        self._lines_lock = threading.Lock()
        self._reader = None
        self._sockets = []

    # --- lifecycle
    def start(self, wait_ready=True, timeout=READY_TIMEOUT_S):
        cmd = [str(self.binary), "serve", "--model-repository", str(self.repository), *self.args]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=self.env)
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        m = self.wait_for_log(r"http: listening on ([0-9.]+):(\d+)", timeout=timeout)
        self.host, self.port = m.group(1), int(m.group(2))
        if wait_ready:
            self.wait_ready(timeout)
        return self

    def _read_stderr(self):
        for raw in self.proc.stderr:
            with self._lines_lock:
                self._lines.append(raw.decode("utf-8", "replace"))

    def wait_ready(self, timeout=READY_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"ignis serve exited with {self.proc.returncode}:\n{self.logs()}")
            try:
                last = self.get("/v2/health/ready", timeout=5)
                if last.status == 200:
                    return
            except OSError as e:
                last = e
            time.sleep(0.05)
        raise AssertionError(f"server not ready after {timeout} s (last: {last!r}):\n{self.logs()}")

    def terminate(self):
        """Sends SIGTERM (the start of a graceful drain) without waiting."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def stop(self, timeout=STOP_TIMEOUT_S):
        """SIGTERM, wait, SIGKILL on timeout; returns the exit status (None when killed)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        if self._reader:
            self._reader.join(5)
        return self.proc.returncode

    @property
    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    # --- stderr
    def logs(self):
        with self._lines_lock:
            return "".join(self._lines)

    def log_mark(self):
        """A position in the log, for `logs_since`."""
        with self._lines_lock:
            return len(self._lines)

    def logs_since(self, mark):
        with self._lines_lock:
            return "".join(self._lines[mark:])

    def wait_for_log(self, pattern, timeout=10, since=0):
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            with self._lines_lock:
                for line in self._lines[since:]:
                    m = rx.search(line)
                    if m:
                        return m
            if self.proc.poll() is not None and (self._reader is None or not self._reader.is_alive()):
                raise AssertionError(f"ignis serve exited ({self.proc.returncode}) before logging "
                                     f"{pattern!r}:\n{self.logs()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no log line matching {pattern!r} within {timeout} s:\n{self.logs()}")
            time.sleep(0.02)

    # --- HTTP
    @property
    def url(self):
        return f"{self.host}:{self.port}"

    @property
    def base(self):
        return f"http://{self.host}:{self.port}"

    def request(self, method, path, body=None, headers=None, timeout=30):
        return http_request(self.port, method, path, body, headers, timeout, self.host)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def connect(self, timeout=10):
        """A raw TCP socket to the server (closed by `close_sockets` if the test does not)."""
        s = socket.create_connection((self.host, self.port), timeout=timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sockets.append(s)
        return s

    def close_sockets(self):
        for s in self._sockets:
            try:
                s.close()
            except OSError:
                pass
        self._sockets.clear()


@pytest.fixture(scope="module")
def ignis_binary():
    binary = ignis_bin()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.skip(f"ignis binary {binary} does not exist (build it or set IGNIS_BIN)")
    return binary


@pytest.fixture(scope="module")
def start_server(ignis_binary):
    """start_server(repository, *args, wait_ready=True) -> IgnisServer; all are stopped when the
    module ends."""
    servers = []

    def start(repository, *args, wait_ready=True, timeout=READY_TIMEOUT_S, env=None):
        s = IgnisServer(ignis_binary, repository, args, env)
        servers.append(s)
        try:
            return s.start(wait_ready=wait_ready, timeout=timeout)
        except BaseException:
            s.stop(5)
            raise

    yield start
    for s in servers:
        s.close_sockets()
        s.stop()


# ---------------------------------------------------------------------------------------------
# Repositories.


class ModelRepo:
    """A model repository folder: add(name, model, version=1, config=None)."""

    def __init__(self, root):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def add(self, name, model, version=1, config=None, filename="model.onnx"):
        """model: an onnx.ModelProto, serialized bytes or a path to copy. Returns the file."""
        vdir = self.root / name / str(version)
        vdir.mkdir(parents=True, exist_ok=True)
        path = vdir / filename
        write_model(path, model)
        if config is not None:
            self.config(name, config)
        return path

    def config(self, name, text):
        (self.root / name).mkdir(parents=True, exist_ok=True)
        (self.root / name / "config.pbtxt").write_text(text)

    def remove_version(self, name, version):
        shutil.rmtree(self.root / name / str(version))

    def remove_model(self, name):
        shutil.rmtree(self.root / name)

    def __str__(self):
        return str(self.root)

    def __fspath__(self):
        return str(self.root)


def write_model(path, model):
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(model, (bytes, bytearray)):
        tmp.write_bytes(model)
    elif isinstance(model, (str, Path)):
        shutil.copyfile(model, tmp)
    else:
        tmp.write_bytes(model.SerializeToString())
    os.replace(tmp, path)  # never a half-written model for a polling server


@pytest.fixture(scope="module")
def make_repo(tmp_path_factory):
    def make(name="repo"):
        return ModelRepo(tmp_path_factory.mktemp(name))

    return make


# ---------------------------------------------------------------------------------------------
# Models and the onnxruntime reference.

# KServe datatype -> (ONNX element type name, numpy dtype of the values on the wire).
KSERVE_ONNX = {
    "BOOL": "BOOL", "UINT8": "UINT8", "UINT16": "UINT16", "UINT32": "UINT32", "UINT64": "UINT64",
    "INT8": "INT8", "INT16": "INT16", "INT32": "INT32", "INT64": "INT64",
    "FP16": "FLOAT16", "FP32": "FLOAT", "FP64": "DOUBLE", "BF16": "BFLOAT16",
}
KSERVE_NUMPY = {
    "BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32, "UINT64": np.uint64,
    "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
    "FP16": np.float16, "FP32": np.float32, "FP64": np.float64,
    "BF16": np.uint16,  # raw bits
}

OPSET = 17


def _finish(graph):
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="ignis-serve-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def identity_model(datatypes, batch="batch", width=3):
    """One Identity per KServe datatype: in_<DT>[batch, width] -> out_<DT>[batch, width]."""
    from onnx import TensorProto, helper

    nodes, ins, outs = [], [], []
    for dt in datatypes:
        et = getattr(TensorProto, KSERVE_ONNX[dt])
        nodes.append(helper.make_node("Identity", [f"in_{dt}"], [f"out_{dt}"]))
        ins.append(helper.make_tensor_value_info(f"in_{dt}", et, [batch, width]))
        outs.append(helper.make_tensor_value_info(f"out_{dt}", et, [batch, width]))
    return _finish(helper.make_graph(nodes, "identity", ins, outs))


def cast_model(batch="batch", width=4):
    """x:FP32[batch, width] -> y = x (Identity), d = Cast(x, DOUBLE), i = Cast(Cast(x, INT32), FLOAT)."""
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node("Identity", ["x"], ["y"]),
        helper.make_node("Cast", ["x"], ["d"], to=TensorProto.DOUBLE),
        helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT32),
        helper.make_node("Cast", ["xi"], ["i"], to=TensorProto.FLOAT),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, width])
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, width]),
            helper.make_tensor_value_info("d", TensorProto.DOUBLE, [batch, width]),
            helper.make_tensor_value_info("i", TensorProto.FLOAT, [batch, width])]
    return _finish(helper.make_graph(nodes, "cast", [x], outs))


def add_const_model(value, batch="batch", width=4):
    """x:FP32[batch, width] -> y = x + value; versions of one model differ by `value`."""
    from onnx import TensorProto, helper, numpy_helper

    c = numpy_helper.from_array(np.full([width], value, np.float32), "c")
    nodes = [helper.make_node("Add", ["x", "c"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, width])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, width])
    return _finish(helper.make_graph(nodes, "add_const", [x], [y], initializer=[c]))


def slow_model(layers=6, size=512, distinct=4, seed=7):
    """x:FP32[batch, size] -> a chain of `layers` MatMul(size x size) + Tanh over `distinct`
    weight matrices; 2 * batch * size^2 * layers FLOPs a run."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits, prev = [], [], "x"
    for i in range(distinct):
        w = (rng.standard_normal((size, size)) / np.sqrt(size)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
    for i in range(layers):
        nodes.append(helper.make_node("MatMul", [prev, f"w{i % distinct}"], [f"m{i}"]))
        out = "y" if i == layers - 1 else f"t{i}"
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [out]))
        prev = out
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", size])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", size])
    return _finish(helper.make_graph(nodes, "slow", [x], [y], initializer=inits))


CORRUPT_MODEL = b"\x08\x07\x12\x05ignis" + b"\xff\xfe this is not a protobuf model \x00\x01" * 8


class Reference:
    """onnxruntime sessions of model protos or files, cached by identity."""

    def __init__(self):
        self._sessions = {}

    def session(self, model):
        import onnxruntime as ort

        key = str(model) if isinstance(model, (str, Path)) else id(model)
        if key not in self._sessions:
            src = str(model) if isinstance(model, (str, Path)) else model.SerializeToString()
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            self._sessions[key] = (model, ort.InferenceSession(src, so, providers=["CPUExecutionProvider"]))
        return self._sessions[key][1]

    def run(self, model, feeds, outputs=None):
        sess = self.session(model)
        names = outputs or [o.name for o in sess.get_outputs()]
        return dict(zip(names, sess.run(names, feeds)))


@pytest.fixture(scope="session")
def models():
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    return types.SimpleNamespace(
        digits=DIGITS_ONNX,
        identity=identity_model,
        cast=cast_model,
        add_const=add_const_model,
        slow=slow_model,
        corrupt=CORRUPT_MODEL,
        reference=Reference(),
    )


@pytest.fixture(scope="session")
def helpers():
    """Plain functions for the test modules (a conftest is not importable by name)."""
    return types.SimpleNamespace(
        http_request=http_request,
        binary_infer_body=binary_infer_body,
        parse_binary_response=parse_binary_response,
        KSERVE_NUMPY=KSERVE_NUMPY,
        Reply=Reply,
        sample_values=sample_values,
    )


def assert_close(actual, expected, what="", rtol=1e-4, atol=1e-5):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


@pytest.fixture(scope="session")
def close():
    return assert_close


def sample_values(numpy_types, dt, shape, rng, special=False):
    """Values spanning KServe datatype `dt`'s range (numpy type `numpy_types[dt]`), its extremes
    included; with `special`, the first three of a float tensor are +inf, -inf and NaN."""
    import ml_dtypes

    if dt == "BOOL":
        return rng.random(shape) < 0.5
    t = numpy_types[dt]
    if np.issubdtype(t, np.integer):
        info = np.iinfo(t)
        a = rng.integers(info.min, info.max, size=shape, dtype=t, endpoint=True)
        a.flat[0], a.flat[-1] = info.min, info.max
        return a
    if dt == "FP16":
        a = (rng.standard_normal(shape) * 1000).astype(np.float16)
    elif dt == "BF16":
        a = (rng.standard_normal(shape) * 1e10).astype(ml_dtypes.bfloat16)
    else:
        a = (rng.standard_normal(shape) * 1e6).astype(t)
    if special and a.size >= 3:
        a.flat[0], a.flat[1], a.flat[2] = np.inf, -np.inf, np.nan
    return a
