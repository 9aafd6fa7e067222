# SPDX-License-Identifier: Apache-2.0
"""The onnxruntime-style API: InferenceSession, SessionOptions, RunOptions, NodeArg,
ModelMetadata and the option enums.  Names, defaults and behaviour follow onnxruntime so
that code written for it runs with only the import changed; README.md ("Python") lists
the differences."""

import enum
import json
import operator
import os
import threading
import time
import warnings

from . import _errors, _ignis
from ._model_proto import read_metadata

CPU_PROVIDER = "CPUExecutionProvider"
_AVAILABLE_PROVIDERS = (CPU_PROVIDER,)

# ONNX TensorProto element type -> onnxruntime's spelling of the tensor type.
_TYPE_STRINGS = {
    1: "tensor(float)",
    2: "tensor(uint8)",
    3: "tensor(int8)",
    4: "tensor(uint16)",
    5: "tensor(int16)",
    6: "tensor(int32)",
    7: "tensor(int64)",
    8: "tensor(string)",
    9: "tensor(bool)",
    10: "tensor(float16)",
    11: "tensor(double)",
    12: "tensor(uint32)",
    13: "tensor(uint64)",
    16: "tensor(bfloat16)",
}

_SUPPORTED_PRECISIONS = ("fp32", "bf16", "fp16")


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's optimization levels, with its values."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Accepted for compatibility; ignis runs nodes in order and parallelises inside them."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


# GraphOptimizationLevel -> the engine's OptLevel (None, Basic, Extended, All). onnxruntime's
# LAYOUT level is everything but its newest passes; ignis has no separate layout level.
_ENGINE_OPT_LEVEL = {0: 0, 1: 1, 2: 2, 3: 3, 99: 3}

# onnxruntime severity (0 verbose, 1 info, 2 warning, 3 error, 4 fatal) -> the engine's
# LogLevel (0 error, 1 warning, 2 info, 3 debug).
_ENGINE_LOG_LEVEL = {0: 3, 1: 2, 2: 1, 3: 0, 4: 0}

_default_log_severity = 2


def set_default_logger_severity(severity):
    """Severity used by sessions whose options leave log_severity_level at -1 (0 verbose ..
    4 fatal), as in onnxruntime."""
    global _default_log_severity
    _default_log_severity = _check_severity(severity, allow_default=False)


def get_available_providers():
    """Execution providers this build can run: only the CPU."""
    return list(_AVAILABLE_PROVIDERS)


def get_device():
    return "CPU"


def _check_severity(value, allow_default):
    value = operator.index(value)
    low = -1 if allow_default else 0
    if not low <= value <= 4:
        raise _errors.InvalidArgument(
            f"log severity must be {low}..4 (0 verbose, 1 info, 2 warning, 3 error, 4 fatal"
            f"{', -1 the default logger' if allow_default else ''}), got {value}"
        )
    return value


def _enum_member(enum_type, value, what):
    """Accepts a member of `enum_type`, onnxruntime's enum of the same name, or its int value."""
    name = getattr(value, "name", None)
    if isinstance(name, str) and name in enum_type.__members__:
        return enum_type[name]
    try:
        return enum_type(operator.index(value))
    except (TypeError, ValueError):
        valid = ", ".join(f"{m.name} ({m.value})" for m in enum_type)
        raise _errors.InvalidArgument(f"{what} must be one of {valid}; got {value!r}") from None


def _non_negative_int(what, meaning):
    def convert(value):
        value = operator.index(value)
        if value < 0:
            raise _errors.InvalidArgument(f"{what} must be >= 0 ({meaning}), got {value}")
        return value

    return convert


def _precision(value):
    if isinstance(value, str) and value.lower() in _SUPPORTED_PRECISIONS:
        return value.lower()
    supported = ", ".join(repr(p) for p in _SUPPORTED_PRECISIONS)
    raise _errors.InvalidArgument(f"precision {value!r} is not supported; supported: {supported}")


