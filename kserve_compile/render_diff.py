"""The offline ``diff``: two sets of rendered objects compared object by object, as ``kubectl diff`` shows them.

Objects are matched by (API group, kind, namespace, name) — the version is not part of an object's identity, as for
the API server — and each added, removed or changed one gets a unified diff of its deterministic YAML (the same text
``render`` prints), headed ``a/<Kind>[.<group>]/<namespace>/<name>`` and ``b/...``. Mirrors kubectl's ``diff``
(``k8s.io/kubectl/pkg/cmd/diff``: one file per object, ``diff -u -N``), but without a cluster.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .emit import dump_yaml
from .emit.order import identity

Key = tuple[str, str, str, str]  # (group, kind, namespace, name)


@dataclass(frozen=True)
class ObjectDiff:
    key: Key
    api_version: str
    action: str  # "added", "removed" or "changed"
    text: str  # the unified diff

    @property
    def ref(self) -> str:
        return ref_of(self.key)

    def as_json(self) -> dict[str, Any]:
        _, kind, namespace, name = self.key
        return {
            "apiVersion": self.api_version,
            "kind": kind,
            "namespace": namespace,
            "name": name,
            "action": self.action,
            "diff": self.text,
        }


def _by_key(objects: Sequence[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    out = {}
    for i, obj in enumerate(objects):
        group, _, kind, namespace, name = identity(obj, i)
        out[(group, kind, namespace, name)] = obj
    return out


def diff_objects(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]) -> list[ObjectDiff]:
    """One entry per object added, removed or changed, sorted by key."""
    old, new = _by_key(before), _by_key(after)
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        action = "added" if a is None else "removed" if b is None else "changed"
        path = ref_of(key)
        text = "".join(
            difflib.unified_diff(
                _lines(a),
                _lines(b),
                "/dev/null" if a is None else f"a/{path}",
                "/dev/null" if b is None else f"b/{path}",
            )
        )
        out.append(ObjectDiff(key, str((b or a or {}).get("apiVersion", "")), action, text))
    return out


def ref_of(key: Key) -> str:
    """``Deployment.apps/ns/name``, ``Service/ns/name`` (core), ``ClusterRole.rbac.authorization.k8s.io/name``."""
    group, kind, namespace, name = key
    return "/".join(p for p in (f"{kind}.{group}" if group else kind, namespace, name) if p)


def _lines(obj: dict[str, Any] | None) -> list[str]:
    return [] if obj is None else dump_yaml([obj]).removeprefix("---\n").splitlines(keepends=True)
