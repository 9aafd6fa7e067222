#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Serving benchmark: `ignis serve` against MLServer + onnxruntime, same models, same inputs.

    python3 bench/serve/run.py [--models digits_cnn mobilenet_v2 minilm] [--concurrency 1 4 16]
                               [--seconds 8] [--rounds 3] [--threads 2] [--mlserver PATH]
                               [--json OUT.json] [--quick]

Each round starts one server at a time (ignis, then MLServer, the order alternating between
rounds), measures every (model, protocol, concurrency) case against it, and stops it, so the
two never share the CPU. Reported per case: the median over rounds of throughput and of the
p50 / p99 latency. Load generators run on the same machine:
  - HTTP: Debian's `wrk` with a Lua script posting a fixed KServe v2 body (binary tensor
    extension, or JSON) over keep-alive connections, one per concurrent client;
  - gRPC: a closed-loop C++ driver (build/ignis_grpc_load, bench/serve/grpc_load.cc): one
    thread and channel per concurrent client sending one serialized ModelInferRequest (made
    with tritonclient's protobuf classes) and timing each call; `--python-grpc` uses
    bench/serve/grpc_load.py instead (tritonclient.grpc clients in up to 4 processes), whose
    own cost per call (~0.2 ms) hides the server's.
MLServer 1.7 has no binary tensor extension, so it is measured over JSON and gRPC; ignis also
over binary HTTP. `in-process` is `ignis bench` on the same input, to show the server's
overhead (p50 over the wire minus p50 in process). That difference includes the load
generator and the loopback TCP stack, so the script also times a null HTTP server (the Beast
server of bench/serve/http_choice, answering a fixed body; built into build/http_choice) with
the same request at concurrency 1, each round: the floor any HTTP server shows here. Models come from tools/make_zoo.py
(models/NAME.onnx + NAME.json); inputs from tools/make_inputs.py with seed 0.

MLServer lives in its own virtual environment (its pins clash with the project's packages):
`--mlserver` names its `mlserver` executable; without it the script creates
build/mlserver-venv with `pip install mlserver "uvloop<0.21" onnxruntime` on first use
(MLServer 1.7.1's inference workers fail to start with uvloop 0.23: "no current event loop"). The MLServer model
is a few-line custom runtime over onnxruntime (bench/serve/mlserver_runtime.py) with
intra_op_num_threads = --threads, MLServer's defaults otherwise.
"""

import argparse
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from make_inputs import make_inputs  # noqa: E402

import numpy as np  # noqa: E402

KSERVE_DTYPE = {"float32": "FP32", "int64": "INT64", "int32": "INT32", "float16": "FP16", "float64": "FP64",
                "uint8": "UINT8", "int8": "INT8", "bool": "BOOL"}


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, proc, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before becoming ready")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/health/ready", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"server on port {port} not ready after {timeout} s")


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------- request bodies


def kserve_json(feeds):
    return json.dumps({"inputs": [{"name": n, "shape": list(a.shape), "datatype": KSERVE_DTYPE[str(a.dtype)],
                                   "data": a.ravel().tolist()} for n, a in feeds.items()]}).encode()


def kserve_binary(feeds, outputs):
    header = json.dumps({
        "inputs": [{"name": n, "shape": list(a.shape), "datatype": KSERVE_DTYPE[str(a.dtype)],
                    "parameters": {"binary_data_size": a.nbytes}} for n, a in feeds.items()],
        "outputs": [{"name": o, "parameters": {"binary_data": True}} for o in outputs]}).encode()
    return header, header + b"".join(np.ascontiguousarray(a).tobytes() for a in feeds.values())


def wrk_script(path, body_path, headers):
    lines = [f'local f = io.open("{body_path}", "rb")', "local body = f:read('*all')", "f:close()",
             'wrk.method = "POST"', "wrk.body = body"]
    for k, v in headers.items():
        lines.append(f'wrk.headers["{k}"] = "{v}"')
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def parse_duration(s):
    m = re.match(r"([\d.]+)(us|ms|s|m)$", s)
    if not m:
        raise ValueError(f"unreadable wrk duration '{s}'")
    return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}[m.group(2)]


def run_wrk(url, script, conns, seconds, attempts=2):
    for attempt in range(attempts):
        out = subprocess.run(["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency", "-s", script, url],
                             capture_output=True, text=True).stdout
        try:
            return parse_wrk(out)
        except (AttributeError, ValueError) as e:
            print(f"wrk output unreadable ({e}); attempt {attempt + 1} of {attempts}:\n{out}", file=sys.stderr)
    return None


def parse_wrk(out):
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = parse_duration(re.search(r"\s50%\s+(\S+)", out).group(1))
    p99 = parse_duration(re.search(r"\s99%\s+(\S+)", out).group(1))
    errors = 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        errors += int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errors += sum(int(x) for x in m.groups())
    return {"throughput": rps, "p50_ms": p50, "p99_ms": p99, "errors": errors}


def write_grpc_request(path, model, feeds):
    import tritonclient.grpc as tg
    from tritonclient.grpc import _utils
    inputs = []
    for name, a in feeds.items():
        i = tg.InferInput(name, list(a.shape), KSERVE_DTYPE[str(a.dtype)])
        i.set_data_from_numpy(a)
        inputs.append(i)
    req = _utils._get_inference_request(model_name=model, inputs=inputs, model_version="", request_id="",
                                        outputs=None, sequence_id=0, sequence_start=False, sequence_end=False,
                                        priority=0, timeout=None, parameters=None)
    with open(path, "wb") as f:
        f.write(req.SerializeToString())


def run_grpc_driver(cpp_driver, port, requests, conns, seconds, extra=()):
    """build/ignis_grpc_load on `requests` (a serialized ModelInferRequest, or a folder of them);
    `extra`: its options (--rate R, --seed N). Returns its JSON line as a dict."""
    out = subprocess.run([cpp_driver, f"127.0.0.1:{port}", requests, str(conns), str(seconds), *extra],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_grpc(port, model, feeds_path, conns, seconds, cpp_driver=None):
    if cpp_driver:
        return run_grpc_driver(cpp_driver, port, feeds_path[:-4] + ".grpc.bin", conns, seconds)
    out = subprocess.run([sys.executable, os.path.join(HERE, "grpc_load.py"), "--url", f"127.0.0.1:{port}",
                          "--model", model, "--inputs", feeds_path, "--concurrency", str(conns),
                          "--seconds", str(seconds)], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------- servers


def start_ignis(binary, repo, threads, log):
    http, grpc = free_port(), free_port()
    proc = subprocess.Popen([binary, "serve", "--model-repository", repo, "--http-port", str(http),
                             "--grpc-port", str(grpc), "--threads", str(threads)], stdout=log, stderr=log)
    wait_ready(http, proc)
    return proc, http, grpc


def start_mlserver(mlserver, models_dir, threads, log):
    http, grpc, metrics = free_port(), free_port(), free_port()
    with open(os.path.join(models_dir, "settings.json"), "w") as f:
        json.dump({"http_port": http, "grpc_port": grpc, "metrics_port": metrics, "host": "127.0.0.1"}, f)
    env = dict(os.environ, IGNIS_BENCH_ORT_THREADS=str(threads), PYTHONPATH=HERE)
    proc = subprocess.Popen([mlserver, "start", models_dir], stdout=log, stderr=log, env=env, cwd=models_dir)
    wait_ready(http, proc, timeout=180)
    return proc, http, grpc


def build_null_server():
    build = os.path.join(ROOT, "build", "http_choice")
    exe = os.path.join(build, "beast_server")
    if not os.path.exists(exe):
        src = os.path.join(HERE, "http_choice")
        r = subprocess.run(["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release"], capture_output=True)
        if r.returncode == 0:
            subprocess.run(["cmake", "--build", build, "--target", "beast_server", "-j2"], capture_output=True)
    return exe if os.path.exists(exe) else None


def ensure_mlserver(path):
    if path:
        return path
    venv = os.path.join(ROOT, "build", "mlserver-venv")
    exe = os.path.join(venv, "bin", "mlserver")
    if not os.path.exists(exe):
        print(f"creating {venv} (pip install mlserver onnxruntime)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "mlserver", "uvloop<0.21", "onnxruntime", "numpy"], check=True)
    return exe


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["digits_cnn", "mobilenet_v2", "minilm"])
    ap.add_argument("--concurrency", nargs="+", type=int, default=[1, 4, 16])
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ignis", default=os.path.join(ROOT, "build", "ignis"))
    ap.add_argument("--mlserver", help="the mlserver executable (default: build/mlserver-venv, created on demand)")
    ap.add_argument("--no-mlserver", action="store_true", help="measure ignis only")
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--quick", action="store_true", help="1 round of 2 s, concurrency 1 and 4 (a smoke run)")
    ap.add_argument("--python-grpc", action="store_true", help="drive gRPC with tritonclient instead of the C++ driver")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.seconds, args.concurrency = 1, 2, [1, 4]
    seconds = max(1, int(round(args.seconds)))
    if not shutil.which("wrk"):
        sys.exit("bench/serve: wrk is not installed (apt-get install wrk)")
    mlserver = None if args.no_mlserver else ensure_mlserver(args.mlserver)
    cpp_driver = os.path.join(os.path.dirname(args.ignis), "ignis_grpc_load")
    if args.python_grpc or not os.path.exists(cpp_driver):
        cpp_driver = None

    work = tempfile.mkdtemp(prefix="ignis-serve-bench-")
    repo = os.path.join(work, "repo")
    ml_models = os.path.join(work, "mlserver")
    cases = []  # (model, feeds path, binary script, json script, outputs)
    for name in args.models:
        onnx_path = os.path.join(ROOT, "models", f"{name}.onnx")
        if name == "digits_cnn" and not os.path.exists(onnx_path):
            onnx_path = os.path.join(ROOT, "assets", "digits_cnn.onnx")
        spec_path = os.path.join(ROOT, "models", f"{name}.json")
        if not os.path.exists(onnx_path):
            sys.exit(f"bench/serve: {onnx_path} is missing; run /usr/bin/python3 tools/make_zoo.py --out models")
        if os.path.exists(spec_path):
            spec = json.load(open(spec_path))
        else:  # the built-in digits CNN
            spec = {"inputs": [{"name": "input", "dtype": "float32", "shape": [1, 1, 8, 8]}]}
        feeds = make_inputs(spec, seed=0)
        feeds = {k: v[:1] if v.ndim and v.shape[0] > 1 else v for k, v in feeds.items()}
        os.makedirs(os.path.join(repo, name, "1"))
        shutil.copy(onnx_path, os.path.join(repo, name, "1", "model.onnx"))
        md = os.path.join(ml_models, name)
        os.makedirs(md)
        shutil.copy(onnx_path, os.path.join(md, "model.onnx"))
        with open(os.path.join(md, "model-settings.json"), "w") as f:
            json.dump({"name": name, "implementation": "mlserver_runtime.OnnxRuntimeModel",
                       "parameters": {"uri": "./model.onnx"}}, f)
        import onnx
        outputs = [o.name for o in onnx.load(onnx_path, load_external_data=False).graph.output]
        feeds_path = os.path.join(work, f"{name}.npz")
        np.savez(feeds_path, **feeds)
        write_grpc_request(feeds_path[:-4] + ".grpc.bin", name, feeds)
        header, binary = kserve_binary(feeds, outputs)
        for kind, body, headers in (
                ("binary", binary, {"Inference-Header-Content-Length": str(len(header)),
                                    "Content-Type": "application/octet-stream"}),
                ("json", kserve_json(feeds), {"Content-Type": "application/json"})):
            bpath = os.path.join(work, f"{name}.{kind}.body")
            with open(bpath, "wb") as f:
                f.write(body)
            wrk_script(os.path.join(work, f"{name}.{kind}.lua"), bpath, headers)
        bench_cmd = [args.ignis, "bench", onnx_path, "--json", "--threads", str(args.threads), "--seconds", "2"]
        for k in feeds:
            p = os.path.join(work, f"{name}.{k}.npy")
            np.save(p, feeds[k])
            bench_cmd += ["--input", f"{k}={p}"]
        cases.append((name, feeds_path, bench_cmd))

    null_server = build_null_server()
    null_script = os.path.join(work, f"{cases[0][0]}.binary.lua")
    results = {}  # (server, model, protocol, conc) -> list of dicts
    log = open(os.path.join(work, "servers.log"), "w")
    servers = ["ignis"] + ([] if mlserver is None else ["mlserver"])
    for rnd in range(args.rounds):
        # The in-process p50 is taken in every round too, so that it sees the same machine.
        for name, _, bench_cmd in cases:
            r = json.loads(subprocess.run(bench_cmd, capture_output=True, text=True, check=True).stdout.strip()
                           .splitlines()[-1])
            results.setdefault(("in-process", name, "-", 1), []).append({"p50_ms": r["latency_ms"]["p50"]})
        if null_server:
            port = free_port()
            proc = subprocess.Popen([null_server, str(port), "1"], stdout=log, stderr=log)
            time.sleep(0.5)
            r = run_wrk(f"http://127.0.0.1:{port}/v2/models/m/infer", null_script, 1, seconds)
            stop(proc)
            if r:
                results.setdefault(("null", "-", "binary", 1), []).append(r)
                print(f"round {rnd + 1} null HTTP server c=1 {r['throughput']:9.1f}/s p50 {r['p50_ms']:8.3f} ms",
                      file=sys.stderr)
        order = servers if rnd % 2 == 0 else servers[::-1]
        for server in order:
            if server == "ignis":
                proc, http, grpc = start_ignis(args.ignis, repo, args.threads, log)
                protocols = ["binary", "json", "grpc"]
            else:
                proc, http, grpc = start_mlserver(mlserver, ml_models, args.threads, log)
                protocols = ["json", "grpc"]
            try:
                for name, feeds_path, _ in cases:
                    url = f"http://127.0.0.1:{http}/v2/models/{name}/infer"
                    for proto in protocols:
                        for c in args.concurrency:
                            # wrk leaves requests queued when it stops (their connections closed);
                            # let the server finish them so they do not delay the next case.
                            time.sleep(1.0)
                            if proto == "grpc":
                                r = run_grpc(grpc, name, feeds_path, c, seconds, cpp_driver)
                            else:
                                r = run_wrk(url, os.path.join(work, f"{name}.{proto}.lua"), c, seconds)
                            if r is None:
                                continue
                            results.setdefault((server, name, proto, c), []).append(r)
                            print(f"round {rnd + 1} {server:8s} {name:13s} {proto:6s} c={c:<3d} "
                                  f"{r['throughput']:9.1f}/s p50 {r['p50_ms']:8.3f} ms p99 {r['p99_ms']:8.3f} ms"
                                  f"{'  errors ' + str(r['errors']) if r['errors'] else ''}", file=sys.stderr)
            finally:
                stop(proc)

    def med(key, field):
        vals = [r[field] for r in results.get(key, [])]
        return statistics.median(vals) if vals else None

    date = time.strftime("%Y-%m-%d")
    print(f"\n## Serving: ignis vs MLServer {('+ onnxruntime') if mlserver else '(not run)'} — {date}, {cpu_model()}, "
          f"{os.cpu_count()} cores, load generator on the same cores, {args.threads} inference threads each, "
          f"median of {args.rounds} round(s) of {seconds} s; gRPC driven by "
          f"{'the C++ driver' if cpp_driver else 'tritonclient.grpc'}\n")
    print("| model | protocol | conc. | ignis req/s | ignis p50 ms | ignis p99 ms | MLServer req/s | MLServer p50 ms "
          "| MLServer p99 ms | throughput x | p99 ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    in_process_p50 = {}
    for name, _, _ in cases:
        in_process = med(("in-process", name, "-", 1), "p50_ms")
        in_process_p50[name] = in_process
        for proto in ["binary", "json", "grpc"]:
            for c in args.concurrency:
                it, i50, i99 = (med(("ignis", name, proto, c), f) for f in ("throughput", "p50_ms", "p99_ms"))
                mt, m50, m99 = (med(("mlserver", name, proto, c), f) for f in ("throughput", "p50_ms", "p99_ms"))
                fmt = lambda v, d=3: "—" if v is None else f"{v:.{d}f}"  # noqa: E731
                ratio_t = f"{it / mt:.2f}" if it and mt else "—"
                ratio_p = f"{i99 / m99:.2f}" if i99 and m99 else "—"
                print(f"| {name} | {'HTTP ' + proto if proto != 'grpc' else 'gRPC'} | {c} | {fmt(it, 0)} | {fmt(i50)} | "
                      f"{fmt(i99)} | {fmt(mt, 0)} | {fmt(m50)} | {fmt(m99)} | {ratio_t} | {ratio_p} |")
                summary.append({"model": name, "protocol": proto, "concurrency": c,
                                "ignis": {"throughput": it, "p50_ms": i50, "p99_ms": i99},
                                "mlserver": {"throughput": mt, "p50_ms": m50, "p99_ms": m99}})
        b50 = med(("ignis", name, "binary", 1), "p50_ms")
        g50 = med(("ignis", name, "grpc", 1), "p50_ms")
        if in_process is not None and b50 is not None:
            over = f"HTTP binary {1000 * (b50 - in_process):.0f} us"
            if g50 is not None:
                over += f", gRPC {1000 * (g50 - in_process):.0f} us"
            print(f"\n{name}: in-process p50 {in_process:.4f} ms; server overhead at concurrency 1 (p50 over the "
                  f"wire minus in process): {over}")
    null50 = med(("null", "-", "binary", 1), "p50_ms")
    if null50 is not None:
        print(f"\nnull HTTP server (fixed answer, same request, concurrency 1): p50 {null50:.3f} ms — the floor of "
              f"the load generator and loopback TCP on this machine")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": date, "cpu": cpu_model(), "threads": args.threads, "rounds": args.rounds,
                       "seconds": seconds, "cases": summary, "null_http_p50_ms": null50,
                       "in_process_p50_ms": in_process_p50}, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
