"""Provenance: where every rendered value comes from (``kserve-compile explain``).

While :func:`tracing` is on, scalars carry their origin: input documents are tagged leaf by leaf with their
``file:line:col`` and field path, the ConfigMap's JSON values with their key, runtimes with their field, and every
value a builder or a pod-webhook injector adds without an origin is stamped with that step's KServe source. A value
that replaces another (a strategic merge, an env override) keeps the replaced value's origin in its chain, so
``explain --field`` can tell "the runtime's default, then overridden by the isvc's field".

Tags are ``str``/``int``/``float`` subclasses: code that derives a new value (``name + "-predictor"``) gets an
untagged one, which the enclosing step's stamp then claims. Booleans and nulls cannot be subclassed and carry no
origin of their own. Off (the default), nothing here runs: plain renders pay one context-variable read per hook.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

_TRACING: ContextVar[bool] = ContextVar("kserve_compile_tracing", default=False)


def is_tracing() -> bool:
    return _TRACING.get()


@contextmanager
def tracing() -> Iterator[None]:
    """Record origins for the duration of the block."""
    token = _TRACING.set(True)
    try:
        yield
    finally:
        _TRACING.reset(token)


@dataclass(frozen=True)
class Origin:
    """One source of a value. ``kind``: input | configmap | runtime | default | webhook."""

    kind: str
    what: str  # e.g. "InferenceService default/iris spec.predictor.model.storageUri"
    where: str = ""  # e.g. "isvc.yaml:9:21", or the KServe source and the module that mirrors it
    replaced: tuple[Origin, ...] = field(default=(), compare=False)

    def describe(self) -> str:
        return f"{self.what} ({self.where})" if self.where else self.what

    def chain(self) -> list[Origin]:
        """This origin, then what it replaced, most recent first."""
        out = [self]
        for earlier in self.replaced:
            out += earlier.chain()
        return out

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "what": self.what, "where": self.where}


class TStr(str):
    origin: Origin

    def __str__(self) -> str:  # ``str(value)`` is the same value: it keeps its origin
        return self


class TInt(int):
    origin: Origin


class TFloat(float):
    origin: Origin


_TAGGED = {str: TStr, int: TInt, float: TFloat, TStr: TStr, TInt: TInt, TFloat: TFloat}


def tag(value: Any, origin: Origin) -> Any:
    """``value`` carrying ``origin`` (booleans, nulls and collections are returned as they are)."""
    cls = _TAGGED.get(type(value))
    if cls is None:
        return value
    out = cls(value)
    out.origin = origin
    return out


def origin_of(value: Any) -> Origin | None:
    return getattr(value, "origin", None) if type(value) in (TStr, TInt, TFloat) else None


Path = tuple[str | int, ...]


def tag_tree(data: Any, origin_at: Callable[[Path], Origin], path: Path = ()) -> Any:
    """A copy of ``data`` whose every scalar leaf carries ``origin_at(its path)``."""
    if isinstance(data, dict):
        return {k: tag_tree(v, origin_at, (*path, k)) for k, v in data.items()}
    if isinstance(data, list):
        return [tag_tree(v, origin_at, (*path, i)) for i, v in enumerate(data)]
    if type(data) in _TAGGED and origin_of(data) is None:
        return tag(data, origin_at(path))
    return data


_PLAIN_SCALARS = {str: TStr, int: TInt, float: TFloat}


def stamp(data: Any, origin: Origin) -> Any:
    """Claim, in place, every scalar leaf of ``data`` that has no origin yet; returns ``data``."""
    entries = data.items() if type(data) is dict else enumerate(data) if type(data) is list else ()
    for k, v in entries:
        t = type(v)
        if t is dict or t is list:
            stamp(v, origin)
        else:
            cls = _PLAIN_SCALARS.get(t)
            if cls is not None:
                tagged = cls(v)
                tagged.origin = origin
                data[k] = tagged
    return data


def overriding(old: Any, new: Any) -> Any:
    """``new`` replacing ``old``: the result's origin remembers ``old``'s (when both carry one and differ)."""
    before, after = origin_of(old), origin_of(new)
    if before is None or after is None or before == after:
        return new
    return tag(new, replace(after, replaced=(*after.replaced, before)))


def origins(obj: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every scalar leaf of ``obj`` with its path (leaves without an origin included)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from origins(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from origins(v, (*path, i))
    else:
        yield path, obj


def path_text(path: Path) -> str:
    """``("spec", "containers", 0, "image")`` → ``spec.containers[0].image`` (keys with dots in brackets)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif "." in part or "[" in part or "/" in part:
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def carry_over(before: Any, after: Any, note: str) -> Any:
    """``after`` (``before`` transformed leaf by leaf, e.g. templates filled) with ``before``'s origins: an equal leaf
    is ``before``'s own; a changed one keeps its origin with ``note`` added."""
    if isinstance(before, dict) and isinstance(after, dict):
        return {k: carry_over(before[k], v, note) if k in before else v for k, v in after.items()}
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [carry_over(b, a, note) for b, a in zip(before, after)]
    origin = origin_of(before)
    if origin is None or type(after) not in _TAGGED:
        return after
    if after == before:
        return before
    return tag(after, replace(origin, what=f"{origin.what} ({note})"))


def with_origin_of(source: Any, value: Any) -> Any:
    """``value`` (derived from ``source``) carrying ``source``'s origin, if it has one."""
    origin = origin_of(source)
    return tag(value, origin) if origin is not None else value


__all__ = [
    # modules
    "sources",
    "typed",
    # names
    "Origin",
    "carry_over",
    "is_tracing",
    "origin_of",
    "origins",
    "overriding",
    "path_text",
    "stamp",
    "tag",
    "tag_tree",
    "tracing",
    "with_origin_of",
]
