#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Batching benchmark: `ignis serve` with and without dynamic batching, shape buckets on mixed
sequence lengths, Poisson arrivals, and MLServer + onnxruntime with its adaptive batching, on
the same models and inputs.

    python3 bench/serve/batching.py [--models mobilenet_v2 resnet50 minilm]
        [--concurrency 1 2 4 8 16 32] [--loads 0.3 0.5 0.7 0.9] [--seconds 5] [--rounds 3]
        [--warmup 3] [--threads N] [--protocols grpc [binary json]] [--max-batch 16]
        [--delay-us 500] [--mlserver-batch-time-us 5000] [--config NAME=PBTXT] [--seq N]
        [--json OUT.json] [--no-mlserver] [--quick] [--tune]

Server configurations (the text after `name:` in each model's config.pbtxt; `--config
NAME=TEXT` replaces one, e.g. to try `max_queue_delay_microseconds: auto` later):
  none     max_batch_size only: every request is one engine run
  batch    max_batch_size and dynamic_batching { max_queue_delay_microseconds } (--max-batch,
           --delay-us); batches identical shapes only
  buckets  batch + ignis.shape_buckets "16,32,64,128"
  mlserver MLServer with max_batch_size = --max-batch and max_batch_time =
           --mlserver-batch-time-us (its adaptive batching); the runtime is
           bench/serve/mlserver_runtime.py's, reporting its batch size (mlserver_batch_runtime.py)
The defaults were chosen with --tune and short runs on a shared 2-core machine: a 500 us delay
beat 0 (which never batches at concurrency 2: a request waits only while another runs) and
1000 us at concurrency 2-8; at 16 and above the queue is full and the delay hardly matters.
MLServer dispatches each batch without waiting for the previous one to finish, so a batch holds
only what arrives within max_batch_time: with 500 us its batches stayed at 1 request, with 5 ms
they reached 2-8 at no cost in throughput.

Each round measures `ignis bench` in process at batch 1 and --max-batch (the gain batching
can have inside the engine), then starts one server at a time (the order reversed every other
round), loads each of its request sets for --warmup seconds unmeasured (ignis plans each new
input shape on first use), runs its cases and stops it, so servers never share the CPU. The
load generators share it. Reported: the median over rounds.
  1. Closed loop over --concurrency, none vs batch: gRPC through the C++ driver
     (build/ignis_grpc_load) and, with --protocols binary, wrk over binary HTTP. Each model has
     8 distinct requests (tools/make_inputs.py, seeds 0-7), one picked at random per call.
  2. MiniLM with mixed lengths: 64 requests of lengths uniform in 16..128 (seed 0, attention
     mask of ones), batch (identical shapes only) vs buckets, over gRPC at --mixed-concurrency,
     with the mean fill ratio per bucket from the server's /metrics.
  3. Open loop: Poisson arrivals (the driver's --rate, over 16 channels) at --loads fractions
     of the batch server's capacity: its best closed-loop gRPC throughput in the same round.
     Latency counts from each request's scheduled send time; it is compared with the
     concurrency-1 p50 of `none` over gRPC (what one request costs alone).
  4. Concurrency 16 over gRPC and JSON HTTP: ignis batch vs MLServer.
Every ignis case also reports the mean batch (requests per engine run, from /metrics). In round
1 each batching server answers its request sets sent all at once over gRPC (so batched), and
the answers must equal those to the same requests sent one at a time.

--tune runs only closed-loop gRPC at --tune-concurrency on batch configurations made from
--tune-batches x --tune-delays, and names the best by throughput.
"""

import argparse
import collections
import concurrent.futures
import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as serve_bench  # noqa: E402  (the serving benchmark's helpers: servers, bodies, wrk)
from make_inputs import make_inputs  # noqa: E402  (tools/, on the path since run's import)

import numpy as np  # noqa: E402

ROOT = serve_bench.ROOT
BUCKET_EDGES = "16,32,64,128"
FIXED_REQUESTS = 8
MIXED_REQUESTS = 64
MIXED_LENGTHS = (16, 128)
OPEN_LOOP_CHANNELS = 16
MLSERVER_CONCURRENCY = 16
SEED = 0

# One measurement: `requests` is "fixed" or "mixed"; `load` is None for a closed loop at
# `concurrency`, else the fraction of capacity offered as Poisson arrivals.
Case = collections.namedtuple("Case", "model requests protocol concurrency load", defaults=(None,))


def case_label(case):
    return f"c{case.concurrency}" if case.load is None else f"load{round(100 * case.load)}"


# ---------------------------------------------------------------- configurations and plan


def batch_config(max_batch, delay_us):
    return f"max_batch_size: {max_batch}\ndynamic_batching {{ max_queue_delay_microseconds: {delay_us} }}"


def standard_configs(args):
    batch = batch_config(args.max_batch, args.delay_us)
    buckets = f'{batch}\nparameters {{ key: "ignis.shape_buckets" value {{ string_value: "{BUCKET_EDGES}" }} }}'
    auto = f"max_batch_size: {args.max_batch}\ndynamic_batching {{ max_queue_delay_microseconds: auto }}"
    return {"none": f"max_batch_size: {args.max_batch}", "batch": batch, "buckets": buckets, "auto": auto}


def standard_plan(args, mixed_models):
    """{server configuration: its cases in order}; capacity cases come before open-loop ones."""
    closed = [Case(m, "fixed", p, c) for m in args.models for p in args.protocols for c in args.concurrency]
    plan = {"none": list(closed), "batch": list(closed)}
    mixed = [Case(m, "mixed", "grpc", c) for m in mixed_models for c in args.mixed_concurrency]
    plan["batch"] += mixed
    plan["buckets"] = list(mixed)
    if "grpc" in args.protocols:
        open_loop = [Case(m, "fixed", "grpc", OPEN_LOOP_CHANNELS, f) for m in args.models for f in args.loads]
        plan["batch"] += open_loop
        # The learned delay: its own closed-loop capacity first (the rate is a fraction of it).
        plan["auto"] = [Case(m, "fixed", "grpc", OPEN_LOOP_CHANNELS) for m in args.models] + open_loop
    if args.mlserver:
        versus = [Case(m, "fixed", p, MLSERVER_CONCURRENCY) for m in args.models for p in ("grpc", "json")]
        plan["batch"] += [c for c in versus if c not in plan["batch"]]
        plan["mlserver"] = versus
    return {name: cases for name, cases in plan.items() if cases}


def tune_configs_and_plan(args):
    configs = {f"mb{b}-d{d}": batch_config(b, d) for b in args.tune_batches for d in args.tune_delays}
    cases = [Case(m, "fixed", "grpc", c) for m in args.models for c in args.tune_concurrency]
    return configs, {name: cases for name in configs}


# ---------------------------------------------------------------- requests


# --seq: the sequence extent of the fixed requests (and the in-process runs) of models with a
# sequence axis; None keeps the sidecar's (MiniLM: 128).
SEQUENCE = None


def model_spec(name):
    onnx_path = os.path.join(ROOT, "models", f"{name}.onnx")
    if not os.path.exists(onnx_path):
        sys.exit(f"bench/serve: {onnx_path} is missing; run /usr/bin/python3 tools/make_zoo.py --out models")
    spec = json.load(open(os.path.join(ROOT, "models", f"{name}.json")))
    if SEQUENCE is not None:
        for inp in spec["inputs"]:
            for axis in spec.get("dynamic_axes", {}).get(inp["name"], {}):
                if axis != "0":
                    inp["shape"][int(axis)] = SEQUENCE
                    inp["pad_tail"] = 0
    return onnx_path, spec


def has_sequence_axis(spec):
    """True when some input has a variable extent besides the batch (MiniLM's seq)."""
    return any(set(axes) - {"0"} for axes in spec.get("dynamic_axes", {}).values())


def fixed_feeds(spec):
    return [make_inputs(spec, seed=SEED + i, batch=1) for i in range(FIXED_REQUESTS)]


def mixed_feeds(spec):
    """Requests of one row with lengths uniform in MIXED_LENGTHS and attention masks of ones."""
    rng = np.random.default_rng(SEED)
    lengths = rng.integers(MIXED_LENGTHS[0], MIXED_LENGTHS[1] + 1, size=MIXED_REQUESTS)
    feeds = []
    for i, n in enumerate(lengths):
        inputs = [dict(inp, shape=[1, int(n)], pad_tail=0) for inp in spec["inputs"]]
        feeds.append(make_inputs(inputs, seed=SEED + 100 + i))
    return feeds


def lua_string(s):
    return json.dumps(s)  # a JSON string of printable ASCII is a valid Lua string


def write_wrk_script(path, bodies):
    """A wrk script that POSTs one of `bodies` ([(body file, headers)]), picked at random per
    request from a fixed seed."""
    entries = ",\n".join(
        "  {%s, {%s}}" % (lua_string(p), ", ".join(f"[{lua_string(k)}] = {lua_string(v)}" for k, v in h.items()))
        for p, h in bodies)
    with open(path, "w") as f:
        f.write(f"""-- written by bench/serve/batching.py
local bodies = {{
{entries}
}}
local requests = {{}}
function init(args)
  math.randomseed({SEED + 1})
  for i, b in ipairs(bodies) do
    local f = io.open(b[1], "rb")
    requests[i] = wrk.format("POST", nil, b[2], f:read("*all"))
    f:close()
  end
end
function request()
  return requests[math.random(#requests)]
end
""")


def write_request_set(folder, model, feeds_list, outputs):
    """The same requests three ways: serialized gRPC requests (a folder for the driver), and a
    wrk script each for binary and JSON HTTP. Returns {protocol: path}."""
    grpc_dir = os.path.join(folder, "grpc")
    os.makedirs(grpc_dir)
    bodies = {"binary": [], "json": []}
    for i, feeds in enumerate(feeds_list):
        serve_bench.write_grpc_request(os.path.join(grpc_dir, f"{i:03d}.bin"), model, feeds)
        header, binary = serve_bench.kserve_binary(feeds, outputs)
        forms = {"binary": (binary, {"Inference-Header-Content-Length": str(len(header)),
                                     "Content-Type": "application/octet-stream"}),
                 "json": (serve_bench.kserve_json(feeds), {"Content-Type": "application/json"})}
        for proto, (body, headers) in forms.items():
            path = os.path.join(folder, f"{proto}.{i:03d}.body")
            with open(path, "wb") as f:
                f.write(body)
            bodies[proto].append((path, headers))
    paths = {"grpc": grpc_dir}
    for proto, items in bodies.items():
        paths[proto] = os.path.join(folder, f"{proto}.lua")
        write_wrk_script(paths[proto], items)
    return paths


def prepare_requests(work, models):
    """{(model, "fixed" | "mixed"): paths from write_request_set}, and {model: onnx path}."""
    import onnx
    material, onnx_paths = {}, {}
    for name in models:
        onnx_path, spec = model_spec(name)
        onnx_paths[name] = onnx_path
        outputs = [o.name for o in onnx.load(onnx_path, load_external_data=False).graph.output]
        sets = {"fixed": fixed_feeds(spec)}
        if has_sequence_axis(spec):
            sets["mixed"] = mixed_feeds(spec)
        for set_name, feeds in sets.items():
            material[(name, set_name)] = write_request_set(os.path.join(work, f"{name}.{set_name}"), name, feeds,
                                                           outputs)
    return material, onnx_paths


# ---------------------------------------------------------------- servers


def link_model(onnx_path, folder):
    os.makedirs(folder, exist_ok=True)
    os.symlink(onnx_path, os.path.join(folder, "model.onnx"))


def write_ignis_repo(folder, models, onnx_paths, config_text):
    for name in models:
        link_model(onnx_paths[name], os.path.join(folder, name, "1"))
        with open(os.path.join(folder, name, "config.pbtxt"), "w") as f:
            f.write(f'name: "{name}"\n{config_text}\n')


def write_mlserver_models(folder, models, onnx_paths, max_batch, batch_time_us):
    for name in models:
        link_model(onnx_paths[name], os.path.join(folder, name))
        with open(os.path.join(folder, name, "model-settings.json"), "w") as f:
            json.dump({"name": name, "implementation": "mlserver_batch_runtime.BatchReportingModel",
                       "parameters": {"uri": "./model.onnx"},
                       "max_batch_size": max_batch, "max_batch_time": batch_time_us / 1e6}, f)


def start_server(config, folder, args, log):
    if config == "mlserver":
        return serve_bench.start_mlserver(args.mlserver, folder, args.threads, log)
    return serve_bench.start_ignis(args.ignis, folder, args.threads, log)


def scrape_batching(http_port):
    """The sums and counts of ignis_batch_size and ignis_bucket_fill_ratio from /metrics, keyed
    by (metric, model, bucket) — enough to take means over one case by difference."""
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    totals = {}
    pattern = re.compile(r'^(ignis_batch_size|ignis_bucket_fill_ratio)_(sum|count)\{([^}]*)\} (\S+)$', re.M)
    for metric, part, labels, value in pattern.findall(text):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        key = (metric, labels.get("model"), labels.get("bucket", ""))
        totals.setdefault(key, [0.0, 0.0])[part == "count"] += float(value)
    return totals


def batching_means(before, after, model):
    """Mean requests per engine run, and mean fill ratio per bucket, between two scrapes."""
    result, fill = {"mean_batch": None}, {}
    for (metric, m, bucket), (s1, n1) in after.items():
        s0, n0 = before.get((metric, m, bucket), (0.0, 0.0))
        if m != model or n1 <= n0:
            continue
        mean = (s1 - s0) / (n1 - n0)
        if metric == "ignis_batch_size":
            result["mean_batch"] = mean
        else:
            fill[bucket] = mean
    if fill:
        result["fill"] = fill
    return result


# ---------------------------------------------------------------- checks and measurements


def engine_rows_per_second(args, model, batch):
    """`ignis bench` in process at `batch` rows: how much batching gains inside the engine alone,
    the ceiling for what the server's batcher can gain."""
    onnx_path, spec = model_spec(model)
    cmd = [args.ignis, "bench", onnx_path, "--batch", str(batch), "--threads", str(args.threads), "--seconds", "2",
           "--warmup", "1", "--json"]
    for inp in spec["inputs"]:  # variable extents at the requests' (MiniLM: seq 128, or --seq)
        for axis, name in spec.get("dynamic_axes", {}).get(inp["name"], {}).items():
            if axis != "0":
                cmd += ["--dim", f"{name}={inp['shape'][int(axis)]}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["throughput_per_s"]


# datatype -> (numpy dtype, typed field of InferTensorContents), for answers without raw contents
GRPC_CONTENTS = {"FP32": (np.float32, "fp32_contents"), "FP64": (np.float64, "fp64_contents"),
                 "INT64": (np.int64, "int64_contents"), "INT32": (np.int32, "int_contents")}


def grpc_infer(stub, request_path):
    """{output: (shape, values)} and the answer's parameters, for a serialized request."""
    from tritonclient.grpc import service_pb2
    request = service_pb2.ModelInferRequest()
    with open(request_path, "rb") as f:
        request.ParseFromString(f.read())
    answer = stub.ModelInfer(request, timeout=120)
    outputs = {}
    for i, o in enumerate(answer.outputs):
        dtype, field = GRPC_CONTENTS[o.datatype]
        data = (np.frombuffer(answer.raw_output_contents[i], dtype=dtype) if answer.raw_output_contents
                else np.asarray(getattr(o.contents, field), dtype=dtype))
        outputs[o.name] = (list(o.shape), data.astype(np.float64))
    return outputs, {k: v.int64_param for k, v in answer.parameters.items()}


def check_batched_answers(config, ports, model, request_dir):
    """Answers over gRPC to requests sent all at once (so the server may batch them) against
    answers to the same requests sent one at a time, and how much batching happened: the mean
    batch from /metrics for ignis, the largest `batch_rows` of the MLServer runtime."""
    import grpc
    from tritonclient.grpc import service_pb2_grpc
    paths = [os.path.join(request_dir, n) for n in sorted(os.listdir(request_dir))]
    with grpc.insecure_channel(f"127.0.0.1:{ports[1]}", options=[("grpc.max_receive_message_length", -1)]) as ch:
        stub = service_pb2_grpc.GRPCInferenceServiceStub(ch)
        alone = [grpc_infer(stub, p)[0] for p in paths]
        before = scrape_batching(ports[0]) if config != "mlserver" else None
        with concurrent.futures.ThreadPoolExecutor(len(paths)) as pool:
            together = list(pool.map(lambda p: grpc_infer(stub, p), paths))
    if before is None:
        batched = {"largest_batch": max(params.get("batch_rows", 1) for _, params in together)}
    else:
        batched = {"mean_batch": batching_means(before, scrape_batching(ports[0]), model)["mean_batch"]}
    worst, where = 0.0, ""
    for i, (a, (b, _)) in enumerate(zip(alone, together)):
        for name, (shape, data) in a.items():
            if name not in b or b[name][0] != shape:
                worst, where = math.inf, f"request {i}: output '{name}' shape {b.get(name, [None])[0]}, alone {shape}"
                break
            diff = float(np.max(np.abs(data - b[name][1]))) if data.size else 0.0
            if diff > worst:
                worst, where = diff, f"request {i} output '{name}'"
    return dict(batched, server=config, model=model, requests=len(paths), ok=worst <= 1e-3, max_abs_diff=worst,
                where=where)


def measure(case, ports, paths, args, capacity):
    """One case against the running server; None when it could not be measured."""
    http, grpc = ports
    seconds = args.seconds
    if case.load is not None:
        if not capacity.get(case.model):
            print(f"  {case.model}: no closed-loop gRPC capacity this round; open loop skipped", file=sys.stderr)
            return None
        rate = case.load * capacity[case.model]
        r = serve_bench.run_grpc_driver(args.driver, grpc, paths["grpc"], case.concurrency, seconds,
                                        ["--rate", f"{rate:.3f}", "--seed", str(SEED)])
        return dict(r, capacity=capacity[case.model])
    if case.protocol == "grpc":
        return serve_bench.run_grpc_driver(args.driver, grpc, paths["grpc"], case.concurrency, seconds,
                                           ["--seed", str(SEED)])
    return serve_bench.run_wrk(f"http://127.0.0.1:{http}/v2/models/{case.model}/infer", paths[case.protocol],
                               case.concurrency, seconds)


def warm_up(cases, ports, material, args):
    """Unmeasured closed-loop load on each request set a server will see: ignis plans each new
    input shape (batch size, padded length) on first use, and a fresh server's first seconds
    would otherwise measure planning."""
    if args.warmup <= 0:
        return
    for model, set_name in dict.fromkeys((c.model, c.requests) for c in cases):
        conc = max(c.concurrency for c in cases if (c.model, c.requests) == (model, set_name))
        serve_bench.run_grpc_driver(args.driver, ports[1], material[(model, set_name)]["grpc"], max(conc, 16),
                                    args.warmup, ["--seed", str(SEED + 7)])


def print_case(rnd, config, case, r):
    extra = ""
    if r.get("offered_rate") is not None:
        extra += f" offered {r['offered_rate']:.1f}/s"
    if r.get("mean_batch") is not None:
        extra += f" batch {r['mean_batch']:.2f}"
    if r.get("fill"):
        extra += " fill " + fill_text(r["fill"])
    if r.get("errors"):
        extra += f" errors {r['errors']}"
    print(f"round {rnd + 1} {config:8s} {case.model:12s} {case.requests:5s} {case.protocol:6s} {case_label(case):7s} "
          f"{r['throughput']:8.1f}/s p50 {r['p50_ms']:8.2f} ms p99 {r['p99_ms']:8.2f} ms{extra}", file=sys.stderr)


def run_checks(config, cases, ports, material, checks):
    for model, set_name in sorted({(c.model, c.requests) for c in cases}):
        c = check_batched_answers(config, ports, model, material[(model, set_name)]["grpc"])
        checks.append(dict(c, request_set=set_name))
        batched = (f"largest batch {c['largest_batch']}" if "largest_batch" in c
                   else f"mean batch {fmt(c['mean_batch'], 2)}")
        print(f"check {config} {model} {set_name}: {c['requests']} requests sent together ({batched}) answered "
              f"{'as' if c['ok'] else 'DIFFERENTLY from'} alone (max |diff| {c['max_abs_diff']:.3g} {c['where']})",
              file=sys.stderr)


def run_server_cases(rnd, config, cases, folder, material, args, results, checks, log):
    """Starts the server of `config`, runs its cases into `results`, stops it."""
    proc, http, grpc = start_server(config, folder, args, log)
    capacity = {}  # model -> best closed-loop gRPC throughput on this server in this round
    try:
        if rnd == 0 and config != "none" and not args.tune:
            run_checks(config, cases, (http, grpc), material, checks)
        warm_up(cases, (http, grpc), material, args)
        for case in cases:
            time.sleep(0.5)  # let requests left queued by the previous case finish
            before = scrape_batching(http) if config != "mlserver" else None
            r = measure(case, (http, grpc), material[(case.model, case.requests)], args, capacity)
            if r is None:
                continue
            if before is not None:
                r.update(batching_means(before, scrape_batching(http), case.model))
            if case.load is None and case.protocol == "grpc" and case.requests == "fixed":
                capacity[case.model] = max(capacity.get(case.model, 0), r["throughput"])
            results.setdefault((config, *case), []).append(r)
            print_case(rnd, config, case, r)
    finally:
        serve_bench.stop(proc)


# ---------------------------------------------------------------- report


class Medians:
    """Medians over rounds of each field of each (config, *case) key."""

    def __init__(self, results):
        self.results = results

    def get(self, config, case, field):
        vals = [r[field] for r in self.results.get((config, *case), []) if r.get(field) is not None]
        return statistics.median(vals) if vals else None

    def row(self, config, case, fields=("throughput", "p50_ms", "p99_ms", "mean_batch")):
        return {f: self.get(config, case, f) for f in fields}

    def fill(self, config, case):
        buckets = {b for r in self.results.get((config, *case), []) for b in r.get("fill", {})}
        return {b: statistics.median(r["fill"][b] for r in self.results[(config, *case)] if b in r.get("fill", {}))
                for b in buckets}


def fill_text(fill):
    """{bucket label ("32", or "32x64" for two variable dims): ratio} in bucket order."""
    order = sorted(fill, key=lambda b: [int(x) for x in b.split("x") if x.isdigit()])
    return ", ".join(f"{b}: {fill[b]:.2f}" for b in order)


def fmt(v, digits=1):
    return "—" if v is None else f"{v:.{digits}f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def verdict(ok, text, verdicts):
    verdicts.append(f"{'met' if ok else 'NOT met' if ok is not None else 'not measured'}: {text}")


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()


def protocol_name(p):
    return {"grpc": "gRPC", "binary": "HTTP binary", "json": "HTTP JSON"}[p]


def report_engine(m, args):
    print(f"### In process (ignis bench, {args.threads} threads, MiniLM at seq {SEQUENCE or 128}): rows/s at batch 1 and "
          f"{args.max_batch}\n")
    rows, summary = [], []
    for model in args.models:
        one, full = (m.get("engine", Case(model, "fixed", "in-process", b), "throughput") for b in (1, args.max_batch))
        rows.append([model, fmt(one), fmt(full), fmt(ratio(full, one), 2)])
        summary.append({"model": model, "batch_1_rows_s": one, f"batch_{args.max_batch}_rows_s": full})
    table(["model", "batch 1 rows/s", f"batch {args.max_batch} rows/s", "x"], rows)
    return summary


def report_closed(m, args, verdicts):
    print("### Closed loop: no batching vs dynamic batching\n")
    rows, summary = [], []
    targets = {"mobilenet_v2": 1.4, "minilm": 1.4, "resnet50": 0.95}
    for model in args.models:
        for proto in args.protocols:
            for c in args.concurrency:
                case = Case(model, "fixed", proto, c)
                a, b = m.row("none", case), m.row("batch", case)
                x = ratio(b["throughput"], a["throughput"])
                rows.append([model, protocol_name(proto), str(c), fmt(a["throughput"]), fmt(a["p50_ms"], 2),
                             fmt(a["p99_ms"], 2), fmt(b["throughput"]), fmt(b["p50_ms"], 2), fmt(b["p99_ms"], 2),
                             fmt(b["mean_batch"], 2), fmt(x, 2)])
                summary.append({"model": model, "protocol": proto, "concurrency": c, "none": a, "batch": b,
                                "throughput_x": x})
                if c == 16 and model in targets:
                    t = targets[model]
                    verdict(None if x is None else x >= t,
                            f"{model} {protocol_name(proto)} c16 throughput with batching {fmt(x, 2)}x without "
                            f"({fmt(b['throughput'])} vs {fmt(a['throughput'])} req/s), target >= {t}x", verdicts)
    table(["model", "protocol", "conc.", "no batching req/s", "p50 ms", "p99 ms", "batching req/s", "p50 ms",
           "p99 ms", "mean batch", "throughput x"], rows)
    return summary


def report_mixed(m, args, mixed_models, verdicts):
    print(f"### MiniLM, lengths uniform in {MIXED_LENGTHS[0]}..{MIXED_LENGTHS[1]}: identical shapes only vs shape "
          f"buckets {BUCKET_EDGES} (gRPC)\n")
    rows, summary = [], []
    for model in mixed_models:
        for c in args.mixed_concurrency:
            case = Case(model, "mixed", "grpc", c)
            a, b, fill = m.row("batch", case), m.row("buckets", case), m.fill("buckets", case)
            x = ratio(b["throughput"], a["throughput"])
            rows.append([model, str(c), fmt(a["throughput"]), fmt(a["p50_ms"], 2), fmt(a["p99_ms"], 2),
                         fmt(a["mean_batch"], 2), fmt(b["throughput"]), fmt(b["p50_ms"], 2), fmt(b["p99_ms"], 2),
                         fmt(b["mean_batch"], 2), fmt(x, 2), fill_text(fill) or "—"])
            summary.append({"model": model, "concurrency": c, "identical_shapes": a, "buckets": b, "fill": fill,
                            "throughput_x": x})
            if c == 16:
                ok = None if x is None else x >= 1.5 and b["p99_ms"] <= a["p99_ms"]
                verdict(ok, f"{model} mixed lengths c16: buckets {fmt(x, 2)}x identical-shape throughput "
                            f"({fmt(b['throughput'])} vs {fmt(a['throughput'])} req/s), p99 {fmt(b['p99_ms'], 2)} vs "
                            f"{fmt(a['p99_ms'], 2)} ms; target >= 1.5x at the same or lower p99", verdicts)
    table(["model", "conc.", "identical req/s", "p50 ms", "p99 ms", "mean batch", "buckets req/s", "p50 ms",
           "p99 ms", "mean batch", "throughput x", "fill ratio by bucket"], rows)
    return summary


def report_open(m, args, verdicts):
    print(f"### Open loop, Poisson arrivals over {OPEN_LOOP_CHANNELS} gRPC channels, dynamic batching with a fixed "
          f"delay (`batch`) and the learned one (`auto`); latency from the scheduled send time\n")
    rows, summary = [], []
    configs = [c for c in ("batch", "auto") if c in args.plan_configs]
    for model in args.models:
        alone = m.get("none", Case(model, "fixed", "grpc", 1), "p50_ms")
        for config in configs:
            for load in args.loads:
                case = Case(model, "fixed", "grpc", OPEN_LOOP_CHANNELS, load)
                r = m.row(config, case, ("capacity", "offered_rate", "throughput", "p50_ms", "p99_ms", "mean_batch"))
                rel = ratio(r["p99_ms"], alone)
                rows.append([model, config, f"{round(100 * load)}%", fmt(r["capacity"]), fmt(r["offered_rate"]),
                             fmt(r["throughput"]), fmt(r["p50_ms"], 2), fmt(r["p99_ms"], 2), fmt(r["mean_batch"], 2),
                             fmt(alone, 2), fmt(rel, 2)])
                summary.append(dict(r, model=model, config=config, load=load, c1_p50_ms=alone, p99_over_c1_p50=rel))
                if abs(load - 0.7) < 1e-9 and config == configs[-1]:
                    verdict(None if rel is None else rel <= 2,
                            f"{model} Poisson at 70% of capacity ({config}): p99 {fmt(r['p99_ms'], 2)} ms = "
                            f"{fmt(rel, 2)}x the concurrency-1 p50 ({fmt(alone, 2)} ms), target <= 2x", verdicts)
    table(["model", "config", "load", "capacity req/s", "offered req/s", "achieved req/s", "p50 ms", "p99 ms", "mean batch",
           "c1 p50 ms (no batching)", "p99 / c1 p50"], rows)
    return summary


def report_mlserver(m, args, verdicts):
    print(f"### Concurrency {MLSERVER_CONCURRENCY}: ignis with dynamic batching vs MLServer with adaptive batching "
          f"(max_batch_size {args.max_batch}, max_batch_time {args.mlserver_batch_time_us} us)\n")
    rows, summary = [], []
    for model in args.models:
        for proto in ("grpc", "json"):
            case = Case(model, "fixed", proto, MLSERVER_CONCURRENCY)
            i, o = m.row("batch", case), m.row("mlserver", case)
            x, p = ratio(i["throughput"], o["throughput"]), ratio(i["p99_ms"], o["p99_ms"])
            rows.append([model, protocol_name(proto), fmt(i["throughput"]), fmt(i["p99_ms"], 2), fmt(o["throughput"]),
                         fmt(o["p99_ms"], 2), fmt(x, 2), fmt(p, 2)])
            summary.append({"model": model, "protocol": proto, "ignis": i, "mlserver": o, "throughput_x": x,
                            "p99_ratio": p})
            verdict(None if x is None or p is None else x >= 2 and p <= 1,
                    f"{model} {protocol_name(proto)} c{MLSERVER_CONCURRENCY}: ignis {fmt(x, 2)}x MLServer's "
                    f"throughput ({fmt(i['throughput'])} vs {fmt(o['throughput'])} req/s), p99 {fmt(i['p99_ms'], 2)} "
                    f"vs {fmt(o['p99_ms'], 2)} ms; target >= 2x at equal or lower p99", verdicts)
    table(["model", "protocol", "ignis req/s", "ignis p99 ms", "MLServer req/s", "MLServer p99 ms", "throughput x",
           "p99 ratio"], rows)
    return summary


def report_tune(m, configs, args):
    print("### Choosing max_batch_size and max_queue_delay_microseconds (closed loop, gRPC)\n")
    rows, score = [], {}
    for name in configs:
        logs = []
        for model in args.models:
            for c in args.tune_concurrency:
                r = m.row(name, Case(model, "fixed", "grpc", c))
                rows.append([name, model, str(c), fmt(r["throughput"]), fmt(r["p50_ms"], 2), fmt(r["p99_ms"], 2),
                             fmt(r["mean_batch"], 2)])
                if r["throughput"]:
                    logs.append(math.log(r["throughput"]))
        score[name] = math.exp(statistics.mean(logs)) if logs else None
    table(["config", "model", "conc.", "req/s", "p50 ms", "p99 ms", "mean batch"], rows)
    best = max((n for n in score if score[n]), key=lambda n: score[n], default=None)
    print(f"best by the geometric mean of throughput over models and concurrencies: {best}\n")
    return {"geomean_throughput": score, "best": best}


# ---------------------------------------------------------------- main


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["mobilenet_v2", "resnet50", "minilm"])
    ap.add_argument("--concurrency", nargs="+", type=int, help="closed-loop sweep (default 1 2 4 8 16 32)")
    ap.add_argument("--mixed-concurrency", nargs="+", type=int, default=[16])
    ap.add_argument("--loads", nargs="*", type=float,
                    help="open-loop arrival rates as fractions of capacity (default 0.3 0.5 0.7 0.9)")
    ap.add_argument("--protocols", nargs="+", choices=["grpc", "binary", "json"], default=["grpc"],
                    help="protocols of the closed-loop sweep")
    ap.add_argument("--seconds", type=float, default=5, help="per case (whole seconds)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=3, help="seconds of unmeasured load per request set and server")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="thread budget of each server")
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--seq", type=int,
                    help="sequence length of the fixed requests of models with a sequence axis (default: the "
                         "sidecar's, 128 for MiniLM)")
    ap.add_argument("--delay-us", type=int, default=500, help="max_queue_delay_microseconds of batch and buckets")
    ap.add_argument("--mlserver-batch-time-us", type=int, default=5000, help="MLServer's max_batch_time")
    ap.add_argument("--config", action="append", default=[], metavar="NAME=PBTXT",
                    help="replace (or add) a server configuration's config.pbtxt text")
    ap.add_argument("--ignis", default=os.path.join(ROOT, "build", "ignis"))
    ap.add_argument("--mlserver", help="the mlserver executable (default: build/mlserver-venv, created on demand)")
    ap.add_argument("--no-mlserver", action="store_true")
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 1 round of 2 s; unless given, concurrency 1 and 16, open loop at 70%%")
    ap.add_argument("--tune", action="store_true", help="only compare batch configurations (see below)")
    ap.add_argument("--tune-batches", nargs="+", type=int, default=[16, 32])
    ap.add_argument("--tune-delays", nargs="+", type=int, default=[0, 250, 500, 1000])
    ap.add_argument("--tune-concurrency", nargs="+", type=int, default=[4, 16, 32])
    args = ap.parse_args()
    global SEQUENCE
    SEQUENCE = args.seq
    if args.quick:
        args.rounds, args.seconds, args.warmup = 1, 2, 2
    args.seconds = max(1, int(round(args.seconds)))  # wrk takes whole seconds
    if args.concurrency is None:
        args.concurrency = [1, 16] if args.quick else [1, 2, 4, 8, 16, 32]
    if args.loads is None:
        args.loads = [0.7] if args.quick else [0.3, 0.5, 0.7, 0.9]
    args.driver = os.path.join(os.path.dirname(args.ignis), "ignis_grpc_load")
    if not os.path.exists(args.driver):
        sys.exit(f"bench/serve: {args.driver} is missing; build it: cmake --build build --target ignis_grpc_load")
    if any(p != "grpc" for p in args.protocols) and not shutil.which("wrk"):
        sys.exit("bench/serve: wrk is not installed (apt-get install wrk)")
    args.mlserver = None if args.no_mlserver or args.tune else serve_bench.ensure_mlserver(args.mlserver)
    return args


def write_server_folders(work, plan, configs, onnx_paths, args):
    """A model repository per ignis configuration, a models folder for MLServer."""
    folders = {}
    for config, cases in plan.items():
        folders[config] = os.path.join(work, config)
        models = sorted({c.model for c in cases})
        if config == "mlserver":
            write_mlserver_models(folders[config], models, onnx_paths, args.max_batch, args.mlserver_batch_time_us)
        else:
            write_ignis_repo(folders[config], models, onnx_paths, configs[config])
    return folders


def measure_in_process(rnd, args, results):
    for model in args.models:
        for batch in (1, args.max_batch):
            rows = engine_rows_per_second(args, model, batch)
            results.setdefault(("engine", *Case(model, "fixed", "in-process", batch)), []).append({"throughput": rows})
            print(f"round {rnd + 1} in-process {model} batch {batch}: {rows:.1f} rows/s", file=sys.stderr)


def report(args, configs, results, checks, mixed_models):
    """Prints the Markdown report; returns (verdict lines, summary for the JSON file)."""
    m = Medians(results)
    print(f"\n## Batching — {time.strftime('%Y-%m-%d')}, {serve_bench.cpu_model()}, {os.cpu_count()} cores shared "
          f"with the load generator, {args.threads} threads per server, median of {args.rounds} round(s) of "
          f"{args.seconds:g} s\n")
    print("Configurations (config.pbtxt after `name`): "
          + "; ".join(f"**{n}** `{' '.join(text.split())}`" for n, text in configs.items()) + "\n")
    verdicts, summary = [], {}
    if args.tune:
        summary["tune"] = report_tune(m, configs, args)
        return verdicts, summary
    summary["in_process"] = report_engine(m, args)
    summary["closed_loop"] = report_closed(m, args, verdicts)
    if mixed_models:
        summary["mixed_lengths"] = report_mixed(m, args, mixed_models, verdicts)
    if "grpc" in args.protocols and args.loads:
        summary["open_loop"] = report_open(m, args, verdicts)
    if args.mlserver:
        summary["mlserver"] = report_mlserver(m, args, verdicts)
    for line in verdicts:
        print(f"- {line}")
    for c in checks:
        if not c["ok"]:
            print(f"- CHECK FAILED: {c['server']} {c['model']} {c['request_set']}: batched answers differ from answers "
                  f"alone by {c['max_abs_diff']:.3g} ({c['where']})")
    return verdicts, summary


def write_json(path, args, configs, results, checks, verdicts, summary):
    with open(path, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d"), "cpu": serve_bench.cpu_model(), "cores": os.cpu_count(),
                   "command": shlex.join([sys.executable] + sys.argv), "threads": args.threads, "rounds": args.rounds,
                   "seconds": args.seconds, "warmup_seconds": args.warmup, "seed": SEED, "configs": configs,
                   "mlserver_settings": None if not args.mlserver else {
                       "max_batch_size": args.max_batch, "max_batch_time_s": args.mlserver_batch_time_us / 1e6},
                   "checks": checks, "verdicts": verdicts, "summary": summary,
                   "runs": [{"config": k[0], **Case(*k[1:])._asdict(), "rounds": v} for k, v in results.items()]},
                  f, indent=1)


def main():
    args = parse_args()
    work = tempfile.mkdtemp(prefix="ignis-batching-bench-")
    material, onnx_paths = prepare_requests(work, args.models)
    mixed_models = [m for m in args.models if (m, "mixed") in material]
    if args.tune:
        configs, plan = tune_configs_and_plan(args)
    else:
        configs, plan = standard_configs(args), standard_plan(args, mixed_models)
    for item in args.config:
        name, _, text = item.partition("=")
        configs[name] = text
    configs = {n: configs[n] for n in plan if n in configs}  # the ones used
    args.plan_configs = list(plan)
    folders = write_server_folders(work, plan, configs, onnx_paths, args)

    results, checks = {}, []
    log = open(os.path.join(work, "servers.log"), "w")
    for rnd in range(args.rounds):
        if not args.tune:
            measure_in_process(rnd, args, results)
        for config in (list(plan) if rnd % 2 == 0 else list(plan)[::-1]):
            run_server_cases(rnd, config, plan[config], folders[config], material, args, results, checks, log)
    log.close()

    verdicts, summary = report(args, configs, results, checks, mixed_models)
    if args.json:
        write_json(args.json, args, configs, results, checks, verdicts, summary)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
