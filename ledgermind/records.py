"""One codec between the project's records (dataclasses) and the JSON they are written as.

A record's fields and type hints already say what its file holds, so encoding and decoding are
derived from them rather than written by hand per class: fields in declaration order, enums by
value, paths as strings, sets sorted, tuples as lists, nested records as objects. A key absent from
a file takes the field's default (files written before the field existed load unchanged); an
unknown key is ignored; a value of the wrong JSON type is a ``ValueError`` naming the field, so a
reader can skip a damaged record with a note instead of failing later on it.

The few encodings that differ from that rule are declared on the field, with ``field(metadata=...)``:
``key`` (the name in the file), ``omit_none`` (no key when the value is None), ``rest`` (a mapping
field whose entries are written as top-level keys and which collects the keys no field names),
``codec`` (a ``(write, read)`` pair of functions for that field's value, given None as well) and
``skip`` (never written: a by-product that is no part of the record), as are fields whose name
starts with ``_``.
"""

from __future__ import annotations

import contextlib
import math
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, fields, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Self


def codec(write: Callable[[Any], Any], read: Callable[[Any], Any]) -> dict[str, Any]:
    """Field metadata: this field's value is written as ``write(value)`` and read as ``read(json)``."""
    return {"codec": (write, read)}


KEY = "key"
OMIT_NONE = {"omit_none": True}
REST = {"rest": True}
SKIP = {"skip": True}


class Record:
    """A dataclass written to and read from JSON through this module."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in _schema(type(self))[0]:
            value = getattr(self, f.name)
            if "codec" in f.metadata:
                value = f.metadata["codec"][0](value)
            if value is None and f.metadata.get("omit_none"):
                continue
            if f.metadata.get("rest"):
                out.update(encode(value))
            else:
                out[f.metadata.get(KEY, f.name)] = encode(value)
        return out

    @classmethod
    def from_dict(cls, data: Any, **extra: Any) -> Self:
        """The record a parsed JSON value holds (anything else: ``ValueError``); ``extra`` are constructor
        arguments the file does not hold."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{cls.__name__}: expected an object, got {data!r:.40}")
        written, hints = _schema(cls)
        kwargs, keys = dict(extra), {f.metadata.get(KEY, f.name) for f in written}
        for f in written:
            key = f.metadata.get(KEY, f.name)
            if f.metadata.get("rest"):
                kwargs[f.name] = {k: v for k, v in data.items() if k not in keys}
            elif key in data and "codec" in f.metadata:
                kwargs[f.name] = f.metadata["codec"][1](data[key])
            elif key in data:
                kwargs[f.name] = decode(hints[f.name], data[key], f.name)
            elif f.default is MISSING and f.default_factory is MISSING:
                raise ValueError(f"{cls.__name__}: field {key!r} is missing")
        return cls(**kwargs)


def encode(value: Any) -> Any:
    """The JSON value of a record, enum, path or container of them (other values as they are)."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {k: encode(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted(encode(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    return value


def field_types(cls: type) -> dict[str, Any]:
    """The type each key of a record's file holds (its ``rest`` keys aside)."""
    written, hints = _schema(cls)
    return {f.metadata.get(KEY, f.name): hints[f.name] for f in written if not f.metadata.get("rest")}


_SCHEMAS: dict[type, tuple[tuple[Field[Any], ...], dict[str, Any]]] = {}


def _schema(cls: type) -> tuple[tuple[Field[Any], ...], dict[str, Any]]:
    """A record's written fields and their type hints (resolved once per class)."""
    if cls not in _SCHEMAS:
        written = tuple(f for f in fields(cls) if not (f.name.startswith("_") or f.metadata.get("skip")))
        _SCHEMAS[cls] = written, typing.get_type_hints(cls)
    return _SCHEMAS[cls]


_SCALARS: dict[Any, Callable[[Any], bool]] = {
    Any: lambda v: True,
    str: lambda v: isinstance(v, str),
    bool: lambda v: isinstance(v, bool),
    int: lambda v: isinstance(v, int) and not isinstance(v, bool),
    float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
    type(None): lambda v: v is None,
}


def decode(tp: Any, value: Any, name: str = "value") -> Any:
    """``value`` (parsed JSON) as an instance of the type ``tp``, e.g. ``decode(list[Claim], rows)``;
    a ``ValueError`` naming ``name`` when it is not one. A number read for a ``float`` stays as
    written (an ``int`` too), so a file read and written again is the same file."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp in _SCALARS:
        if _SCALARS[tp](value):
            return value
    elif origin in (types.UnionType, typing.Union):
        for arg in args:
            with contextlib.suppress(ValueError):
                return decode(arg, value, name)
    elif isinstance(tp, type) and issubclass(tp, Record):
        return tp.from_dict(value)
    elif isinstance(tp, type) and issubclass(tp, Enum):
        with contextlib.suppress(ValueError):
            return tp(value)
    elif tp is Path:
        if isinstance(value, str):
            return Path(value)
    elif origin in (list, tuple, set, frozenset) and isinstance(value, list):
        items = [decode(args[0], v, name) for v in value]
        return items if origin is list else origin(items)
    elif origin in (dict, Mapping) and isinstance(value, dict):
        return {k: decode(args[1], v, name) for k, v in value.items()}
    elif is_dataclass(tp):
        raise TypeError(f"{tp!r} is a dataclass but not a Record")
    raise ValueError(f"field {name!r}: expected {_type_name(tp)}, got {value!r:.40}")


def _type_name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) and not typing.get_args(tp) else str(tp).replace("typing.", "")
