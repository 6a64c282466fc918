"""Template data as Go values: structs, maps, pointers; walking fields, ``index``, truth and printing.

Python stands in for Go's types: a :class:`Struct` is a Go struct (a field it lacks is an error), any other mapping
a ``map[string]…`` (a missing key is Go's missing-key case), :class:`GoPtr` a non-nil pointer to a scalar, ``None``
a nil pointer. Semantics of ``text/template``'s ``evalField`` (exec.go) and ``index`` (funcs.go) kept; the maps
in KServe's template data are all ``map[string]string``, so a missing key indexes to ``""`` (the zero value).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .errors import ExecFault
from .quote import go_quote

NO_VALUE = "<no value>"


class _Missing:
    """A missing map key (Go's invalid ``reflect.Value``): prints ``<no value>``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return NO_VALUE


MISSING: Any = _Missing()


class Struct(dict):
    """A Go struct as template data: looking up a field it lacks is an error, unlike a map."""

    go_type: ClassVar[str] = ""  # the Go type as reflect prints it ("v1.ObjectMeta"), for messages; "" if unknown


class GoPtr:
    """A non-nil pointer to a scalar: true in ``if``/``and``/``or`` whatever it points at; prints the value."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoPtr) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"GoPtr({self.value!r})"


_GO_TYPES = {bool: "bool", int: "int", float: "float64", str: "string", list: "[]interface {}"}


def go_type_name(value: Any) -> str:
    """The Go type of ``value`` as messages print it; "" when not known."""
    if isinstance(value, Struct):
        return type(value).go_type
    if isinstance(value, GoPtr):
        inner = go_type_name(value.value)
        return "*" + inner if inner else ""
    return _GO_TYPES.get(type(value), "")


def _cant_evaluate(name: str, receiver: Any) -> ExecFault:
    typ = go_type_name(receiver)
    return ExecFault(f"can't evaluate field {name} in type {typ}" if typ else f"can't evaluate field {name}")


def walk_fields(value: Any, names: Sequence[str], missing_key_error: bool) -> Any:
    """``.A.B…`` from ``value`` (``evalFieldChain``). A missing map key is :data:`MISSING` (and what follows it),
    or, with ``missing_key_error`` (``missingkey=error``), an error; a struct's missing field is always one."""
    for name in names:
        if isinstance(value, dict) or isinstance(value, Mapping):  # dict first: the data holds dicts
            found = value.get(name, MISSING)
            if found is MISSING:
                if isinstance(value, Struct):
                    raise _cant_evaluate(name, value)
                if missing_key_error:
                    raise ExecFault(f"map has no entry for key {go_quote(name)}")
                return MISSING
            value = found
        elif value is None:
            raise ExecFault(f"nil pointer evaluating .{name}")
        elif value is MISSING:
            return MISSING
        else:
            raise _cant_evaluate(name, value)
    return value


def go_index(item: Any, *keys: Any) -> Any:
    """The ``index`` builtin: ``index x 1 2`` is ``x[1][2]``; ``ValueError`` with Go's message otherwise."""
    if item is None or item is MISSING:
        raise ValueError("index of untyped nil")
    for key in keys:
        if isinstance(item, GoPtr):
            item = item.value
        if isinstance(item, Struct) or not isinstance(item, (Mapping, str, list, tuple)):
            raise ValueError(f"can't index item of type {go_type_name(item) or type(item).__name__}")
        if isinstance(item, Mapping):
            if not isinstance(key, str):
                raise ValueError(f"value has type {go_type_name(key) or type(key).__name__}; should be string")
            item = item.get(key, "")
            continue
        if key is None:
            raise ValueError("cannot index slice/array with nil")
        if isinstance(key, bool) or not isinstance(key, int):
            raise ValueError(f"cannot index slice/array with type {go_type_name(key) or type(key).__name__}")
        sequence = item.encode() if isinstance(item, str) else item  # a Go string indexes to a byte
        if not 0 <= key < len(sequence):
            raise ValueError(f"index out of range: {key}")
        item = sequence[key]
    return item


def go_len(item: Any) -> int:
    """The ``len`` builtin (a string's length in bytes, as Go counts it)."""
    if isinstance(item, GoPtr):
        item = item.value
    if item is None:
        raise ValueError("len of nil pointer")
    if isinstance(item, str):
        return len(item.encode())
    if isinstance(item, (list, tuple)) or (isinstance(item, Mapping) and not isinstance(item, Struct)):
        return len(item)
    raise ValueError(f"len of type {go_type_name(item) or type(item).__name__}")


def go_truth(value: Any) -> bool:
    """Go's ``template.IsTrue``."""
    if value is None:
        return False
    if isinstance(value, GoPtr):
        return True
    if isinstance(value, Struct):
        return True
    if isinstance(value, (bool, int, float, str, list, tuple, dict)):
        return bool(value)
    return True


def print_value(value: Any) -> str:
    """How a value prints: Go's ``fmt`` forms for the scalars, maps (keys sorted) and lists the data holds (a
    ``None`` prints as a missing value: runtime placeholder data holds none)."""
    if value is None:
        return NO_VALUE
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{k}:{print_value(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(print_value(v) for v in value) + "]"
    return str(value)


def go_print(value: Any) -> str:
    """How ``text/template`` prints a value (``fmt.Print``; pointers to scalars print what they point at)."""
    if isinstance(value, GoPtr):
        value = value.value
    if value is None:
        return "<nil>"
    return print_value(value)
