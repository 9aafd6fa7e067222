# SPDX-License-Identifier: Apache-2.0
"""Exceptions raised for the engine's Status codes (the native layer raises them by name).

Each class also derives from the built-in exception a Python caller would expect, so
``except ValueError`` or ``except FileNotFoundError`` works as well as ``except ignis.IgnisError``.
The message is the engine's, unchanged.
"""


class IgnisError(RuntimeError):
    """Base class of every error the ignis engine reports (also the class of internal errors)."""


class InvalidArgument(IgnisError, ValueError):
    """The caller passed something wrong: input name, shape or dtype, an option value."""


class InvalidModel(IgnisError, ValueError):
    """The model is malformed or inconsistent (not ONNX, truncated, cyclic, ...)."""


class Unsupported(IgnisError, NotImplementedError):
    """Valid ONNX that ignis does not implement (an op, a dtype, an attribute)."""


class NotFound(IgnisError, FileNotFoundError):
    """A model file or an external-data file that does not exist or cannot be opened."""


class OutOfRange(IgnisError, IndexError):
    """A data-dependent index outside its valid range (e.g. a Gather index)."""


class ResourceExhausted(IgnisError, MemoryError):
    """A run needs more memory than allowed (SessionOptions.memory_limit_bytes); nothing was
    allocated and the session stays usable."""


for _cls in (IgnisError, InvalidArgument, InvalidModel, Unsupported, NotFound, OutOfRange, ResourceExhausted):
    _cls.__module__ = "ignis"  # tracebacks read "ignis.InvalidArgument: ..."

# onnxruntime's names for the same failures.
NotImplemented = Unsupported  # noqa: A001 - the name onnxruntime uses
Fail = IgnisError
NoSuchFile = NotFound
InvalidProtobuf = InvalidModel
InvalidGraph = InvalidModel
