#!/usr/bin/env bash
# Validates deploy/ without Docker or a cluster: the alert rules (syntax and promtool unit
# tests), the Prometheus configurations, then deploy/check_deploy.py (dashboard JSON and its
# PromQL, YAML, KServe/Kubernetes fields, Dockerfile, documented metric names).
# Needs promtool (Debian package prometheus) and python3 with PyYAML (installed with pip if
# missing).
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}

command -v promtool > /dev/null || { echo "check: promtool not found (apt-get install prometheus)" >&2; exit 1; }
if ! "$PY" -c "import yaml" 2> /dev/null; then
  echo "check: installing pyyaml for $($PY --version)"
  "$PY" -m pip install -q pyyaml
fi

echo "== promtool check rules"
promtool check rules prometheus/ignis_alerts.yml
echo "== promtool test rules"
(cd prometheus && promtool test rules ignis_alerts_test.yml)
echo "== promtool check config"
(cd prometheus && promtool check config prometheus.yml)
# prometheus-kubernetes.yml is checked by check_deploy.py (Debian's promtool lacks Kubernetes
# discovery, so it checks a copy with static targets instead).
echo "== check_deploy.py"
"$PY" check_deploy.py
echo "check: all deploy files are valid"
