#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the deployment files that need neither Docker nor a cluster: the Grafana dashboard,
the YAML of Prometheus/KServe/Kubernetes, the Dockerfile, and that every metric and label the
rules, dashboard and autoscaling files use is documented in docs/deploy.md.

    python3 deploy/check_deploy.py          (deploy/check.sh also runs the promtool checks)

Each check_* function returns a list of problems; tests/serve/test_deploy_files.py calls them.
"""

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parent
ROOT = DEPLOY.parent
DOCS = ROOT / "docs" / "deploy.md"
ALERTS = DEPLOY / "prometheus" / "ignis_alerts.yml"
DASHBOARD = DEPLOY / "grafana" / "ignis_dashboard.json"
DOCKERFILE = DEPLOY / "Dockerfile"
DOCKERIGNORE = DEPLOY / "Dockerfile.dockerignore"

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
# Labels Prometheus adds (job, instance), the histogram bucket label, and the ones the
# Kubernetes scrape configuration attaches.
EXTRA_LABELS = {"job", "instance", "le", "namespace", "pod", "inferenceservice", "__name__"}
PROMQL_KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
                   "group_right", "bool", "offset", "inf", "nan", "atan2"}
GRAFANA_BUILTINS = {"__rate_interval", "__interval", "__interval_ms", "__range", "__range_s",
                    "__range_ms", "__all", "__name", "__from", "__to"}


# ---- the documented metrics ---------------------------------------------------------------

def documented_metrics(docs=DOCS):
    """{name: (type, {labels})} from the metric tables in docs/deploy.md: rows whose first cell
    is a backticked metric name and whose second cell is counter, gauge or histogram."""
    metrics = {}
    row = re.compile(r"^\|\s*`([a-zA-Z_:][a-zA-Z0-9_:]*)`\s*\|\s*(counter|gauge|histogram)\s*\|([^|]*)\|")
    for line in docs.read_text().splitlines():
        m = row.match(line)
        if m:
            labels = {x.strip() for x in m.group(3).split(",") if re.fullmatch(r"\s*[a-z_]+\s*", x)}
            metrics[m.group(1)] = (m.group(2), labels)
    return metrics


def allowed_series(metrics):
    """Names a query may select: counters and gauges as named, histograms only through their
    _bucket/_sum/_count series."""
    names = set()
    for name, (kind, _) in metrics.items():
        if kind == "histogram":
            names.update(name + s for s in HISTOGRAM_SUFFIXES)
        else:
            names.add(name)
    return names


def allowed_labels(metrics):
    labels = set(EXTRA_LABELS)
    for _, (_, ls) in metrics.items():
        labels |= ls
    return labels


# ---- a small PromQL scanner ---------------------------------------------------------------

def promql_names(expr):
    """(metric names, label names) referenced by a PromQL expression. Grafana variables are
    treated as opaque values. Not a full parser: promtool checks the syntax."""
    labels = set()
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)

    def take_matchers(m):
        for name in re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", m.group(1)):
            labels.add(name)
        return " "
    s = re.sub(r"\{([^{}]*)\}", take_matchers, s)
    s = re.sub(r"\[[^\]]*\]", " ", s)

    def take_grouping(m):
        labels.update(x.strip() for x in m.group(2).split(",") if x.strip())
        return " "
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)", take_grouping, s)
    s = re.sub(r"\$\{?[a-zA-Z_][a-zA-Z0-9_]*\}?", " ", s)
    names = set()
    for m in re.finditer(r"(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", s):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in PROMQL_KEYWORDS:
            continue
        names.add(word)
    return names, labels


def check_names(where, expr, series, labels):
    problems = []
    names, used_labels = promql_names(expr)
    for n in sorted(names - series):
        problems.append(f"{where}: metric '{n}' is not in the metric tables of docs/deploy.md")
    for lab in sorted(used_labels - labels):
        problems.append(f"{where}: label '{lab}' is not a documented label")
    return problems


# ---- what the files query -----------------------------------------------------------------

def alert_exprs(path=ALERTS):
    doc = yaml.safe_load(path.read_text())
    for group in doc["groups"]:
        for rule in group["rules"]:
            yield f"{path.name}: {rule.get('alert') or rule.get('record')}", rule["expr"]


def dashboard_exprs(dash):
    """(where, expr, is_variable) for every panel target and query variable."""
    def walk(panels):
        for p in panels:
            yield p
            yield from walk(p.get("panels", []))
    for p in walk(dash.get("panels", [])):
        for t in p.get("targets", []):
            if "expr" in t:
                yield f"panel '{p.get('title')}' ({t.get('refId')})", t["expr"], False
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v["query"]["query"] if isinstance(v.get("query"), dict) else v.get("query")
            yield f"variable '{v['name']}'", q, True


def substitute_grafana(expr):
    """A Grafana query made plain PromQL, so promtool can parse it."""
    expr = expr.replace("$__rate_interval", "1m").replace("$__interval", "1m").replace("$__range", "1h")
    return re.sub(r"\$\{?[a-zA-Z_][a-zA-Z0-9_]*\}?", ".*", expr)


def label_values_parts(query):
    """label_values(expr, label) -> (expr, label); label_values(label) -> (None, label)."""
    m = re.fullmatch(r"\s*label_values\(\s*(?:(.*),\s*)?([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*", query, re.S)
    return (m.group(1), m.group(2)) if m else (query, None)


def autoscaling_queries():
    """(where, expr) from the prometheus-adapter rules, with its templates filled in, and the
    HPA's pods metrics (bare metric names)."""
    out = []
    adapter = yaml.safe_load((DEPLOY / "kubernetes" / "prometheus_adapter_rules.yaml").read_text())
    config = yaml.safe_load(adapter["data"]["config.yaml"])
    for i, rule in enumerate(config["rules"]):
        out.append((f"prometheus_adapter_rules.yaml rule {i} seriesQuery", rule["seriesQuery"]))
        series = re.match(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)", rule["seriesQuery"]).group(1)
        q = (rule["metricsQuery"].replace("<<.Series>>", series).replace("<<.LabelMatchers>>", 'pod="x"')
             .replace("<<.GroupBy>>", "pod"))
        out.append((f"prometheus_adapter_rules.yaml rule {i} metricsQuery", q))
        out.append((f"prometheus_adapter_rules.yaml rule {i} name", rule["name"]["as"]))
    hpa = yaml.safe_load((DEPLOY / "kubernetes" / "hpa.yaml").read_text())
    for m in hpa["spec"]["metrics"]:
        if m["type"] == "Pods":
            out.append(("hpa.yaml pods metric", m["pods"]["metric"]["name"]))
    return out


