"""``-o json``: what ``kubectl get -o json`` prints."""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from kserve_compile.emit.order import check_tree, is_clean, object_ref


def dump_json(objs: Iterable[dict]) -> str:
    """One object as itself; several (or none) as a ``v1`` ``List``.

    2-space indent, sorted keys, trailing newline. Non-string keys, non-finite floats and
    other types raise ``TypeError``/``ValueError`` naming the object and field.
    """
    items = list(objs)
    for obj in items:
        try:
            clean = is_clean(obj)
        except RecursionError:
            clean = False
        if not clean:
            check_tree(obj, object_ref(obj))
    doc = items[0] if len(items) == 1 else {"apiVersion": "v1", "kind": "List", "items": items}
    try:
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as exc:  # e.g. an int beyond 64 bits
        raise ValueError(f"cannot write JSON: {exc}") from None
    return data.decode() + "\n"