_TUNING_MODES = ("off", "cached", "measure", "remeasure")


def _tuning(value):
    if isinstance(value, str) and value.lower() in _TUNING_MODES:
        return value.lower()
    supported = ", ".join(repr(t) for t in _TUNING_MODES)
    raise _errors.InvalidArgument(f"tuning {value!r} is not supported; supported: {supported}")


def _option(name, convert, doc):
    def get(self):
        return self._values[name]

    def set(self, value):
        self._values[name] = convert(value)

    return property(get, set, doc=doc)


class SessionOptions:
    """Options for InferenceSession, with onnxruntime's attribute names and defaults.

    Setting an attribute that does not exist raises AttributeError, as in onnxruntime; the
    ones marked "no effect" are accepted so that existing code runs unchanged."""

    __slots__ = ("_values", "_config")

    _DEFAULTS = {
        "intra_op_num_threads": 0,
        "inter_op_num_threads": 0,
        "graph_optimization_level": GraphOptimizationLevel.ORT_ENABLE_ALL,
        "execution_mode": ExecutionMode.ORT_SEQUENTIAL,
        "log_severity_level": -1,
        "log_verbosity_level": 0,
        "logid": "",
        "enable_profiling": False,
        "profile_file_prefix": "ignis_profile_",
        "optimized_model_filepath": "",
        "enable_cpu_mem_arena": True,
        "enable_mem_pattern": True,
        "enable_mem_reuse": True,
        "use_deterministic_compute": False,
        "use_per_session_threads": True,
        "precision": "fp32",
        "pin_threads": False,
        "memory_limit_bytes": 0,
        "tuning": "cached",
        "tuning_cache": "",
    }

    def __init__(self):
        self._values = dict(self._DEFAULTS)
        self._config = {}

    intra_op_num_threads = _option(
        "intra_op_num_threads",
        _non_negative_int("intra_op_num_threads", "0 = one thread per physical core"),
        "Threads used inside an op; 0 (default) = one per physical core.",
    )
    inter_op_num_threads = _option(
        "inter_op_num_threads",
        _non_negative_int("inter_op_num_threads", "0 = default"),
        "No effect: ignis runs nodes one after another.",
    )
    graph_optimization_level = _option(
        "graph_optimization_level",
        lambda v: _enum_member(GraphOptimizationLevel, v, "graph_optimization_level"),
        "A GraphOptimizationLevel (default ORT_ENABLE_ALL).",
    )
    execution_mode = _option(
        "execution_mode",
        lambda v: _enum_member(ExecutionMode, v, "execution_mode"),
        "No effect (ExecutionMode); accepted for compatibility.",
    )
    log_severity_level = _option(
        "log_severity_level",
        lambda v: _check_severity(v, allow_default=True),
        "0 verbose, 1 info, 2 warning, 3 error, 4 fatal; -1 (default) = set_default_logger_severity().",
    )
    log_verbosity_level = _option("log_verbosity_level", operator.index, "No effect.")
    logid = _option("logid", str, "No effect.")
    enable_profiling = _option(
        "enable_profiling", bool, "Record per-node timings; InferenceSession.end_profiling() writes them."
    )
    profile_file_prefix = _option("profile_file_prefix", os.fsdecode, "Prefix of the profile file name.")
    optimized_model_filepath = _option(
        "optimized_model_filepath",
        os.fsdecode,
        "When set, the session also writes the model as optimized at its graph_optimization_level "
        "(ignis.optimize()); models loaded from a file only.",
    )
    enable_cpu_mem_arena = _option("enable_cpu_mem_arena", bool, "No effect: ignis always plans an arena.")
    enable_mem_pattern = _option("enable_mem_pattern", bool, "No effect.")
    enable_mem_reuse = _option("enable_mem_reuse", bool, "No effect.")
    use_deterministic_compute = _option(
        "use_deterministic_compute", bool, "No effect: ignis kernels are deterministic."
    )
    use_per_session_threads = _option(
        "use_per_session_threads",
        bool,
        "No effect: sessions with the same thread count and pinning share one pool of workers.",
    )
    precision = _option(
        "precision",
        _precision,
        "Numeric precision of the computation (ignis only): 'fp32' (default); 'bf16': MatMul, "
        "Gemm and Conv with constant weights round both operands to bfloat16 and sum in float32, on "
        "CPUs with AVX512_BF16 (float32 elsewhere, for shallow convolutions, and for every other op); "
        "or 'fp16': the constant weights of MatMul and Gemm are stored as float16 (half the bytes, "
        "rounded to nearest even) and all arithmetic stays float32, on CPUs with F16C.",
    )

    pin_threads = _option(
        "pin_threads",
        bool,
        "Bind each worker thread to its own physical core (ignis only; the calling thread stays unbound).",
    )
    memory_limit_bytes = _option(
        "memory_limit_bytes",
        _non_negative_int("memory_limit_bytes", "0 = the machine's physical memory"),
        "Most bytes one run may hold in activations and outputs (ignis only); 0 (default) = the "
        "machine's physical memory. A run that needs more raises ResourceExhausted (a MemoryError) "
        "before allocating, and the session stays usable.",
    )

    tuning = _option(
        "tuning",
        _tuning,
        "How kernels are chosen where several can run a node (ignis only): 'cached' (default) takes "
        "what the tuning cache recorded for the node on this CPU, else the built-in rules; 'off' the "
        "rules; 'measure' times the candidates for nodes the cache lacks and saves them; "
        "'remeasure' times every node again. See `ignis tune`.",
    )
    tuning_cache = _option(
        "tuning_cache",
        os.fsdecode,
        "The tuning cache file (ignis only); '' (default) = $IGNIS_TUNING_CACHE, else "
        "~/.cache/ignis/tuning-cache.tsv.",
    )

    def add_session_config_entry(self, key, value):
        """Stored and returned by get_session_config_entry(); no key has an effect yet."""
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        try:
            return self._config[key]
        except KeyError:
            raise _errors.IgnisError(f"SessionOptions does not have configuration with key: {key}") from None

    def __repr__(self):
        changed = {k: v for k, v in self._values.items() if v != self._DEFAULTS[k]}
        return f"SessionOptions({', '.join(f'{k}={v!r}' for k, v in changed.items())})"