# ---- checks -------------------------------------------------------------------------------

def check_metric_names():
    metrics = documented_metrics()
    problems = []
    if len(metrics) < 19:
        problems.append(f"docs/deploy.md: found only {len(metrics)} documented metrics; the tables are broken")
    series, labels = allowed_series(metrics), allowed_labels(metrics)
    for where, expr in alert_exprs():
        problems += check_names(where, expr, series, labels)
    dash = json.loads(DASHBOARD.read_text())
    for where, expr, is_var in dashboard_exprs(dash):
        if is_var:
            expr, label = label_values_parts(expr)
            if label and label not in labels:
                problems.append(f"dashboard {where}: label '{label}' is not a documented label")
            if expr is None:
                continue
        problems += check_names(f"dashboard {where}", expr, series, labels)
    for where, expr in autoscaling_queries():
        problems += check_names(where, expr, series, labels)
    return problems


def check_dashboard():
    problems = []
    try:
        dash = json.loads(DASHBOARD.read_text())
    except json.JSONDecodeError as e:
        return [f"{DASHBOARD.name}: invalid JSON: {e}"]
    for key in ("title", "uid", "panels", "templating", "schemaVersion"):
        if key not in dash:
            problems.append(f"{DASHBOARD.name}: missing '{key}'")
    variables = {v["name"] for v in dash.get("templating", {}).get("list", [])}
    for needed in ("datasource", "model", "version"):
        if needed not in variables:
            problems.append(f"{DASHBOARD.name}: no template variable '{needed}'")
    ids = [p.get("id") for p in dash.get("panels", [])]
    if len(ids) != len(set(ids)) or None in ids:
        problems.append(f"{DASHBOARD.name}: panel ids missing or not unique")
    text = json.dumps(dash)
    for ref in sorted(set(re.findall(r"\$\{?([a-zA-Z_][a-zA-Z0-9_]*)", text))):
        if ref not in variables and ref not in GRAFANA_BUILTINS:
            problems.append(f"{DASHBOARD.name}: '${ref}' is not a template variable")
    for p in dash.get("panels", []):
        if p.get("type") != "row" and not p.get("targets"):
            problems.append(f"{DASHBOARD.name}: panel '{p.get('title')}' has no queries")
        if "gridPos" not in p:
            problems.append(f"{DASHBOARD.name}: panel '{p.get('title')}' has no gridPos")
    return problems


def check_dashboard_promql(promtool=None):
    """Every dashboard query, with Grafana's variables filled in, parsed by promtool as the
    expression of a recording rule. Returns None when promtool is not installed."""
    promtool = promtool or shutil.which("promtool")
    if not promtool:
        return None
    dash = json.loads(DASHBOARD.read_text())
    rules, wheres = [], []
    for where, expr, is_var in dashboard_exprs(dash):
        if is_var:
            expr, _ = label_values_parts(expr)
            if expr is None:
                continue
        rules.append({"record": f"dashboard:query_{len(rules)}", "expr": substitute_grafana(expr)})
        wheres.append(where)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dashboard_queries.yml"
        path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
        r = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True)
    if r.returncode == 0:
        return []
    out = r.stdout + r.stderr
    problems = [f"dashboard query does not parse: {line.strip()}" for line in out.splitlines()
                if "dashboard:query_" in line or "parse error" in line]
    for i, where in enumerate(wheres):
        out = out.replace(f"dashboard:query_{i}", where)
    return problems or [f"promtool rejected the dashboard queries:\n{out}"]


