# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python package tests (tests/python).

The package under test is the installed `ignis` (tools/python_test.sh builds and installs it);
onnxruntime is the reference."""

import numpy as np
import pytest

import ignis

# The model-parity tolerance of tests/models: |a - b| <= ATOL + RTOL * |b|.
ATOL = 1e-4
RTOL = 1e-3


def assert_close(actual, expected, what=""):
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if actual.dtype.kind in "fc":
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


@pytest.fixture(scope="session")
def ort():
    return pytest.importorskip("onnxruntime")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def pytest_report_header(config):
    return f"ignis {ignis.__version__} from {ignis.__file__}"
