"""pickle's loaders of oboro objects: plain Python functions (pickle stores them by name), over the
binding's _unpickle and _unpickle_context (python/src/pickling.cpp explains what travels)."""

from __future__ import annotations

from . import _core


def unpickle(type_name: str, key_id: int, context_id: int, data: bytes):
    return _core._unpickle(type_name, key_id, context_id, data)


def unpickle_context(data: bytes, automatic: bool):
    return _core._unpickle_context(data, automatic)
