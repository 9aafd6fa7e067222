# SPDX-License-Identifier: Apache-2.0
"""Graceful shutdown of `ignis serve`: SIGTERM while requests are queued on a slow model.

Every request the server accepted before the signal gets a complete HTTP response (200 with
the right outputs, or a clean 503 JSON error), none is reset; readiness turns 503 while the
server drains; the process exits 0 within --exit-timeout. Expected outputs come from
onnxruntime.
"""

import http.client
import json
import os
import re
import signal
import socket
import threading
import time

import numpy as np
import pytest

ROWS, SIZE, LAYERS = 256, 512, 48  # about 6 GFLOP a request: 50 ms or more on 2 cores
REQUESTS = 20
# The server's --exit-timeout. A sanitizer build runs the model several times slower: the ASan
# run of this file sets IGNIS_TEST_EXIT_TIMEOUT_S (tools/test.sh) so that its drain fits.
EXIT_TIMEOUT_S = int(os.environ.get("IGNIS_TEST_EXIT_TIMEOUT_S", "20"))


@pytest.fixture(scope="module")
def slow(models):
    return models.slow(layers=LAYERS, size=SIZE)


@pytest.fixture(scope="module")
def slow_repo(make_repo, slow):
    r = make_repo("slow")
    r.add("slow", slow, config=f"max_batch_size: {ROWS}\n")
    return r


def infer_body(x, rid):
    """(body, JSON header length) of a binary request for the slow model."""
    head = json.dumps({"id": rid, "inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32",
                                              "parameters": {"binary_data_size": x.nbytes}}],
                       "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
    return head + x.tobytes(), len(head)


def request_bytes(x, rid):
    body, head_len = infer_body(x, rid)
    return (f"POST /v2/models/slow/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
            f"Inference-Header-Content-Length: {head_len}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def read_response(sock, timeout=60):
    sock.settimeout(timeout)
    r = http.client.HTTPResponse(sock)
    r.begin()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()


def decode_y(headers, body):
    hl = int(headers["inference-header-content-length"])
    doc = json.loads(body[:hl])
    out = doc["outputs"][0]
    assert out["name"] == "y" and out["datatype"] == "FP32", doc
    return doc, np.frombuffer(body[hl:], np.float32).reshape(out["shape"])


def successes(srv):
    return srv.get("/v2/models/slow/stats").json()["model_stats"][0]["inference_stats"]["success"]["count"]


def inflight(srv):
    m = re.search(r'^ignis_inflight_requests\{[^}]*model="slow"[^}]*\} (\S+)$', srv.get("/metrics").body.decode(), re.M)
    return float(m.group(1)) if m else 0.0


def wait_accepted(srv, base, n, timeout=30):
    """Waits until the server holds all n requests: answered ones plus queued or running ones."""
    deadline = time.monotonic() + timeout
    while True:
        done = successes(srv) - base  # read before the gauge: a request moving between the two is missed, not doubled
        held = done + inflight(srv)
        if held >= n:
            assert done < n, "every request finished before the signal; the model is too fast to test a drain"
            return done
        assert time.monotonic() < deadline, f"the server holds only {held} of {n} requests"
        time.sleep(0.005)


class Client(threading.Thread):
    """Connects, sends one whole request, flags `sent`, then waits for the response."""

    def __init__(self, srv, x, rid):
        super().__init__(daemon=True)
        self.srv, self.x, self.rid = srv, x, rid
        self.sent = threading.Event()
        self.result = None  # (status, headers, body) or the exception

    def run(self):
        try:
            with socket.create_connection((self.srv.host, self.srv.port), timeout=60) as s:
                s.sendall(request_bytes(self.x, self.rid))
                self.sent.set()
                self.result = read_response(s)
        except Exception as e:  # noqa: BLE001
            self.result = e
        finally:
            self.sent.set()


def test_sigterm_under_load(start_server, slow_repo, slow, models, close):
    srv = start_server(slow_repo, "--exit-timeout", str(EXIT_TIMEOUT_S))
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((ROWS, SIZE)).astype(np.float32) for _ in range(REQUESTS)]

    # How long one request takes here, to know the drain is long enough to watch.
    t0 = time.monotonic()
    c = Client(srv, xs[0], "warm")
    c.start()
    c.join(60)
    one = time.monotonic() - t0
    assert not isinstance(c.result, Exception) and c.result[0] == 200, c.result

    base = successes(srv)
    clients = [Client(srv, x, f"r{i}") for i, x in enumerate(xs)]
    for c in clients:
        c.start()
    for c in clients:
        assert c.sent.wait(30), "a client could not send its request"
    done_before = wait_accepted(srv, base, REQUESTS)
    srv.terminate()
    t_term = time.monotonic()

    # Readiness turns 503 while the queued requests finish; requests sent once it has are refused
    # cleanly.
    ready_statuses, late = [], []
    while srv.alive and time.monotonic() - t_term < EXIT_TIMEOUT_S + 5:
        try:
            r = srv.get("/v2/health/ready", timeout=5)
            ready_statuses.append(r.status)
            if r.status == 503:
                assert "shutting down" in r.error
                if len(late) < 3:
                    body, head_len = infer_body(xs[0], "late")
                    late.append(srv.post("/v2/models/slow/infer", body,
                                         headers={"Inference-Header-Content-Length": str(head_len)}))
        except OSError:
            ready_statuses.append("refused")
        time.sleep(0.01)
    try:
        rc = srv.proc.wait(EXIT_TIMEOUT_S + 10 - (time.monotonic() - t_term))
    except Exception:  # noqa: BLE001
        rc = None
    elapsed = time.monotonic() - t_term
    for c in clients:
        c.join(30)

    logs = srv.logs()
    assert rc == 0, f"exit status {rc} after {elapsed:.1f} s:\n{logs}"
    assert elapsed < EXIT_TIMEOUT_S, elapsed
    assert "received SIGTERM" in logs and "drained" in logs, logs

    expected = models.reference.run(slow, {"x": np.concatenate(xs)})["y"]
    ok = 0
    for i, c in enumerate(clients):
        assert not isinstance(c.result, Exception), f"request {i} got no HTTP response: {c.result!r}"
        status, headers, body = c.result
        if status == 503:  # arrived after the drain began: a clean refusal
            assert "shutting down" in json.loads(body)["error"], body
            continue
        assert status == 200, (i, status, body[:300])
        doc, y = decode_y(headers, body)
        assert doc["id"] == f"r{i}"
        close(y, expected[i * ROWS:(i + 1) * ROWS], f"request {i}", rtol=1e-4, atol=1e-5)
        ok += 1
    # They were all fully sent before the signal: the server had them and finished them.
    assert ok == REQUESTS, f"only {ok} of {REQUESTS} accepted requests were answered with outputs"

    drain_s = one * (REQUESTS - done_before)  # what was left to run at the signal
    if drain_s > 0.3:  # long enough that some readiness probe fell inside the drain
        assert 503 in ready_statuses, (ready_statuses, drain_s)
    # Once readiness said 503 it never goes back (a first probe may beat the signal's handling).
    if 503 in ready_statuses:
        assert 200 not in ready_statuses[ready_statuses.index(503):], ready_statuses
    for r in late:
        assert r.status == 503 and "shutting down" in r.error, r


