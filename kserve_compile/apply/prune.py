"""Prune: delete the ApplySet members the render no longer has (as Flux's ``ssa`` DeleteAll and kubectl's
ApplySet prune do).

Only members this tool manages are deleted, never Namespaces or CRDs, never an object another controller owns,
never more than the mass-deletion guard allows, children before the objects they depend on (reverse apply order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kserve_compile import constants as C
from kserve_compile.apply.errors import explain
from kserve_compile.apply.kube import ApiError, Kube
from kserve_compile.apply.members import Member
from kserve_compile.apply.objects import NEVER_PRUNE_KINDS, Obj, ObjKey, key_of, managers_of, order_for_delete
from kserve_compile.apply.report import KEPT, PRUNED, ApplyOptions, ApplyReport, Change


def prune(
    kube: Kube,
    opts: ApplyOptions,
    members: Sequence[Member],
    listed: dict[ObjKey, Obj],
    report: ApplyReport,
    require_leader: Callable[[], None],
) -> None:
    """Delete every listed member not in ``members`` that may be deleted; reasons for the rest go in ``report``."""
    desired = {m.key for m in members}
    owner_uid = ((opts.owner or {}).get("metadata") or {}).get("uid")
    deletable: list[Obj] = []
    for key, obj in sorted(listed.items()):
        if key in desired:
            continue
        reason = keep_reason(obj, opts.field_manager, owner_uid)
        if reason:
            report.changes.append(Change(key, KEPT, reason))
        else:
            deletable.append(obj)
    if not deletable:
        return
    limit = max(opts.mass_prune_min, int(opts.mass_prune_ratio * len(listed)))
    if not opts.allow_mass_prune and (len(deletable) > limit or not members):
        report.errors.append(
            f"refusing to prune {len(deletable)} of {len(listed)} objects in ApplySet "
            f"{opts.namespace}/{opts.applyset} (limit {limit}"
            f"{'; the render is empty' if not members else ''}); rerun with --allow-mass-prune if intended"
        )
        return
    if opts.dry_run:
        report.changes.extend(Change(key_of(o), PRUNED, "server dry run") for o in order_for_delete(deletable))
        return
    require_leader()  # re-checked right before the DELETE batch
    for obj in order_for_delete(deletable):
        key = key_of(obj)
        if opts.record:
            opts.record.deleting(key)
        try:
            kube.delete(kube.resource_of(obj), key.namespace, key.name)
        except ApiError as err:
            if opts.record:
                opts.record.not_deleted(key)
            report.errors.append(explain(key, err))
            continue
        if opts.record:
            opts.record.forget(key)
        report.changes.append(Change(key, PRUNED))
        opts.progress(f"{key} pruned")


def keep_reason(obj: Obj, field_manager: str, owner_uid: str | None) -> str:
    """Why a member that left the render is kept ("" when it may be deleted)."""
    meta = obj.get("metadata") or {}
    if obj.get("kind") in NEVER_PRUNE_KINDS:
        return f"{obj.get('kind')}s are never pruned"
    if (meta.get("annotations") or {}).get(C.ANN_KC_PRUNE) == "disabled":
        return f"{C.ANN_KC_PRUNE}: disabled"
    if field_manager not in managers_of(obj):
        return f"field manager {field_manager!r} does not manage it"
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller") and ref.get("uid") != owner_uid:
            return f"controlled by {ref.get('kind')}/{ref.get('name')}"
    return ""
