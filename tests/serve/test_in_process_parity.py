# SPDX-License-Identifier: Apache-2.0
"""Outputs served over HTTP (JSON and binary) and gRPC equal an in-process Session::run on the
same inputs: `ignis run` with the same thread count writes the in-process outputs as .npy.
Equality is exact: the server runs the same session with the same kernels, and JSON floats
are written in their shortest round-trip form."""

import subprocess

import numpy as np
import pytest

tritonclient_http = pytest.importorskip("tritonclient.http")
tritonclient_grpc = pytest.importorskip("tritonclient.grpc")

THREADS = "2"
BATCHES = (1, 5)


@pytest.fixture(scope="module")
def server(start_server, make_repo, models):
    repo = make_repo("parity")
    repo.add("digits", models.digits)
    s = start_server(repo, "--grpc-port", "0", "--threads", THREADS)
    m = s.wait_for_log(r"grpc: listening on ([0-9.]+):(\d+)")
    s.grpc_url = f"{m.group(1)}:{m.group(2)}"
    return s


@pytest.fixture(scope="module")
def in_process(ignis_binary, models, tmp_path_factory):
    """logits of `ignis run` (an in-process Session::run) for each batch size, with inputs."""
    out = {}
    for batch in BATCHES:
        d = tmp_path_factory.mktemp(f"run{batch}")
        x = np.random.default_rng(batch).standard_normal((batch, 1, 8, 8)).astype(np.float32)
        np.save(d / "input.npy", x)
        subprocess.run([str(ignis_binary), "run", str(models.digits), "--input", f"input={d / 'input.npy'}",
                        "--threads", THREADS, "--output-dir", str(d)], check=True, capture_output=True)
        out[batch] = (x, np.load(d / "logits.npy"))
    return out


@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("binary", [False, True])
def test_http_equals_in_process(server, in_process, batch, binary):
    x, expected = in_process[batch]
    c = tritonclient_http.InferenceServerClient(url=server.url)
    i = tritonclient_http.InferInput("input", list(x.shape), "FP32")
    i.set_data_from_numpy(x, binary_data=binary)
    o = tritonclient_http.InferRequestedOutput("logits", binary_data=binary)
    got = c.infer("digits", [i], outputs=[o]).as_numpy("logits")
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert np.array_equal(got, expected), np.max(np.abs(got - expected))


@pytest.mark.parametrize("batch", BATCHES)
def test_grpc_equals_in_process(server, in_process, batch):
    x, expected = in_process[batch]
    c = tritonclient_grpc.InferenceServerClient(url=server.grpc_url)
    i = tritonclient_grpc.InferInput("input", list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    got = c.infer("digits", [i]).as_numpy("logits")
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert np.array_equal(got, expected), np.max(np.abs(got - expected))