def check_kubernetes_scrape_config(promtool=None):
    """promtool check config on prometheus-kubernetes.yml. Debian builds Prometheus without
    Kubernetes discovery, so when promtool rejects kubernetes_sd_configs, a copy whose
    discovery is replaced by a static target is checked instead (relabelling and the rest
    stay as they are). Returns None when promtool is not installed."""
    promtool = promtool or shutil.which("promtool")
    if not promtool:
        return None
    src = DEPLOY / "prometheus" / "prometheus-kubernetes.yml"
    r = subprocess.run([promtool, "check", "config", src.name], cwd=src.parent, capture_output=True, text=True)
    if r.returncode == 0:
        return []
    if "field kubernetes_sd_configs not found" not in r.stdout + r.stderr:
        return [f"{src.name}: {(r.stdout + r.stderr).strip()}"]
    config = yaml.safe_load(src.read_text())
    for job in config.get("scrape_configs", []):
        if job.pop("kubernetes_sd_configs", None) is not None:
            job["static_configs"] = [{"targets": ["127.0.0.1:8000"]}]
    with tempfile.TemporaryDirectory() as tmp:
        for rules in config.get("rule_files", []):
            shutil.copy(src.parent / rules, Path(tmp) / rules)
        (Path(tmp) / src.name).write_text(yaml.safe_dump(config))
        r = subprocess.run([promtool, "check", "config", src.name], cwd=tmp, capture_output=True, text=True)
    return [] if r.returncode == 0 else [f"{src.name} (static copy): {(r.stdout + r.stderr).strip()}"]


def yaml_files():
    return sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yml", ".yaml"))


def check_yaml():
    problems = []
    for path in yaml_files():
        try:
            docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        except yaml.YAMLError as e:
            problems.append(f"{path.relative_to(ROOT)}: invalid YAML: {e}")
            continue
        if not docs:
            problems.append(f"{path.relative_to(ROOT)}: empty")
        if path.parent.name in ("kserve", "kubernetes"):
            for d in docs:
                if not {"apiVersion", "kind", "metadata"} <= set(d):
                    problems.append(f"{path.relative_to(ROOT)}: a document lacks apiVersion/kind/metadata")
    return problems


def check_kserve():
    problems = []
    rt = yaml.safe_load((DEPLOY / "kserve" / "cluster_serving_runtime.yaml").read_text())
    isvc = yaml.safe_load((DEPLOY / "kserve" / "inference_service.yaml").read_text())

    def need(cond, msg):
        if not cond:
            problems.append(msg)
    need(rt.get("kind") == "ClusterServingRuntime", "runtime: kind must be ClusterServingRuntime")
    need(rt["metadata"].get("name") == "ignis-serve", "runtime: name must be ignis-serve")
    spec = rt.get("spec", {})
    need(any(f.get("name") == "onnx" for f in spec.get("supportedModelFormats", [])), "runtime: no onnx model format")
    need({"v2", "grpc-v2"} <= set(spec.get("protocolVersions", [])), "runtime: protocolVersions must list v2 and grpc-v2")
    ann = spec.get("annotations", {})
    need(ann.get("prometheus.kserve.io/path") == "/metrics" and "prometheus.kserve.io/port" in ann,
         "runtime: prometheus.kserve.io/port and /path annotations missing")
    c = spec.get("containers", [{}])[0]
    args = c.get("args", [])
    for a in ("--model-repository=/mnt/models", "--http-port=8080", "--grpc-port=9000", "--host=0.0.0.0"):
        need(a in args, f"runtime: container args lack {a}")
    need(ann.get("prometheus.kserve.io/port") == "8080", "runtime: metrics port must be the HTTP port 8080")
    for probe, path in (("readinessProbe", "/v2/health/ready"), ("livenessProbe", "/v2/health/live")):
        need(c.get(probe, {}).get("httpGet", {}).get("path") == path, f"runtime: {probe} must GET {path}")
    need(isvc.get("kind") == "InferenceService", "inference service: kind must be InferenceService")
    model = isvc.get("spec", {}).get("predictor", {}).get("model", {})
    need(model.get("runtime") == "ignis-serve", "inference service: runtime must be ignis-serve")
    need(model.get("modelFormat", {}).get("name") == "onnx", "inference service: modelFormat must be onnx")
    need("storageUri" in model, "inference service: no storageUri")
    return problems