class RunOptions:
    """Per-run options, with onnxruntime's attribute names; only `terminate` has an effect
    (a run started with it set raises instead of running)."""

    __slots__ = (
        "log_severity_level",
        "log_verbosity_level",
        "logid",
        "only_execute_path_to_fetches",
        "terminate",
        "_config",
    )

    def __init__(self):
        self.log_severity_level = -1
        self.log_verbosity_level = 0
        self.logid = ""
        self.only_execute_path_to_fetches = False
        self.terminate = False
        self._config = {}

    def add_run_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_run_config_entry(self, key):
        try:
            return self._config[key]
        except KeyError:
            raise _errors.IgnisError(f"RunOptions does not have configuration with key: {key}") from None


class NodeArg:
    """A graph input or output: name, type ("tensor(float)") and shape (ints for fixed dims,
    the dim's name or None for symbolic ones, [] when the model declares no shape)."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):  # noqa: A002 - onnxruntime's attribute name
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class ModelMetadata:
    """Descriptive fields of the model, as onnxruntime's get_modelmeta() returns them."""

    __slots__ = (
        "producer_name",
        "graph_name",
        "domain",
        "description",
        "graph_description",
        "version",
        "custom_metadata_map",
    )

    def __init__(self, fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self):
        return f"ModelMetadata({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"


def _node_args(described):
    args = []
    for name, elem_type, dims, dim_names, has_shape in described:
        shape = []
        if has_shape:
            for d, dim_name in zip(dims, dim_names):
                shape.append(d if d >= 0 else (dim_name or None))
        args.append(NodeArg(name, _TYPE_STRINGS.get(elem_type, "tensor(undefined)"), shape))
    return args


