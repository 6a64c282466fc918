"""Object-by-object diffs: two sets of objects compared by identity, one unified diff per object that differs.

The one diff core with two front ends: the offline ``diff A B`` (``cli/diff_offline.py``: both sides rendered) and
``diff --cluster`` (``apply/diff.py``: the live objects against the server's dry-run result). Objects are matched by
(API group, kind, namespace, name) — the version is not part of an object's identity, as for the API server — and
each added, removed or changed one gets a unified diff of the project's own deterministic YAML (``dump_yaml``, the
text ``render`` prints), headed ``<before>/<Kind>[.<group>]/<namespace>/<name>`` and ``<after>/...`` (``a``/``b``
offline, ``live``/``merged`` against a cluster, as ``kubectl diff`` names its two trees). Mirrors kubectl's ``diff``
(``k8s.io/kubectl/pkg/cmd/diff``: one file per object, ``diff -u -N``).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kserve_compile.emit.order import identity
from kserve_compile.emit.yaml_text import dump_yaml

__all__ = ["ADDED", "CHANGED", "OUTPUTS", "REMOVED", "Key", "ObjectDiff", "diff_objects", "format_diffs", "ref_of"]

Key = tuple[str, str, str, str]  # (group, kind, namespace, name)
ADDED, REMOVED, CHANGED = "added", "removed", "changed"
OUTPUTS = ("text", "json")  # -o: the unified diffs one after another, or a JSON list of ObjectDiff.as_json()


@dataclass(frozen=True)
class ObjectDiff:
    key: Key
    api_version: str
    action: str  # ADDED, REMOVED or CHANGED
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


def diff_objects(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], labels: tuple[str, str] = ("a", "b")
) -> list[ObjectDiff]:
    """One entry per object added, removed or changed, sorted by key; ``labels`` head the two sides."""
    old, new = _by_key(before), _by_key(after)
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        action = ADDED if a is None else REMOVED if b is None else CHANGED
        path = ref_of(key)
        text = "".join(
            difflib.unified_diff(
                _lines(a),
                _lines(b),
                "/dev/null" if a is None else f"{labels[0]}/{path}",
                "/dev/null" if b is None else f"{labels[1]}/{path}",
            )
        )
        out.append(ObjectDiff(key, str((b or a or {}).get("apiVersion", "")), action, text))
    return out


def format_diffs(diffs: Sequence[ObjectDiff], output: str = "text") -> str:
    """What ``diff`` prints for ``-o text`` or ``-o json``."""
    if output == "json":
        return json.dumps([d.as_json() for d in diffs], indent=2, sort_keys=True) + "\n"
    return "".join(d.text for d in diffs)


def ref_of(key: Key) -> str:
    """``Deployment.apps/ns/name``, ``Service/ns/name`` (core), ``ClusterRole.rbac.authorization.k8s.io/name``."""
    group, kind, namespace, name = key
    return "/".join(p for p in (f"{kind}.{group}" if group else kind, namespace, name) if p)


def _lines(obj: dict[str, Any] | None) -> list[str]:
    return [] if obj is None else dump_yaml([obj]).removeprefix("---\n").splitlines(keepends=True)
