# SPDX-License-Identifier: Apache-2.0
"""Whether onnxruntime's int8 answers can serve as a reference on this CPU (tests/python and
tests/models compare ignis with them)."""

import re


def onnxruntime_int8_is_exact():
    """Whether onnxruntime's uint8 x int8 kernels sum exactly on this CPU. With VNNI (AVX-512 VNNI
    or AVX-VNNI) they use vpdpbusd; on other x86 CPUs vpmaddubsw, whose int16 sums of two
    products saturate when both are large (onnxruntime documents it and offers reduce_range),
    so its int8 answers there can be many quantization steps off the exact ones: on an AVX2-only
    AMD EPYC (Zen 3) its QLinearConv was 10-28 steps off its own float run of the same QDQ file,
    where ignis matched that float run exactly. Where this is False, tests compare ignis's int8
    results with an exact reference instead (onnxruntime's float run of the QDQ file, or the
    ONNX reference evaluator)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return True
    if not re.search(r"\bavx2\b", flags):
        return True  # not an x86 CPU with the saturating path
    return bool(re.search(r"\b(avx512_vnni|avx_vnni)\b", flags))
