"""The verb ``apply``: staged server-side apply with drift detection and ApplySet prune.

Algorithm (Flux's ``ssa`` ResourceManager.ApplyAllStaged plus kubectl's ApplySet, apply_ecosystem.md §6.2):

1. validate and resolve every object (``members.py``); drop ``spec.replicas`` where an HPA/KEDA scales the workload;
2. record the union of old and new GroupKinds on the ApplySet parent *before* touching members (``applyset.py``);
3. LIST each GroupKind by ``applyset.kubernetes.io/part-of`` — the live members for the drift check and the prune
   candidates in one request per GroupKind (the daemon reads them from its informer caches instead);
4. per stage, per object: dry-run apply, compare with live after normalisation, and write only what drifted
   (unchanged objects cost no write and keep their resourceVersion);
5. prune (``prune.py``) — only after every apply succeeded;
6. narrow the parent's GroupKinds to the current set.
"""

from __future__ import annotations

from collections.abc import Sequence

from kserve_compile import constants as C
from kserve_compile.apply import applyset
from kserve_compile.apply.errors import ApplySetError, NotLeader, explain
from kserve_compile.apply.kube import ApiError, Kube, Resource
from kserve_compile.apply.members import Member, prepare
from kserve_compile.apply.objects import Obj, ObjKey, applyset_id, has_drifted, key_of, order_for_apply
from kserve_compile.apply.prune import prune
from kserve_compile.apply.report import (
    CONFIGURED,
    CREATED,
    RECREATED,
    SKIPPED,
    UNCHANGED,
    ApplyOptions,
    ApplyReport,
    Change,
)

__all__ = ["Applier"]