def test_sigterm_closes_idle_keepalive_connections(start_server, slow_repo):
    srv = start_server(slow_repo, "--exit-timeout", str(EXIT_TIMEOUT_S))
    socks = []
    for _ in range(5):
        s = srv.connect()
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_response(s)[0] == 200
        socks.append(s)  # kept open, idle
    half = srv.connect()
    half.sendall(b"GET /v2/health/li")  # a request that never completes
    t0 = time.monotonic()
    srv.terminate()
    rc = srv.proc.wait(15)
    assert rc == 0, srv.logs()
    assert time.monotonic() - t0 < 10, "idle connections held the shutdown"
    for s in socks + [half]:
        s.settimeout(5)
        try:
            assert s.recv(100) == b""
        except ConnectionResetError:
            pass
        s.close()


def test_sigint_idle_exits_zero(start_server, slow_repo):
    srv = start_server(slow_repo)
    srv.proc.send_signal(signal.SIGINT)
    assert srv.proc.wait(15) == 0, srv.logs()
    assert "received SIGINT" in srv.logs()


def test_exit_timeout_exceeded(start_server, slow_repo):
    """More queued work than --exit-timeout allows: the server still exits, with status 1 and a
    warning, instead of hanging."""
    srv = start_server(slow_repo, "--exit-timeout", "0.2")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((ROWS, SIZE)).astype(np.float32)
    times = []
    for _ in range(3):
        t0 = time.monotonic()
        c = Client(srv, x, "warm")
        c.start()
        c.join(60)
        times.append(time.monotonic() - t0)
    n = max(REQUESTS, int(6.0 / min(times)))  # at least 6 s of queued work
    clients = [Client(srv, x, f"t{i}") for i in range(n)]
    base = successes(srv)
    for c in clients:
        c.start()
    for c in clients:
        assert c.sent.wait(30)
    wait_accepted(srv, base, n)
    t0 = time.monotonic()
    srv.terminate()
    rc = srv.proc.wait(60)
    elapsed = time.monotonic() - t0
    assert rc == 1, srv.logs()
    assert "exit timeout reached" in srv.logs()
    for c in clients:
        c.join(30)
    # Each request got an answer or a closed connection; none hangs.
    assert all(c.result is not None for c in clients)
    # The exit timeout bounds the exit: the timeout, the HTTP shutdown grace (0.5 s) and the run in
    # progress, not the whole queue.
    assert elapsed < 0.2 + 0.5 + 2.0, f"exited {elapsed:.1f} s after SIGTERM with --exit-timeout 0.2"


def test_sigterm_with_a_client_mid_body(start_server, slow_repo):
    """A client stuck halfway through its body when SIGTERM comes: the server gives up on it after
    the exit timeout and exits cleanly (no crash while tearing the connection down)."""
    srv = start_server(slow_repo, "--exit-timeout", "1")
    s = srv.connect()
    s.sendall(b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"inputs\"")
    time.sleep(0.2)
    t0 = time.monotonic()
    srv.terminate()
    rc = srv.proc.wait(30)
    assert rc == 0, f"exit status {rc}:\n{srv.logs()}"
    assert time.monotonic() - t0 < 10
    s.close()
