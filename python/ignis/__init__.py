# SPDX-License-Identifier: Apache-2.0
"""ignis: an ONNX inference engine, with onnxruntime's Python API.

    import ignis as ort          # instead of: import onnxruntime as ort
    sess = ort.InferenceSession("model.onnx")
    outputs = sess.run(None, {"input": x})

Engine errors raise the classes below, each also a built-in exception: InvalidArgument and
InvalidModel are ValueErrors, Unsupported a NotImplementedError, NotFound a FileNotFoundError,
OutOfRange an IndexError, ResourceExhausted a MemoryError; all derive from IgnisError (a
RuntimeError).
"""

from . import _ignis
from ._errors import (
    Fail,
    IgnisError,
    InvalidArgument,
    InvalidGraph,
    InvalidModel,
    InvalidProtobuf,
    NoSuchFile,
    NotFound,
    OutOfRange,
    ResourceExhausted,
    Unsupported,
)
from ._errors import NotImplemented  # noqa: A004 - onnxruntime's name; not in __all__
from ._compress import ActivationRange, CompressReport, WeightChange, prune, quantize
from ._optimize import OptimizeReport, optimize
from ._session import (
    ExecutionMode,
    GraphOptimizationLevel,
    InferenceSession,
    ModelMetadata,
    NodeArg,
    RunOptions,
    SessionOptions,
    get_available_providers,
    get_device,
    set_default_logger_severity,
)

__version__ = _ignis.__version__

__all__ = [
    "ActivationRange",
    "CompressReport",
    "ExecutionMode",
    "Fail",
    "GraphOptimizationLevel",
    "IgnisError",
    "InferenceSession",
    "InvalidArgument",
    "InvalidGraph",
    "InvalidModel",
    "InvalidProtobuf",
    "ModelMetadata",
    "NoSuchFile",
    "NodeArg",
    "NotFound",
    "OptimizeReport",
    "OutOfRange",
    "ResourceExhausted",
    "RunOptions",
    "SessionOptions",
    "Unsupported",
    "WeightChange",
    "get_available_providers",
    "get_device",
    "optimize",
    "prune",
    "quantize",
    "set_default_logger_severity",
]
