# SPDX-License-Identifier: Apache-2.0
"""ignis.quantize() and ignis.prune(): weight compression run offline, as `ignis quantize` and
`ignis prune` do. Both write a standard ONNX model with the same inputs and outputs."""

import math
import os

from . import _errors, _ignis


class WeightChange:
    """One weight tensor changed: its initializer name, the op reading it, the scheme applied,
    its element count, zeros before/after, max |w| before and max |w - w'|."""

    __slots__ = ("value", "op_type", "scheme", "elements", "zeros_before", "zeros_after", "max_abs", "max_abs_error")

    def __init__(self, fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self):
        return f"WeightChange({self.value!r}, {self.op_type}, {self.scheme!r}, max_abs_error={self.max_abs_error:.3g})"


class ActivationRange:
    """One activation quantized by static quantization: its name, the calibrated range
    (min, max), the int8 scale and zero point written for it, and with quantize(...,
    error_samples=N) its `error`: |x_q - x| / |x| of its dequantized value in the model
    written against the float model's, over the first N calibration samples (the error of
    the layers before it included; None when not measured)."""

    __slots__ = ("value", "min", "max", "scale", "zero_point", "error")

    def __init__(self, fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self):
        return f"ActivationRange({self.value!r}, [{self.min:.4g}, {self.max:.4g}], scale={self.scale:.4g})"


class CompressReport:
    """What quantize() or prune() changed: a list of WeightChange, the skipped candidates
    ("<name>: <why>"), parameter counts, and initializer and file sizes in bytes before/after.
    Static quantization also fills `activations` (ActivationRange per quantized activation)
    and `calibration_samples`; with max_drop, `accuracy_loss` (measured on the calibration
    samples; else None) and `decisions` (one line per node kept in float32, then the result)."""

    __slots__ = (
        "changed",
        "activations",
        "calibration_samples",
        "accuracy_loss",
        "decisions",
        "skipped",
        "parameters",
        "parameters_changed",
        "initializer_bytes_before",
        "initializer_bytes_after",
        "file_bytes_before",
        "file_bytes_after",
    )

    def __init__(self, fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])
        self.changed = [WeightChange(c) for c in fields["changed"]]
        self.activations = [ActivationRange(a) for a in fields["activations"]]

    def __repr__(self):
        return (
            f"CompressReport({len(self.changed)} weights changed, {len(self.skipped)} skipped, "
            f"file {self.file_bytes_before} -> {self.file_bytes_after} bytes)"
        )


def _choice(value, allowed, what):
    if not isinstance(value, str) or value.lower() not in allowed:
        names = ", ".join(repr(a) for a in allowed)
        raise _errors.InvalidArgument(f"{what} {value!r} is not one of {names}")
    return value.lower()


def _count(value, what):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _errors.InvalidArgument(f"{what} must be an int >= 0, got {value!r}")
    return value


def _names(value, what):
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    names = list(value)
    if not all(isinstance(n, str) and n for n in names):
        raise _errors.InvalidArgument(f"{what} must be node names (non-empty strings), got {value!r}")
    return names


