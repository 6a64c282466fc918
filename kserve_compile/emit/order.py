"""Apply order of rendered objects, and how to name one in a message."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import orjson

# (API group, kind) applied before everything else, in this order; every other object follows by
# (group, kind, namespace, name), the core group "" first.
APPLY_FIRST: tuple[tuple[str, str], ...] = (
    ("", "Namespace"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    # local model caches: volumes before the claims bound to them and the pods mounting those; the LocalModelNode
    # (the node agent's work list) before the download Jobs the agent would make from it
    ("", "PersistentVolume"),
    ("", "PersistentVolumeClaim"),
    ("serving.kserve.io", "LocalModelNode"),
)
_FIRST_RANK = {gk: i for i, gk in enumerate(APPLY_FIRST)}


def identity(obj: object, index: int) -> tuple[str, str, str, str, str]:
    """(group, version, kind, namespace, name) of one object; missing fields read as ""."""
    if type(obj) is dict and type(meta := obj.get("metadata")) is dict:  # the rendered objects: all strings, no checks
        api, kind, namespace, name = obj.get("apiVersion"), obj.get("kind"), meta.get("namespace"), meta.get("name")
        if type(api) is str and type(kind) is str and type(namespace) is str and type(name) is str:
            group, _, version = api.rpartition("/")
            return group, version, kind, namespace, name
    if not isinstance(obj, Mapping):
        raise TypeError(f"object #{index + 1}: expected a mapping, got {type(obj).__name__}")
    meta = obj.get("metadata")
    meta = {} if meta is None else meta
    if not isinstance(meta, Mapping):
        raise TypeError(f"object #{index + 1}: metadata: expected a mapping, got {type(meta).__name__}")
    given = {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.name": meta.get("name"),
    }
    fields: dict[str, str] = {}
    for path, value in given.items():
        if value is None:
            value = ""
        elif not isinstance(value, str):
            raise TypeError(f"object #{index + 1}: {path}: expected a string, got {type(value).__name__}")
        fields[path] = value
    group, _, version = fields["apiVersion"].rpartition("/")
    return group, version, fields["kind"], fields["metadata.namespace"], fields["metadata.name"]


def sort_objects(objs: Iterable[dict]) -> list[dict]:
    """Objects in apply order: :data:`APPLY_FIRST` kinds first, then by (group, kind, namespace, name).

    Ties (the same identity twice) fall back to the version, then to the canonical JSON of the
    object, so the result never depends on the input order.
    """
    keyed = []
    for i, obj in enumerate(objs):
        group, version, kind, namespace, name = identity(obj, i)
        rank = _FIRST_RANK.get((group, kind), len(APPLY_FIRST))
        keyed.append(((rank, group, kind, namespace, name, version), obj))
    keyed.sort(key=lambda pair: pair[0])
    if any(keyed[i][0] == keyed[i - 1][0] for i in range(1, len(keyed))):
        keyed.sort(key=lambda pair: (pair[0], orjson.dumps(pair[1], option=orjson.OPT_SORT_KEYS)))
    return [obj for _, obj in keyed]


def object_ref(obj: object) -> str:
    """``Kind/namespace/name`` with empty parts left out, for messages."""
    if not isinstance(obj, Mapping):
        return f"<{type(obj).__name__}>"
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    parts = (obj.get("kind"), meta.get("namespace"), meta.get("name"))
    return "/".join(str(p) for p in parts if p) or "<object>"


MAX_DEPTH = 200  # far deeper than any Kubernetes object; stops a tree that contains itself


def check_tree(obj: object, ref: str) -> None:
    """Raise an error naming ``ref`` and the field path of the first value JSON cannot hold.

    The emitters call it only once they have failed (or, for JSON, because orjson would write NaN
    as null and would not say where a bad value sits).
    """
    stack: list[tuple[object, str, int]] = [(obj, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            where = path[:200]
            raise ValueError(f"{ref}: {where}...: nested more than {MAX_DEPTH} deep (or contains itself)")
        if isinstance(node, Mapping):
            for k, v in node.items():
                if not isinstance(k, str):
                    raise TypeError(f"{ref}: {path or '<root>'}: mapping key {k!r} is not a string")
                stack.append((v, f"{path}.{k}" if path else k, depth + 1))
        elif isinstance(node, (list, tuple)):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(node))
        elif isinstance(node, float):
            if node != node or node in (float("inf"), float("-inf")):
                raise ValueError(f"{ref}: {path}: {node!r} cannot be written (not a finite number)")
        elif not (node is None or isinstance(node, (str, int))):
            raise TypeError(f"{ref}: {path}: cannot write a value of type {type(node).__name__}")


_SCALARS = (str, int, type(None))


def is_clean(obj: object) -> bool:
    """Fast check (no paths) that a tree holds only what JSON can: call :func:`check_tree` if not."""
    if type(obj) is dict:
        return all(type(k) is str for k in obj) and all(map(is_clean, obj.values()))
    if type(obj) is list:
        return all(map(is_clean, obj))
    t = type(obj)
    if t is str or t is int or t is bool or obj is None:
        return True
    if type(obj) is float:
        return obj - obj == 0  # false for NaN and the infinities
    return False  # subclasses, tuples, Mapping types: orjson may not take them; check_tree decides
