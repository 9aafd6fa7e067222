# SPDX-License-Identifier: Apache-2.0
"""Reads the descriptive fields of an ONNX ModelProto (producer, domain, doc strings, graph
name, metadata_props) for get_modelmeta(), straight from the protobuf wire format.

It walks only the top level of the model and of its graph, skipping every other field by its
length, so a large model costs a few hundred reads and no copy of the weights.  Files are
memory-mapped.  Field numbers are those of onnx.proto (ModelProto, GraphProto,
StringStringEntryProto); anything malformed ends the scan and leaves the defaults.
"""

import mmap
import os

# ModelProto
_PRODUCER_NAME = 2
_PRODUCER_VERSION = 3
_DOMAIN = 4
_MODEL_VERSION = 5
_DOC_STRING = 6
_GRAPH = 7
_METADATA_PROPS = 14
# GraphProto
_GRAPH_NAME = 2
_GRAPH_DOC_STRING = 10
# StringStringEntryProto
_KEY = 1
_VALUE = 2

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5


class _Malformed(Exception):
    pass


def _varint(buf, pos, end):
    value = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise _Malformed()
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _fields(buf, pos, end):
    """Yields (field number, wire type, value or (start, stop) for length-delimited fields)."""
    while pos < end:
        key, pos = _varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _varint(buf, pos, end)
        elif wire == _LEN:
            length, pos = _varint(buf, pos, end)
            if pos + length > end:
                raise _Malformed()
            value = (pos, pos + length)
            pos += length
        elif wire == _FIXED64:
            value, pos = None, pos + 8
        elif wire == _FIXED32:
            value, pos = None, pos + 4
        else:  # groups are not used by onnx.proto
            raise _Malformed()
        if pos > end:
            raise _Malformed()
        yield number, wire, value


def _text(buf, span):
    return bytes(buf[span[0] : span[1]]).decode("utf-8", errors="replace")


def _scan(buf, meta):
    end = len(buf)
    for number, wire, value in _fields(buf, 0, end):
        if wire == _LEN and number in (_PRODUCER_NAME, _PRODUCER_VERSION, _DOMAIN, _DOC_STRING):
            key = {
                _PRODUCER_NAME: "producer_name",
                _PRODUCER_VERSION: "producer_version",
                _DOMAIN: "domain",
                _DOC_STRING: "description",
            }[number]
            meta[key] = _text(buf, value)
        elif wire == _VARINT and number == _MODEL_VERSION:
            meta["version"] = value - (1 << 64) if value >= 1 << 63 else value
        elif wire == _LEN and number == _GRAPH:
            for gnum, gwire, gvalue in _fields(buf, *value):
                if gwire == _LEN and gnum == _GRAPH_NAME:
                    meta["graph_name"] = _text(buf, gvalue)
                elif gwire == _LEN and gnum == _GRAPH_DOC_STRING:
                    meta["graph_description"] = _text(buf, gvalue)
        elif wire == _LEN and number == _METADATA_PROPS:
            key = val = ""
            for enum, ewire, evalue in _fields(buf, *value):
                if ewire == _LEN and enum == _KEY:
                    key = _text(buf, evalue)
                elif ewire == _LEN and enum == _VALUE:
                    val = _text(buf, evalue)
            meta["custom_metadata_map"][key] = val


def read_metadata(model):
    """`model`: a path or a bytes-like object. Returns a dict of the fields found."""
    # onnxruntime reports an unset model_version as INT64_MAX.
    meta = {
        "producer_name": "",
        "producer_version": "",
        "domain": "",
        "description": "",
        "graph_name": "",
        "graph_description": "",
        "version": (1 << 63) - 1,
        "custom_metadata_map": {},
    }
    try:
        if isinstance(model, (str, os.PathLike)):
            with open(model, "rb") as f:
                if os.fstat(f.fileno()).st_size == 0:
                    return meta
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                    _scan(buf, meta)
        else:
            _scan(memoryview(model).cast("B"), meta)
    except (_Malformed, OSError, ValueError, TypeError):
        pass
    return meta
