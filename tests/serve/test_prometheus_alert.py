# SPDX-License-Identifier: Apache-2.0
"""End to end: the shipped latency alert fires from the metrics `ignis serve` exports.

Starts `ignis serve` (IGNIS_BIN, default build/ignis) on a temporary repository holding a
deliberately slow model, and Debian's Prometheus scraping it every second with a copy of
deploy/prometheus/ignis_alerts.yml whose P99 latency rule has its threshold lowered to 5 ms and
its `for` to 0s. The alert must be quiet while the server idles and must fire once JSON infer
requests flow. Skipped when prometheus, promtool or the ignis binary is missing.
"""

import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "deploy" / "prometheus" / "ignis_alerts.yml"
LATENCY_ALERT = "IgnisRequestLatencyP99High"
TEST_THRESHOLD_S = 0.005

MODEL = "slow_matmul"
ROWS, WIDTH = 64, 1024
# 48 MatMul+Relu layers over 8 distinct weight matrices: about 6.4 GFLOP per inference, 20 ms or
# more on 2 cores, so the P99 is far above the 5 ms test threshold on any machine.
LAYERS, DISTINCT_WEIGHTS = 48, 8
SEED = 20261201

READY_TIMEOUT_S = 60
ALERT_TIMEOUT_S = 60


def ignis_bin():
    return Path(os.environ.get("IGNIS_BIN", ROOT / "build" / "ignis"))


def prometheus_bin():
    return shutil.which("prometheus") or ("/usr/bin/prometheus" if os.access("/usr/bin/prometheus", os.X_OK) else None)


@pytest.fixture(scope="module")
def tools():
    prometheus, promtool = prometheus_bin(), shutil.which("promtool")
    if not prometheus or not promtool:
        pytest.skip("prometheus/promtool not installed (Debian package prometheus)")
    binary = ignis_bin()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.skip(f"ignis binary {binary} does not exist (build it with tools/build.sh or set IGNIS_BIN)")
    return {"prometheus": prometheus, "promtool": promtool, "ignis": binary.resolve()}


# ---- utilities ----------------------------------------------------------------------------

def free_ports(n):
    """n distinct free TCP ports on 127.0.0.1 (held open together so none repeats)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def http_get(url, timeout=5):
    """(status, body) or (None, error text) when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError, socket.timeout) as e:
        return None, str(e)


def log_tail(path, n=3000):
    try:
        return Path(path).read_text(errors="replace")[-n:]
    except OSError:
        return "(no log)"


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def write_slow_model(path):
    """A chain of [ROWS, 1024] x [1024, 1024] MatMuls, each followed by Relu (so no pass can
    multiply the weights together ahead of time), He-scaled so values stay finite."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(SEED)
    scale = np.float32(np.sqrt(2.0 / WIDTH))
    weights = [numpy_helper.from_array(rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) * scale, f"w{i}")
               for i in range(DISTINCT_WEIGHTS)]
    nodes, prev = [], "x"
    for i in range(LAYERS):
        out = "y" if i == LAYERS - 1 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [prev, f"w{i % DISTINCT_WEIGHTS}"], [f"mm{i}"]))
        nodes.append(helper.make_node("Relu", [f"mm{i}"], [out]))
        prev = out
    graph = helper.make_graph(
        nodes, MODEL,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [ROWS, WIDTH])],
        weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


def rewrite_latency_rule(src, dst, threshold, for_duration):
    """Copies the rules file with the latency alert's threshold and `for` replaced, editing the
    parsed rule (its expression ends in `> <threshold>`)."""
    doc = yaml.safe_load(src.read_text())
    rules = [r for g in doc["groups"] for r in g["rules"] if r.get("alert") == LATENCY_ALERT]
    assert len(rules) == 1, f"expected one {LATENCY_ALERT} rule in {src}, found {len(rules)}"
    rule = rules[0]
    expr, n = re.subn(r">\s*[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?\s*$", f"> {threshold}", rule["expr"].strip())
    assert n == 1, f"the {LATENCY_ALERT} expression does not end in '> <threshold>': {rule['expr']}"
    rule["expr"] = expr
    rule["for"] = for_duration
    dst.write_text(yaml.safe_dump(doc, sort_keys=False))
    return expr


# ---- the two processes --------------------------------------------------------------------

@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("prometheus_alert")


@pytest.fixture(scope="module")
def ignis_server(tools, workdir):
    repo = workdir / "repository"
    write_slow_model(repo / MODEL / "1" / "model.onnx")
    http_port, grpc_port = free_ports(2)
    log = workdir / "ignis.log"
    cmd = [str(tools["ignis"]), "serve", "--model-repository", str(repo), "--host", "127.0.0.1",
           "--http-port", str(http_port), "--grpc-port", str(grpc_port), "--threads", "2"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{http_port}"
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"ignis serve exited with {proc.returncode}:\n{log_tail(log)}")
            if (http_get(base + "/v2/health/ready", 2)[0] == 200
                    and http_get(f"{base}/v2/models/{MODEL}/ready", 2)[0] == 200):
                break
            if time.monotonic() > deadline:
                pytest.fail(f"ignis serve not ready after {READY_TIMEOUT_S} s:\n{log_tail(log)}")
            time.sleep(0.2)
        yield {"base": base, "port": http_port, "log": log, "proc": proc}
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def prometheus(tools, workdir, ignis_server):
    rules = workdir / "ignis_alerts_test_copy.yml"
    expr = rewrite_latency_rule(ALERTS, rules, TEST_THRESHOLD_S, "0s")
    check = subprocess.run([tools["promtool"], "check", "rules", str(rules)], capture_output=True, text=True)
    assert check.returncode == 0, f"rewritten rules do not pass promtool:\n{check.stdout}{check.stderr}"

    port, = free_ports(1)
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "scrape_configs": [{"job_name": "ignis", "metrics_path": "/metrics",
                            "static_configs": [{"targets": [f"127.0.0.1:{ignis_server['port']}"]}]}],
    }
    config_path = workdir / "prometheus.yml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    log = workdir / "prometheus.log"
    cmd = [tools["prometheus"], f"--config.file={config_path}", f"--storage.tsdb.path={workdir / 'tsdb'}",
           f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while http_get(base + "/-/ready", 2)[0] != 200:
            if proc.poll() is not None:
                pytest.fail(f"prometheus exited with {proc.returncode}:\n{log_tail(log)}")
            if time.monotonic() > deadline:
                pytest.fail(f"prometheus not ready after 30 s:\n{log_tail(log)}")
            time.sleep(0.2)
        yield {"base": base, "log": log, "proc": proc, "expr": expr}
    finally:
        stop(proc)


# ---- Prometheus API -----------------------------------------------------------------------

def api(prom, path, **params):
    url = prom["base"] + path + ("?" + urllib.parse.urlencode(params) if params else "")
    status, body = http_get(url, 5)
    assert status == 200, f"prometheus {path}: {status} {body!r}"
    doc = json.loads(body)
    assert doc["status"] == "success", doc
    return doc["data"]


def latency_alerts(prom):
    return [a for a in api(prom, "/api/v1/alerts")["alerts"]
            if a["labels"].get("alertname") == LATENCY_ALERT and a["labels"].get("model") == MODEL]


def wait_for_evaluations(prom, count, timeout):
    """Waits until the latency rule's group has been evaluated `count` more times."""
    seen = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for group in api(prom, "/api/v1/rules", type="alert")["groups"]:
            if any(r.get("name") == LATENCY_ALERT for r in group["rules"]):
                seen.add(group.get("lastEvaluation"))
        if len(seen) > count:
            return
        time.sleep(0.25)
    pytest.fail(f"the rule group of {LATENCY_ALERT} was not evaluated {count} times in {timeout} s")


