"""JSON text exactly as Go's ``encoding/json`` (and json-iterator's standard-library mode) writes it.

Go writes struct fields in declaration order, sorts map keys, leaves out ``omitempty`` fields that are empty, and
escapes ``<``, ``>``, ``&``, U+2028 and U+2029 inside strings. The Kubernetes types an InferenceGraph spec embeds
(affinity, tolerations, resources) are described by :data:`K8S_TYPES`, which both checks user input (an unknown
field is an error, as with ``kubectl``'s strict field validation) and fixes the field order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from ..kube.quantity import QUANTITY_FORMAT_ERROR, canonical_quantity, is_quantity

# Field kinds: a type name from K8S_TYPES, "string", "int", "bool", "quantity", ["<kind>"] (a list) or
# {"<kind>"} (a map with string keys). Flags: "omit" = omitempty on a value field, "ptr" = pointer with omitempty
# (kept when present, even if zero), "keep" = always written (Go writes the zero value, or null for nil lists/maps).
Field = tuple[str, Any, str]

K8S_TYPES: dict[str, tuple[Field, ...]] = {
    "Affinity": (
        ("nodeAffinity", "NodeAffinity", "ptr"),
        ("podAffinity", "PodAffinity", "ptr"),
        ("podAntiAffinity", "PodAffinity", "ptr"),
    ),
    "NodeAffinity": (
        ("requiredDuringSchedulingIgnoredDuringExecution", "NodeSelector", "ptr"),
        ("preferredDuringSchedulingIgnoredDuringExecution", ["PreferredSchedulingTerm"], "omit"),
    ),
    "NodeSelector": (("nodeSelectorTerms", ["NodeSelectorTerm"], "keep"),),
    "NodeSelectorTerm": (
        ("matchExpressions", ["NodeSelectorRequirement"], "omit"),
        ("matchFields", ["NodeSelectorRequirement"], "omit"),
    ),
    "NodeSelectorRequirement": (
        ("key", "string", "keep"),
        ("operator", "string", "keep"),
        ("values", ["string"], "omit"),
    ),
    "PreferredSchedulingTerm": (("weight", "int", "keep"), ("preference", "NodeSelectorTerm", "keep")),
    "PodAffinity": (
        ("requiredDuringSchedulingIgnoredDuringExecution", ["PodAffinityTerm"], "omit"),
        ("preferredDuringSchedulingIgnoredDuringExecution", ["WeightedPodAffinityTerm"], "omit"),
    ),
    "PodAffinityTerm": (
        ("labelSelector", "LabelSelector", "ptr"),
        ("namespaces", ["string"], "omit"),
        ("topologyKey", "string", "keep"),
        ("namespaceSelector", "LabelSelector", "ptr"),
        ("matchLabelKeys", ["string"], "omit"),
        ("mismatchLabelKeys", ["string"], "omit"),
    ),
    "WeightedPodAffinityTerm": (("weight", "int", "keep"), ("podAffinityTerm", "PodAffinityTerm", "keep")),
    "LabelSelector": (("matchLabels", {"string"}, "omit"), ("matchExpressions", ["LabelSelectorRequirement"], "omit")),
    "LabelSelectorRequirement": (
        ("key", "string", "keep"),
        ("operator", "string", "keep"),
        ("values", ["string"], "omit"),
    ),
    "Toleration": (
        ("key", "string", "omit"),
        ("operator", "string", "omit"),
        ("value", "string", "omit"),
        ("effect", "string", "omit"),
        ("tolerationSeconds", "int", "ptr"),
    ),
    "ResourceRequirements": (
        ("limits", {"quantity"}, "omit"),
        ("requests", {"quantity"}, "omit"),
        ("claims", ["ResourceClaim"], "omit"),
    ),
    "ResourceClaim": (("name", "string", "keep"), ("request", "string", "omit")),
}

_ZERO = {"string": "", "int": 0, "bool": False}


def normalize(value: Any, kind: Any, path: str) -> Any:
    """``value`` checked against ``kind`` and rebuilt in Go's field order with empty ``omitempty`` fields dropped.

    The result is what Go would marshal after decoding ``value`` into the typed struct: quantities in canonical form,
    map keys sorted, unknown fields rejected with an :class:`InputError` naming ``path``.
    """
    if isinstance(kind, list):
        if not isinstance(value, list):
            raise InputError(f"must be a list, not {_type_name(value)}", path)
        return [normalize(item, kind[0], f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(kind, set):
        (item_kind,) = kind
        if not isinstance(value, Mapping):
            raise InputError(f"must be a mapping, not {_type_name(value)}", path)
        return {str(k): normalize(value[k], item_kind, f"{path}[{k}]") for k in sorted(value, key=str)}
    if kind == "string":
        if not isinstance(value, str):
            raise InputError(f"must be a string, not {_type_name(value)}", path)
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"must be an integer, not {_type_name(value)}", path)
        return value
    if kind == "quantity":
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or not is_quantity(str(value)):
            raise InputError(f"{QUANTITY_FORMAT_ERROR} (got {value!r})", path)
        return canonical_quantity(str(value))
    return _struct(value, kind, path)


def _struct(value: Any, kind: str, path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"must be a mapping, not {_type_name(value)}", path)
    fields = K8S_TYPES[kind]
    known = {name for name, _, _ in fields}
    for key in value:
        if key not in known:
            raise InputError(f'unknown field "{key}"', f"{path}.{key}" if path else str(key))
    out: dict[str, Any] = {}
    for name, field_kind, flag in fields:
        sub = f"{path}.{name}" if path else name
        raw = value.get(name)
        if raw is None:
            if flag == "keep":
                out[name] = _zero(field_kind, sub)
            continue
        item = normalize(raw, field_kind, sub)
        if flag == "omit" and item in ("", 0, False, [], {}):
            continue
        out[name] = item
    return out


def _zero(kind: Any, path: str) -> Any:
    """What Go writes for a field that is always written but absent: the zero value, ``null`` for lists and maps."""
    if isinstance(kind, (list, set)):
        return None
    if kind in _ZERO:
        return _ZERO[kind]
    return _struct({}, kind, path)


def _type_name(value: Any) -> str:
    return {
        dict: "a mapping",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }.get(type(value), type(value).__name__)


# --- text ---------------------------------------------------------------------------------------------------------

_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_string(text: str, *, short_bf: bool = True) -> str:
    """A Go JSON string literal. ``short_bf``: ``\\b``/``\\f`` as short escapes (encoding/json since Go 1.22);
    json-iterator writes them as ``\\u0008``/``\\u000c``."""
    out = ['"']
    for ch in text:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif ch in _HTML:
            out.append(_HTML[ch])
        elif ch < " ":
            if short_bf and ch == "\b":
                out.append("\\b")
            elif short_bf and ch == "\f":
                out.append("\\f")
            else:
                out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_dumps(value: Any, *, short_bf: bool = True) -> str:
    """Compact JSON of plain data; dict order is kept (callers build dicts in Go's field order)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return go_string(value, short_bf=short_bf)
    if isinstance(value, Mapping):
        return (
            "{"
            + ",".join(
                f"{go_string(str(k), short_bf=short_bf)}:{go_dumps(v, short_bf=short_bf)}" for k, v in value.items()
            )
            + "}"
        )
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_dumps(v, short_bf=short_bf) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as Go JSON")
