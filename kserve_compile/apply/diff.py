"""The verb ``diff`` against a cluster: each object dry-run applied and compared with its live version.

The cluster front end of the one diff core (``kserve_compile.emit.diff``; the offline front end is
``cli/diff_offline.py``): the server's dry-run result is the ``merged`` side, the live object the ``live`` side,
both without server bookkeeping and with Secret values masked (``objects.normalise``), as ``kubectl diff`` shows
them. Nothing is written. Exit codes as ``kubectl diff``: 0 no differences, 1 differences, above 1 the diff failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kserve_compile.apply.errors import explain
from kserve_compile.apply.kube import ApiError, Kube
from kserve_compile.apply.members import prepare
from kserve_compile.apply.objects import Obj, applyset_id, key_of, normalise, order_for_apply
from kserve_compile.apply.report import ApplyOptions
from kserve_compile.emit.diff import ObjectDiff, diff_objects

__all__ = ["ClusterDiff", "LABELS", "diff_cluster"]

LABELS = ("live", "merged")


@dataclass
class ClusterDiff:
    diffs: list[ObjectDiff] = field(default_factory=list)  # one per object that would change
    errors: list[str] = field(default_factory=list)  # one line per object that could not be compared
    compared: int = 0


def diff_cluster(kube: Kube, objects: Sequence[Obj], opts: ApplyOptions) -> ClusterDiff:
    """Dry-run apply each object (in apply order) and diff it against its live version."""
    members, errors = prepare(kube, objects, opts, applyset_id(opts.applyset, opts.namespace))
    if errors:
        return ClusterDiff(errors=errors)
    result = ClusterDiff()
    live_side: list[Obj] = []
    merged_side: list[Obj] = []
    by_key = {m.key: m for m in members}
    for stage in order_for_apply(m.obj for m in members):
        for obj in stage:
            m = by_key[key_of(obj)]
            try:
                live = kube.get(m.res, m.key.namespace, m.key.name)
                merged = kube.apply(m.obj, opts.field_manager, opts.force, dry_run=True)
            except ApiError as err:
                result.errors.append(explain(m.key, err))
                continue
            result.compared += 1
            if live is not None:
                live_side.append(normalise(live) or {})
            merged_side.append(normalise(merged) or {})
    result.diffs = diff_objects(live_side, merged_side, LABELS)
    return result