def dockerfile_instructions(text):
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    lines, cur = [], ""
    for raw in text.splitlines():
        s = raw.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        if s.startswith("#"):
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        lines.append(cur)
        cur = ""
    out = []
    for line in lines:
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def dockerignored(rel, patterns):
    """Whether a context path is excluded: a pattern excludes the path it matches and all
    that lies below it. Exceptions (!pattern) are not used by this project."""
    parts = rel.strip("/").split("/")
    prefixes = ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatch(p, pat.strip("/")) for pat in patterns if not pat.startswith("!") for p in prefixes)


def check_dockerfile():
    problems = []
    ins = dockerfile_instructions(DOCKERFILE.read_text())
    froms = [a for i, a in ins if i == "FROM"]
    if not froms or not froms[0].startswith("debian:bookworm ") and froms[0] != "debian:bookworm":
        problems.append("Dockerfile: the build stage must start FROM debian:bookworm")
    if not froms or not froms[-1].startswith("debian:bookworm-slim"):
        problems.append("Dockerfile: the runtime stage must be FROM debian:bookworm-slim")
    runs = " ".join(a for i, a in ins if i == "RUN")
    for needed in ("bash tools/setup.sh", "tools/build.sh"):
        if needed not in runs:
            problems.append(f"Dockerfile: no RUN of {needed}")
    last_stage = ins[max(k for k, (i, _) in enumerate(ins) if i == "FROM"):]
    users = [a for i, a in last_stage if i == "USER"]
    if not users or users[-1].split(":")[0] in ("root", "0"):
        problems.append("Dockerfile: the runtime stage must switch to a non-root USER")
    expose = " ".join(a for i, a in last_stage if i == "EXPOSE").split()
    if not {"8000", "8001"} <= set(expose):
        problems.append("Dockerfile: must EXPOSE 8000 and 8001")
    health = [a for i, a in last_stage if i == "HEALTHCHECK"]
    if not health:
        problems.append("Dockerfile: no HEALTHCHECK")
    elif "ignis-healthcheck" in health[0]:
        script = (DEPLOY / "healthcheck.sh").read_text()
        if "/v2/health/ready" not in script:
            problems.append("healthcheck.sh: does not ask /v2/health/ready")
    elif "/v2/health/ready" not in health[0]:
        problems.append("Dockerfile: HEALTHCHECK does not ask /v2/health/ready")
    entry = [a for i, a in last_stage if i == "ENTRYPOINT"]
    want = ["/usr/local/bin/ignis", "serve", "--model-repository", "/models", "--host", "0.0.0.0"]
    if not entry or json.loads(entry[-1]) != want:
        problems.append(f"Dockerfile: ENTRYPOINT must be {json.dumps(want)}")
    patterns = [l.strip() for l in DOCKERIGNORE.read_text().splitlines() if l.strip() and not l.startswith("#")]
    for i, a in ins:
        if i not in ("COPY", "ADD") or "--from=" in a:
            continue
        parts = [p for p in a.split() if not p.startswith("--")]
        for src in parts[:-1]:
            if src == ".":
                continue
            if not (ROOT / src).exists():
                problems.append(f"Dockerfile: COPY source {src} does not exist")
            elif dockerignored(src, patterns):
                problems.append(f"Dockerfile: COPY source {src} is excluded by Dockerfile.dockerignore")
    for must_ship in ("tools/setup.sh", "tools/build.sh", "CMakeLists.txt", "src", "include", "deploy/runtime_packages.sh"):
        if dockerignored(must_ship, patterns):
            problems.append(f"Dockerfile.dockerignore: excludes {must_ship}, which the build needs")
    return problems


def check_scripts():
    problems = []
    for sh in sorted(DEPLOY.glob("*.sh")):
        r = subprocess.run(["bash", "-n", str(sh)], capture_output=True, text=True)
        if r.returncode:
            problems.append(f"{sh.name}: {r.stderr.strip()}")
        if not os.access(sh, os.X_OK):
            problems.append(f"{sh.name}: not executable")
    return problems


CHECKS = {
    "dashboard": check_dashboard,
    "dashboard queries (promtool)": check_dashboard_promql,
    "yaml": check_yaml,
    "kubernetes scrape config (promtool)": check_kubernetes_scrape_config,
    "kserve": check_kserve,
    "dockerfile": check_dockerfile,
    "scripts": check_scripts,
    "metric names": check_metric_names,
}


def main():
    failed = False
    for name, fn in CHECKS.items():
        problems = fn()
        if problems is None:
            print(f"skipped  {name} (promtool not installed)")
        elif problems:
            failed = True
            print(f"FAILED   {name}")
            for p in problems:
                print(f"  - {p}")
        else:
            print(f"ok       {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
