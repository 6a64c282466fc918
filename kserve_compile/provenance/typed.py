"""Put origins back on typed models: pydantic turns a tagged ``str`` field into a plain one while validating."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from . import origin_of

M = TypeVar("M")


def retag_model(model: M, data: Any) -> M:
    """``model`` (validated from ``data``) with each plain scalar field replaced by ``data``'s tagged equal one.
    Field names match by alias, case-insensitively (the ConfigMap's JSON is read like Go's encoding/json)."""
    if not isinstance(model, BaseModel) or not isinstance(data, dict):
        return model
    lower = {str(k).lower(): k for k in data}
    for name, info in type(model).model_fields.items():
        key = info.alias or name
        source_key = key if key in data else lower.get(key.lower())
        if source_key is not None and name in model.__dict__:
            model.__dict__[name] = _retag(model.__dict__[name], data[source_key])
    return model


def _retag(value: Any, source: Any) -> Any:
    if isinstance(value, BaseModel):
        return retag_model(value, source)
    if isinstance(value, list) and isinstance(source, list) and len(value) == len(source):
        return [_retag(v, s) for v, s in zip(value, source)]
    if isinstance(value, dict) and isinstance(source, dict):
        return {k: _retag(v, source[k]) if k in source else v for k, v in value.items()}
    if (
        origin_of(source) is not None
        and origin_of(value) is None
        and type(value) in (str, int, float)
        and value == source
    ):
        return source
    return value