def wait_for_target_up(prom, timeout=30):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        targets = api(prom, "/api/v1/targets")["activeTargets"]
        last = [(t["scrapeUrl"], t["health"], t.get("lastError")) for t in targets]
        if targets and all(t["health"] == "up" for t in targets):
            return
        time.sleep(0.25)
    pytest.fail(f"prometheus cannot scrape ignis serve: {last}\n{log_tail(prom['log'])}")


# ---- load ---------------------------------------------------------------------------------

class Load:
    """One client thread sending JSON KServe v2 infer requests back to back over keep-alive."""

    def __init__(self, port):
        data = np.round(np.random.default_rng(SEED + 1).random(ROWS * WIDTH), 2)
        self.body = json.dumps({"inputs": [{"name": "x", "shape": [ROWS, WIDTH], "datatype": "FP32",
                                            "data": data.tolist()}]}).encode()
        self.port = port
        self.ok = 0
        self.errors = []
        self.latencies = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        conn = None
        while not self._stop.is_set():
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                t = time.perf_counter()
                conn.request("POST", f"/v2/models/{MODEL}/infer", body=self.body,
                             headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                payload = resp.read()
                if resp.status == 200 and json.loads(payload)["outputs"][0]["name"] == "y":
                    self.ok += 1
                    self.latencies.append(time.perf_counter() - t)
                else:
                    self.errors.append(f"{resp.status}: {payload[:300]!r}")
            except (OSError, http.client.HTTPException, ValueError, KeyError, IndexError) as e:
                self.errors.append(repr(e))
                if conn is not None:
                    conn.close()
                conn = None
                time.sleep(0.1)
        if conn is not None:
            conn.close()

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=60)


# ---- the test -----------------------------------------------------------------------------

def test_latency_alert_fires_under_load_and_not_before(ignis_server, prometheus):
    prom = prometheus
    assert prom["expr"].rstrip().endswith(f"> {TEST_THRESHOLD_S}")

    # Idle: the target is scraped and the rule evaluated several times, without any alert.
    wait_for_target_up(prom)
    wait_for_evaluations(prom, 3, timeout=30)
    before = latency_alerts(prom)
    assert before == [], f"{LATENCY_ALERT} was active before any request: {before}"

    load = Load(ignis_server["port"])
    load.start()
    firing = []
    try:
        deadline = time.monotonic() + ALERT_TIMEOUT_S
        while time.monotonic() < deadline:
            if ignis_server["proc"].poll() is not None:
                pytest.fail(f"ignis serve died under load:\n{log_tail(ignis_server['log'])}")
            firing = [a for a in latency_alerts(prom) if a["state"] == "firing"]
            if firing:
                break
            time.sleep(0.5)
    finally:
        load.stop()

    assert not load.errors, f"{len(load.errors)} infer requests failed, first: {load.errors[0]}"
    assert load.ok > 0, "no infer request succeeded"
    p99 = api(prom, "/api/v1/query",
              query=f'histogram_quantile(0.99, sum by (le) (rate(ignis_request_duration_seconds_bucket{{model="{MODEL}"}}[5m])))')
    client_ms = 1000 * sorted(load.latencies)[len(load.latencies) // 2]
    summary = (f"{load.ok} requests, client median {client_ms:.1f} ms, "
               f"server p99 per Prometheus: {p99['result'][0]['value'][1] if p99['result'] else 'none'} s")
    assert firing, f"{LATENCY_ALERT} did not fire within {ALERT_TIMEOUT_S} s ({summary})"
    alert = firing[0]
    assert alert["labels"]["version"] == "1"
    assert float(alert["value"]) > TEST_THRESHOLD_S, alert
    print(f"{LATENCY_ALERT} fired: {summary}")