def _normalize_providers(providers, provider_options):
    """Checks the providers argument as onnxruntime does. Names ignis cannot run get a warning
    and are dropped (onnxruntime's behaviour for providers missing from a build); the session
    always runs on the CPU."""
    if providers is None:
        return
    if isinstance(providers, str) or not isinstance(providers, (list, tuple)):
        raise ValueError("'providers' should be a list of provider names or (name, options dict) tuples")
    if provider_options is not None and len(provider_options) != len(providers):
        raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
    for entry in providers:
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], dict):
            entry = entry[0]
        if not isinstance(entry, str):
            raise ValueError("'providers' values must be either strings or (string, dict) tuples.")
        if entry not in _AVAILABLE_PROVIDERS:
            warnings.warn(
                f"Specified provider '{entry}' is not in available provider names. "
                f"Available providers: '{', '.join(_AVAILABLE_PROVIDERS)}'",
                stacklevel=3,
            )


def _copy_foreign_options(options):
    """An options object from elsewhere (e.g. onnxruntime.SessionOptions): copies the
    attributes ignis knows."""
    ours = SessionOptions()
    for name in SessionOptions._DEFAULTS:
        if hasattr(options, name):
            setattr(ours, name, getattr(options, name))
    return ours


class InferenceSession:
    """A loaded ONNX model, as onnxruntime.InferenceSession.

    path_or_bytes: a file path (str or os.PathLike) or the serialized model (bytes-like).
    sess_options: a SessionOptions.  providers / provider_options: checked as onnxruntime does;
    ignis runs on the CPU only, so other providers are dropped with a warning.

    run() is thread-safe and releases the GIL, so threads can share one session."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        unknown = set(kwargs) - {"disabled_optimizers"}
        if unknown:
            raise TypeError(f"InferenceSession() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
        if sess_options is None:
            options = SessionOptions()
        elif isinstance(sess_options, SessionOptions):
            options = sess_options
        else:
            options = _copy_foreign_options(sess_options)
        _normalize_providers(providers, provider_options)
        if options.optimized_model_filepath and not isinstance(path_or_bytes, (str, os.PathLike)):
            raise _errors.Unsupported(
                "SessionOptions.optimized_model_filepath needs a model loaded from a file, not from bytes"
            )

        self._sess_options = options
        severity = options.log_severity_level
        if severity < 0:
            severity = _default_log_severity
        args = (
            options.intra_op_num_threads,
            _ENGINE_OPT_LEVEL[int(options.graph_optimization_level)],
            _ENGINE_LOG_LEVEL[severity],
            bool(options.pin_threads),
            options.memory_limit_bytes,
        )
        engine_options = {
            "precision": options.precision,
            "tuning": options.tuning,
            "tuning_cache": options.tuning_cache,
        }
        if isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path = os.fsdecode(path_or_bytes)
            self._model_bytes = None
            self._sess = _ignis.Session.open(self._model_path, *args, **engine_options)
        elif isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model_path = None
            self._model_bytes = path_or_bytes
            self._sess = _ignis.Session.open_bytes(path_or_bytes, *args, **engine_options)
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")

        if options.optimized_model_filepath:
            _ignis.optimize(self._model_path, options.optimized_model_filepath, args[1])
        self._inputs = _node_args(self._sess.inputs())
        self._outputs = _node_args(self._sess.outputs())
        self._meta = None
        self._profile_lock = threading.Lock()
        self._profile_events = None
        self._profile_start_ns = 0
        self._profile_start_counter = 0
        if options.enable_profiling:
            self._start_profiling()

    # -- model description ------------------------------------------------------------------

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        """ignis does not let a run replace an initializer, so there are none."""
        return []

    def get_modelmeta(self):
        if self._meta is None:
            self._meta = ModelMetadata(read_metadata(self._model_path or self._model_bytes))
        return self._meta

    def get_session_options(self):
        return self._sess_options

    def get_providers(self):
        return [CPU_PROVIDER]

    def get_provider_options(self):
        return {CPU_PROVIDER: {}}

    def set_providers(self, providers=None, provider_options=None):
        _normalize_providers(providers, provider_options)

    def disable_fallback(self):
        """No effect: there is only the CPU provider to fall back to."""

    def enable_fallback(self):
        """No effect: there is only the CPU provider to fall back to."""

    # -- running ----------------------------------------------------------------------------

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model. output_names: list of names, or None/[] for all outputs in model
        order. input_feed: {input name: numpy array}; arrays of the exact input dtype are read
        in place when C-contiguous.  Returns a list of numpy arrays that share the engine's
        output buffers (no copy)."""
        if isinstance(output_names, str):
            raise TypeError("output_names must be a list of output names (or None), not a str")
        if run_options is not None and run_options.terminate:
            raise _errors.IgnisError("run() was not started: run_options.terminate is set")
        if not isinstance(input_feed, dict):
            input_feed = dict(input_feed)
        names = list(output_names) if output_names else None
        if self._profile_events is None:
            return self._sess.run(input_feed, names)
        return self._run_profiled(input_feed, names)

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """Runs on a new thread, then calls callback(outputs, user_data, error): outputs is the
        list run() returns (None on failure) and error is "" or the error message."""

        def work():
            try:
                outputs, error = self.run(output_names, input_feed, run_options), ""
            except Exception as e:  # delivered to the callback, as onnxruntime does
                outputs, error = None, str(e)
            callback(outputs, user_data, error)

        threading.Thread(target=work, name="ignis-run-async", daemon=True).start()

    # -- profiling --------------------------------------------------------------------------

    def _start_profiling(self):
        self._profile_events = []
        self._profile_start_ns = time.time_ns()
        self._profile_start_counter = time.perf_counter_ns()

    def _run_profiled(self, input_feed, names):
        start = time.perf_counter_ns()
        outputs, timings = self._sess.run_profiled(input_feed, names)
        end = time.perf_counter_ns()
        # The engine reports durations, not start times: nodes are laid end to end from the
        # start of the run, which is how they ran (one after another).
        pid, tid = os.getpid(), threading.get_native_id()
        ts = (start - self._profile_start_counter) / 1000.0
        events = [
            {
                "cat": "Session",
                "pid": pid,
                "tid": tid,
                "ts": round(ts),
                "dur": round((end - start) / 1000.0),
                "ph": "X",
                "name": "model_run",
                "args": {},
            }
        ]
        for node, op_type, kernel, micros, flops in timings:
            events.append(
                {
                    "cat": "Node",
                    "pid": pid,
                    "tid": tid,
                    "ts": round(ts),
                    "dur": round(micros),
                    "ph": "X",
                    "name": f"{node}_kernel_time",
                    "args": {"op_name": op_type, "kernel": kernel, "provider": CPU_PROVIDER, "flops": flops},
                }
            )
            ts += micros
        with self._profile_lock:
            if self._profile_events is not None:
                self._profile_events.extend(events)
        return outputs

    def end_profiling(self):
        """Writes the recorded timings as a Chrome trace (JSON) named
        <profile_file_prefix><date>_<time>.json, stops profiling and returns the file name;
        "" when profiling is off."""
        with self._profile_lock:
            events, self._profile_events = self._profile_events, None
        if events is None:
            return ""
        stamp = time.strftime("%Y-%m-%d_%H-%M-%S", time.localtime(self._profile_start_ns / 1e9))
        path = f"{self._sess_options.profile_file_prefix}{stamp}.json"
        with open(path, "w") as f:
            json.dump(events, f)
        return path

    def get_profiling_start_time_ns(self):
        return self._profile_start_ns