class Applier:
    def __init__(self, kube: Kube, opts: ApplyOptions) -> None:
        self.kube = kube
        self.opts = opts
        self.set_id = applyset_id(opts.applyset, opts.namespace)
        kube.resource("v1", "ConfigMap")  # the parent's kind: an unreachable or refusing server fails here, once

    def prepare(self, objects: Sequence[Obj]) -> tuple[list[Member], list[str]]:
        return prepare(self.kube, objects, self.opts, self.set_id)

    def run(self, objects: Sequence[Obj]) -> ApplyReport:
        report = ApplyReport(set_id=self.set_id)
        members, errors = self.prepare(objects)
        if errors:
            report.errors = errors
            return report
        try:
            self._run(members, report)
        except (ApiError, ApplySetError) as err:
            report.errors.append(str(err))
        except NotLeader:
            report.errors.append("leadership lost; stopped before writing")
        return report

    def _run(self, members: list[Member], report: ApplyReport) -> None:
        parent = applyset.read_parent(self.kube, self.opts, self.set_id)
        cur_gks = sorted({m.key.group_kind for m in members})
        cur_ns = sorted({m.key.namespace for m in members if m.key.namespace})
        all_gks = sorted(set(parent.group_kinds) | set(cur_gks))
        all_ns = sorted(set(parent.namespaces) | set(cur_ns))
        live_parent = self._write_parent(parent.live, all_gks, all_ns)
        listed = self._list_members(all_gks, sorted({*all_ns, self.opts.namespace}))
        by_key = {m.key: m for m in members}
        for stage in order_for_apply(m.obj for m in members):
            for obj in stage:
                self._apply_one(by_key[key_of(obj)], listed, report)
        if report.errors:
            report.errors.append("prune skipped: not every object was applied")
            return
        if self.opts.prune:
            prune(self.kube, self.opts, members, listed, report, self._require_leader)
            if not report.errors:
                self._write_parent(live_parent, cur_gks, cur_ns)

    # --- the parent ---------------------------------------------------------------------------
    def _write_parent(self, live: Obj | None, group_kinds: Sequence[str], namespaces: Sequence[str]) -> Obj | None:
        desired = applyset.desired_parent(self.opts, self.set_id, group_kinds, namespaces)
        if live is not None and applyset.same_parent(live, desired):
            return live
        if self.opts.dry_run:
            return desired
        self._require_leader()
        return self.kube.apply(desired, self.opts.field_manager, force=True)

    # --- members ------------------------------------------------------------------------------
    def _list_members(self, gks: Sequence[str], namespaces: Sequence[str]) -> dict[ObjKey, Obj]:
        out: dict[ObjKey, Obj] = {}
        selector = f"{C.LABEL_APPLYSET_PART_OF}={self.set_id}"
        for gk in gks:
            cached = self.opts.live.members(self.set_id, gk) if self.opts.live else None
            if (
                cached is not None
                and self.opts.record
                and not self.opts.record.members(self.set_id, gk) <= cached.keys()
            ):
                cached = None  # the cache has yet to see an object we wrote (prune would miss it): ask the server
            if cached is not None:
                out.update((k, o) for k, o in cached.items() if k.namespace in namespaces or not k.namespace)
                continue
            res = self._resource_for_gk(gk)
            if res is None:
                continue
            for ns in namespaces if res.namespaced else [""]:
                items, _ = self.kube.list(res, ns, label_selector=selector)
                out.update((key_of(item), item) for item in items)
        return out

    def _resource_for_gk(self, gk: str) -> Resource | None:
        kind, _, group = gk.partition(".")
        try:
            return self.kube.resource_for_group_kind(group, kind)
        except ApiError:
            return None  # a kind the server no longer serves has no members left to prune

    def _live(self, m: Member, listed: dict[ObjKey, Obj], policy: str) -> Obj | None:
        """The live object: from the listed members, else a GET (skipped where an informer cache covers the kind)."""
        live = listed.get(m.key)
        if live is None and not (self.opts.live and self.opts.live.covers(m.key.group_kind) and policy == "Merge"):
            live = self.kube.get(m.res, m.key.namespace, m.key.name)
        return live

    def _apply_one(self, m: Member, listed: dict[ObjKey, Obj], report: ApplyReport) -> None:
        ann = (m.obj.get("metadata") or {}).get("annotations") or {}
        policy = ann.get(C.ANN_KC_SSA, "Merge")
        if policy == "Ignore":
            report.changes.append(Change(m.key, SKIPPED, f"{C.ANN_KC_SSA}: Ignore"))
            return
        live = self._live(m, listed, policy)
        if live is not None and policy == "IfNotPresent":
            report.changes.append(Change(m.key, SKIPPED, f"{C.ANN_KC_SSA}: IfNotPresent and it exists"))
            return
        if live is not None and self.opts.record and self.opts.record.unchanged(m.key, m.obj, live):
            report.changes.append(Change(m.key, UNCHANGED))
            report.applied.append(live)
            return
        try:
            self._dry_run_then_apply(m, live, ann, report)
        except ApiError as err:
            report.errors.append(explain(m.key, err))

    def _dry_run_then_apply(self, m: Member, live: Obj | None, ann: dict[str, str], report: ApplyReport) -> None:
        if live is None and not self.opts.dry_run:  # nothing to compare with: a dry run would only cost a request
            self._write(m, CREATED, report)
            return
        recreate = self.opts.recreate_on_immutable or ann.get(C.ANN_KC_RECREATE) == "enabled"
        try:
            dry = self.kube.apply(m.obj, self.opts.field_manager, self.opts.force, dry_run=True)
        except ApiError as err:
            if not (err.is_immutable and recreate and live is not None):
                raise
            if self.opts.dry_run:
                report.changes.append(Change(m.key, RECREATED, "server dry run; immutable field changed"))
                return
            self.opts.progress(f"{m.key}: immutable field changed; deleting and recreating (downtime)")
            self._require_leader()
            self._delete_and_wait(m)
            self._write(m, RECREATED, report)
            return
        if live is not None and not has_drifted(live, dry):
            report.changes.append(Change(m.key, UNCHANGED))
            report.applied.append(live)
            if self.opts.record:
                self.opts.record.verified(m.key, m.obj, live)
            return
        action = CREATED if live is None else CONFIGURED
        if self.opts.dry_run:
            report.changes.append(Change(m.key, action, "server dry run"))
            report.applied.append(dry)
            return
        self._write(m, action, report)

    def _write(self, m: Member, action: str, report: ApplyReport) -> None:
        """The real apply of one member (the daemon's record holds its watch event until the answer is in)."""
        self._require_leader()
        record = self.opts.record
        if record:
            record.writing(m.key)
        try:
            result = self.kube.apply(m.obj, self.opts.field_manager, self.opts.force)
        except ApiError:
            if record:
                record.abandoned(m.key)
            raise
        if record:
            record.verified(m.key, m.obj, result)
        report.changes.append(Change(m.key, action))
        report.applied.append(result)
        self.opts.progress(f"{m.key} {action}")

    def _delete_and_wait(self, m: Member, attempts: int = 30) -> None:
        self.kube.delete(m.res, m.key.namespace, m.key.name, propagation="Foreground")
        for i in range(attempts):
            if self.kube.get(m.res, m.key.namespace, m.key.name) is None:
                return
            self.opts.sleep(min(0.2 * 2**i, 2.0))
        raise ApiError(504, "Timeout", f"{m.key} was not deleted in time for recreation")

    def _require_leader(self) -> None:
        if not self.opts.is_leader():
            raise NotLeader()
