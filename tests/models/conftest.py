# SPDX-License-Identifier: Apache-2.0
"""Collects one line per model from the parity tests and prints them as a
table at the end of the pytest run (also for skipped models, with the reason)."""

import pytest

_PARITY_LINES = pytest.StashKey[list]()


def pytest_configure(config):
    config.stash[_PARITY_LINES] = []


@pytest.fixture
def parity_log(request):
    """Call with one summary line; it is printed now (visible with -s) and
    repeated in the 'model parity' section of the terminal summary."""
    lines = request.config.stash[_PARITY_LINES]

    def log(line):
        print(line)
        lines.append(line)

    return log


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    lines = config.stash.get(_PARITY_LINES, [])
    if not lines:
        return
    terminalreporter.section("model parity (ignis vs onnxruntime)")
    for line in lines:
        terminalreporter.write_line(line)
