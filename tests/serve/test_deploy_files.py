# SPDX-License-Identifier: Apache-2.0
"""The deployment files in deploy/ stay valid: deploy/check.sh as a whole (promtool rules,
rule unit tests and configs), each check of deploy/check_deploy.py on its own, and a few cases
showing that those checks do catch mistakes."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def load_check_deploy():
    spec = importlib.util.spec_from_file_location("check_deploy", DEPLOY / "check_deploy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cd = load_check_deploy()
needs_promtool = pytest.mark.skipif(shutil.which("promtool") is None,
                                    reason="promtool not installed (Debian package prometheus)")


@needs_promtool
def test_check_script_passes():
    r = subprocess.run(["bash", str(DEPLOY / "check.sh")], capture_output=True, text=True,
                       env={**os.environ, "PYTHON": sys.executable})
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("name", list(cd.CHECKS))
def test_check(name):
    problems = cd.CHECKS[name]()
    if problems is None:
        pytest.skip("promtool not installed")
    assert problems == [], "\n".join(problems)


def test_every_fixed_metric_is_documented():
    metrics = cd.documented_metrics()
    expected = {
        "ignis_request_duration_seconds": "histogram", "ignis_queue_duration_seconds": "histogram",
        "ignis_compute_duration_seconds": "histogram", "ignis_batch_size": "histogram",
        "ignis_batch_fill_ratio": "histogram", "ignis_inference_success_total": "counter",
        "ignis_inference_failure_total": "counter", "ignis_inflight_requests": "gauge",
        "ignis_queued_requests": "gauge", "ignis_model_ready": "gauge", "ignis_model_max_batch_size": "gauge",
        "ignis_http_connections": "gauge", "ignis_http_responses_total": "counter",
        "process_resident_memory_bytes": "gauge", "process_virtual_memory_bytes": "gauge",
        "process_cpu_seconds_total": "counter", "process_start_time_seconds": "gauge", "process_open_fds": "gauge",
    }
    for name, kind in expected.items():
        assert name in metrics, f"{name} missing from docs/deploy.md"
        assert metrics[name][0] == kind, f"{name}: documented as {metrics[name][0]}, is a {kind}"
        if name.startswith("ignis_") and name not in ("ignis_http_connections", "ignis_http_responses_total"):
            assert {"model", "version"} <= metrics[name][1], f"{name}: labels model, version not documented"
    assert "reason" in metrics["ignis_inference_failure_total"][1]
    assert "code" in metrics["ignis_http_responses_total"][1]


def test_promql_scanner_finds_metrics_and_labels():
    names, labels = cd.promql_names(
        'histogram_quantile(0.99, sum by (model, le) (rate(ignis_queue_duration_seconds_bucket{version=~"$version"}[$__rate_interval])))'
        ' > 0.5 and on (job) up offset 5m')
    assert names == {"ignis_queue_duration_seconds_bucket", "up"}
    assert labels == {"model", "le", "version", "job"}


def test_undocumented_metric_or_label_is_reported():
    metrics = cd.documented_metrics()
    series, labels = cd.allowed_series(metrics), cd.allowed_labels(metrics)
    assert cd.check_names("x", "rate(ignis_inference_failure_total[5m])", series, labels) == []
    assert cd.check_names("x", "rate(ignis_inference_failures_total[5m])", series, labels)
    assert cd.check_names("x", "ignis_batch_size > 1", series, labels), "a histogram is only queried via _bucket/_sum/_count"
    assert cd.check_names("x", 'ignis_model_ready{modle="a"}', series, labels)


@needs_promtool
def test_dashboard_query_that_does_not_parse_is_reported(tmp_path, monkeypatch):
    dash = json.loads(cd.DASHBOARD.read_text())
    panel = next(p for p in dash["panels"] if p.get("targets"))
    panel["targets"][0]["expr"] = "sum(rate(ignis_request_duration_seconds_count[5m]"
    broken = tmp_path / "dashboard.json"
    broken.write_text(json.dumps(dash))
    monkeypatch.setattr(cd, "DASHBOARD", broken)
    assert cd.check_dashboard_promql()


def test_dockerignore_matching():
    patterns = ["build", "build-*", "**/__pycache__", ".git"]
    assert cd.dockerignored("build/ignis", patterns)
    assert cd.dockerignored("build-asan", patterns)
    assert cd.dockerignored("python/ignis/__pycache__/x.pyc", patterns)
    assert not cd.dockerignored("tools/build.sh", patterns)
    assert not cd.dockerignored("src/serve/metrics.cc", patterns)
