# SPDX-License-Identifier: Apache-2.0
"""The short form of the soak (bench/serve/soak.py) for CI: 20 s of 8 clients over HTTP and
gRPC, valid and malformed requests, every answer checked against onnxruntime, the server's
memory watched, and a clean exit on SIGTERM. The 10-minute form is run by hand.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tritonclient.http")
pytest.importorskip("tritonclient.grpc")

ROOT = Path(__file__).resolve().parents[2]
SOAK = ROOT / "bench" / "serve" / "soak.py"
DURATION_S = 20
# The soak's 5% RSS limit is for 10 minutes, where both medians are taken after every input
# shape has been seen. In 20 s the windows are 4 s long and 12 s apart, while the server is
# still warming up: a plan cached for each new input shape (encoder sequence lengths times the
# batch sizes the batcher merges), malloc arenas and gRPC threads added as load arrives. That
# moves a ~45 MB process by a few percent; 25% (~11 MB) stays far below it, and a leak of
# 0.5 KB per request (some 25k requests between the windows) still goes over it.
RSS_LIMIT_PCT = 25


@pytest.fixture(scope="module")
def soak(ignis_binary, tmp_path_factory):
    out = tmp_path_factory.mktemp("soak") / "soak.json"
    cmd = [sys.executable, str(SOAK), "--ignis", str(ignis_binary), "--duration-s", str(DURATION_S),
           "--clients", "8", "--rss-limit-pct", str(RSS_LIMIT_PCT), "--json-out", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=DURATION_S + 240)
    assert out.is_file(), f"soak.py wrote no results (exit {run.returncode}):\n{run.stdout}\n{run.stderr}"
    result = json.loads(out.read_text())
    result["stdout"] = run.stdout
    result["returncode"] = run.returncode
    return result


def test_every_valid_request_is_answered_right(soak):
    c = soak["counts"]
    assert c["ok"] > 0, soak["stdout"]
    assert c["wrong"] == 0, soak["failures"].get("wrong")
    assert c["lost"] == 0, soak["failures"].get("lost")


def test_malformed_requests_are_refused_with_a_message(soak):
    c = soak["counts"]
    assert c["malformed_ok"] > 0, soak["stdout"]
    assert c["malformed_wrong"] == 0, soak["failures"].get("malformed_wrong")


def test_server_survives_and_exits_cleanly(soak):
    assert soak["server"]["alive_at_end"], soak["server"].get("log_tail")
    assert soak["server"]["exit_code"] == 0, soak["server"].get("log_tail")


def test_memory_does_not_grow(soak):
    assert soak["rss"]["samples"] > 0
    assert soak["rss"]["growth_pct"] <= RSS_LIMIT_PCT, soak["rss"]


def test_soak_passes(soak):
    assert soak["returncode"] == 0 and soak["passed"], soak["stdout"]