def quantize(
    model,
    output,
    mode=None,
    per_channel=True,
    min_elements=None,
    exclude=None,
    calibrate=None,
    method="minmax",
    percentile=99.999,
    samples=0,
    progress=True,
    block_size=32,
    max_drop=None,
    metric="top1",
    smooth=0.7,
    error_samples=0,
    per_row=False,
):
    """Reads the ONNX file `model`, quantizes it and writes the result to `output`.

    mode: "int8" (the default without `calibrate`: weights of Conv, ConvTranspose, MatMul and
    Gemm stored symmetric int8 with zero point 0, written as DequantizeLinear feeding the op;
    one scale per output channel unless per_channel=False or the model's opset is below 13),
    "fp16" (float16 weights read through Cast), "dynamic" (MatMul, and Gemm with transA=0,
    whose B is a constant 2-D float32 weight computed in int8: DynamicQuantizeLinear on the
    activation, one per activation tensor, then MatMulInteger -> Cast -> Mul(scale)
    [-> Add(bias)], as onnxruntime's quantize_dynamic writes; int8 weights with one scale per
    output column unless per_channel=False; with per_row=True each activation row, its last
    axis, gets its own symmetric int8 scale instead, written in standard ops that ignis fuses
    into one kernel), "int4" (MatMul whose B is a constant 2-D float32
    weight becomes com.microsoft MatMulNBits, which onnxruntime runs too: 4-bit asymmetric
    codes with a scale and zero point per `block_size` depths of each column) or "static"
    (the default with `calibrate`).

    calibrate: a folder of calibration samples (*.npz with arrays named by input, *.npy for
    single-input models, or sub-folders of NAME.npy / input_0.pb ...; see the README). The
    float model runs on each (at most `samples` of them, 0 = all; a line per sample goes to
    stderr unless progress=False) and every activation read by Conv, MatMul and Gemm, or
    written by Conv, gets an int8 QuantizeLinear/DequantizeLinear pair with the range `method` picks:
    "minmax", "percentile" (|x| clipped at `percentile` %) or "entropy" (TensorRT's KL
    threshold). Weights are int8 symmetric per output channel, biases int32; the outputs of
    MatMul and Gemm stay float32 (the ops that read them quantize them where they are int8).
    smooth: SmoothQuant's strength alpha in [0, 1] (0: off): each MatMul / Gemm input channel
    j (the last axis) is divided by max|x_j|^alpha / max|w_j|^(1 - alpha) over the samples and
    the weight's row j multiplied by it, folded into the input's QuantizeLinear (one scale per
    channel): a transformer's outlier channels move into the per-channel weight scales.  With
    mode="int4" the samples instead calibrate the rounding of the 4-bit weights (GPTQ): each
    MatMul's codes minimize the error of its output on the samples rather than of each weight.

    error_samples (static only): measure each quantized activation's error against the float
    model on the first N calibration samples (ActivationRange.error; 0: not measured).

    Weights with fewer than `min_elements` elements stay float32 (default 1024; 0 for static);
    so do the nodes named in `exclude` (dynamic, int4 and static).

    max_drop (static only): the largest accuracy loss allowed on the calibration samples, under
    `metric`: "top1" (the share of rows of each float output whose argmax over the last axis
    changes; 0.01 = one point), "cosine" (1 - the mean cosine of each output to float), or a
    callable metric(float_outputs, quantized_outputs) -> loss, each argument a list over the
    calibration samples of {output name: numpy array} (larger is worse, a finite number
    >= 0; what it raises stops the quantization as InvalidArgument). When quantizing every
    node costs more, each node is measured alone (what quantizing only it costs the outputs'
    cosine) and the costliest stay float32: the fewest, in that order, for which the loss
    holds (bisection); the report lists each decision.  A budget that even every node kept
    float32 misses raises InvalidArgument and writes nothing.  A model that already holds
    quantized ops (QuantizeLinear, DequantizeLinear, MatMulInteger, MatMulNBits...) is refused
    in every mode (InvalidArgument): quantize the float model.  For int8 and fp16 ignis expands
    the weights once when a session is created, so the computation stays float32.  Returns a
    CompressReport."""
    if calibrate is not None:
        mode = _choice(mode or "static", ("static", "int4"), "with calibrate, mode")
    else:
        mode = _choice(mode or "int8", ("int8", "fp16", "dynamic", "int4"), "mode")
    method = _choice(method, ("minmax", "percentile", "entropy"), "method")
    if not callable(metric):
        metric = _choice(metric, ("top1", "cosine"), "metric")
    if max_drop is not None:
        if calibrate is None:
            raise _errors.InvalidArgument("max_drop measures accuracy on calibration samples and needs calibrate")
        try:
            max_drop = float(max_drop)
        except (TypeError, ValueError):
            raise _errors.InvalidArgument(f"max_drop must be a number >= 0, got {max_drop!r}") from None
        if not max_drop >= 0:
            raise _errors.InvalidArgument(f"max_drop must be a number >= 0, got {max_drop!r}")
    try:
        p = float(percentile)
    except (TypeError, ValueError):
        raise _errors.InvalidArgument(f"percentile must be a number in (0, 100], got {percentile!r}") from None
    if not (0 < p <= 100):
        raise _errors.InvalidArgument(f"percentile must be a number in (0, 100], got {percentile!r}")
    try:
        alpha = float(smooth)
    except (TypeError, ValueError):
        raise _errors.InvalidArgument(f"smooth must be a number in [0, 1], got {smooth!r}") from None
    if not (0 <= alpha <= 1):
        raise _errors.InvalidArgument(f"smooth must be a number in [0, 1], got {smooth!r}")
    return CompressReport(
        _ignis.quantize(
            os.fsdecode(model),
            os.fsdecode(output),
            mode,
            bool(per_channel),
            None if min_elements is None else _count(min_elements, "min_elements"),
            _names(exclude, "exclude"),
            "" if calibrate is None else os.fsdecode(calibrate),
            method,
            p,
            _count(samples, "samples"),
            bool(progress),
            _count(block_size, "block_size"),
            max_drop,
            metric,
            alpha,
            _count(error_samples, "error_samples"),
            bool(per_row),
        )
    )


def prune(model, output, sparsity=0.5, granularity="element", min_elements=1024):
    """Reads the ONNX file `model`, sets a fraction `sparsity` (in [0, 1)) of each weight tensor
    of Conv, ConvTranspose, MatMul and Gemm to zero and writes the result to `output`.

    granularity: "element" (the elements of smallest |w|) or "channel" (the output channels of
    smallest L2 norm).  Weights with fewer than `min_elements` elements are left alone.
    Shapes and ops are unchanged.  Returns a CompressReport."""
    granularity = _choice(granularity, ("element", "channel"), "granularity")
    try:
        s = float(sparsity)
    except (TypeError, ValueError):
        raise _errors.InvalidArgument(f"sparsity must be a number in [0, 1), got {sparsity!r}") from None
    if not math.isfinite(s):
        raise _errors.InvalidArgument(f"sparsity must be a number in [0, 1), got {sparsity!r}")
    return CompressReport(
        _ignis.prune(os.fsdecode(model), os.fsdecode(output), s, granularity, _count(min_elements, "min_elements"))
    )
