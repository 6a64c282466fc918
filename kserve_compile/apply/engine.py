"""The apply loop: staged server-side apply with drift detection, ApplySet prune, and kstatus wait.

Algorithm (Flux's ssa engine plus kubectl's ApplySet, apply_ecosystem.md §6.2):

1. validate and resolve every object; drop ``spec.replicas`` where an HPA/KEDA scales the workload;
2. record the union of old and new GroupKinds on the ApplySet parent *before* touching members, so an
   interrupted run never loses track of objects;
3. LIST each GroupKind by ``applyset.kubernetes.io/part-of`` — this gives the live members for the drift
   check and the prune candidates in one request per GroupKind;
4. per stage, per object: dry-run apply, compare with live after normalisation, and write only what
   drifted (unchanged objects cost no write and keep their resourceVersion);
5. prune — only after every apply succeeded, only members this tool manages, never Namespaces/CRDs,
   never more than the mass-deletion guard allows;
6. narrow the parent's GroupKinds to the current set.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kserve_compile import __version__
from kserve_compile import constants as C
from kserve_compile.apply import kstatus
from kserve_compile.apply.kube import (
    ApiError,
    ClusterRefused,
    ClusterUnreachable,
    Kube,
    Resource,
)
from kserve_compile.apply.livecache import AppliedRecord, LiveCache
from kserve_compile.apply.objects import (
    NEVER_PRUNE_KINDS,
    Obj,
    ObjKey,
    applyset_id,
    has_drifted,
    key_of,
    managers_of,
    normalise,
    order_for_apply,
    order_for_delete,
    owner_reference,
    strip_scaled_replicas,
    with_set_metadata,
)

CREATED, CONFIGURED, UNCHANGED, SKIPPED, PRUNED, RECREATED, KEPT = (
    "created",
    "configured",
    "unchanged",
    "skipped",
    "pruned",
    "recreated",
    "kept",
)


@dataclass
class ApplyOptions:
    field_manager: str = C.FIELD_MANAGER
    force: bool = True
    dry_run: bool = False  # server-side dry run: nothing is written
    prune: bool = False
    allow_mass_prune: bool = False
    recreate_on_immutable: bool = False
    applyset: str = "kserve-compile"  # name of the parent ConfigMap
    namespace: str = "default"  # parent namespace and default for namespaced objects without one
    owner: Obj | None = None  # daemon: the live InferenceService every object is owned by
    is_leader: Callable[[], bool] = lambda: True
    progress: Callable[[str], None] = lambda message: None
    mass_prune_min: int = 5
    mass_prune_ratio: float = 0.5
    sleep: Callable[[float], None] = time.sleep
    live: LiveCache | None = None  # daemon: read members and parents from informer caches
    record: AppliedRecord | None = None  # daemon: skip the dry run for objects verified unchanged


@dataclass(frozen=True)
class Change:
    key: ObjKey
    action: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.key} {self.action}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class ApplyReport:
    changes: list[Change] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    applied: list[Obj] = field(default_factory=list)  # the server's view of each member after this run
    set_id: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> Counter[str]:
        return Counter(c.action for c in self.changes)

    def summary(self) -> str:
        counts = self.counts()
        parts = [
            f"{counts[a]} {a}" for a in (CREATED, CONFIGURED, RECREATED, UNCHANGED, SKIPPED, PRUNED, KEPT) if counts[a]
        ]
        return ", ".join(parts) or "nothing to do"


class NotLeader(Exception):
    """Leadership was lost mid-run; the caller must stop writing."""


@dataclass
class _Member:
    obj: Obj  # what we send (with set label / owner reference)
    key: ObjKey
    res: Resource


class Applier:
    def __init__(self, kube: Kube, opts: ApplyOptions) -> None:
        self.kube = kube
        self.opts = opts
        self.set_id = applyset_id(opts.applyset, opts.namespace)
        self.parent_res = kube.resource("v1", "ConfigMap")

    # --- preparation --------------------------------------------------------------------------
    def prepare(self, objects: Sequence[Obj]) -> tuple[list[_Member], list[str]]:
        members: list[_Member] = []
        errors: list[str] = []
        seen: set[ObjKey] = set()
        owner = owner_reference(self.opts.owner) if self.opts.owner else None
        for index, obj in enumerate(strip_scaled_replicas(list(objects))):
            where = f"object #{index + 1}"
            if not isinstance(obj, dict) or not obj.get("apiVersion") or not obj.get("kind"):
                errors.append(f"{where}: apiVersion and kind are required")
                continue
            name = (obj.get("metadata") or {}).get("name")
            if not name:
                errors.append(f"{where} ({obj['kind']}): metadata.name is required")
                continue
            try:
                res = self.kube.resource_of(obj)
            except (ClusterUnreachable, ClusterRefused):
                raise  # one clear error naming the server, not one line per object
            except ApiError as err:
                errors.append(f"{obj['kind']}/{name}: {err.message}")
                continue
            obj = dict(obj)
            meta = dict(obj.get("metadata") or {})
            if res.namespaced:
                meta.setdefault("namespace", self.opts.namespace)
            else:
                meta.pop("namespace", None)
            obj["metadata"] = meta
            key = key_of(obj)
            part_of = (meta.get("labels") or {}).get(C.LABEL_APPLYSET_PART_OF)
            if part_of and part_of != self.set_id:
                errors.append(
                    f"{key}: metadata.labels[{C.LABEL_APPLYSET_PART_OF}] already names another "
                    f"ApplySet ({part_of}); remove the label from the input"
                )
                continue
            if key in seen:
                errors.append(f"{key}: appears more than once in the input")
                continue
            seen.add(key)
            own = (
                owner
                if res.namespaced
                and meta.get("namespace") == (self.opts.owner or {}).get("metadata", {}).get("namespace")
                else None
            )
            members.append(_Member(with_set_metadata(obj, self.set_id, own), key, res))
        return members, errors

    # --- the parent ---------------------------------------------------------------------------
    def _parent(self, group_kinds: Sequence[str], namespaces: Sequence[str]) -> Obj:
        annotations = {
            C.ANN_APPLYSET_TOOLING: f"{C.APPLYSET_TOOLING_PREFIX}v{__version__}",
            C.ANN_APPLYSET_GROUP_KINDS: ",".join(sorted(set(group_kinds))),
        }
        extra = sorted(set(namespaces) - {self.opts.namespace, ""})
        if extra:
            annotations[C.ANN_APPLYSET_NAMESPACES] = ",".join(extra)
        meta: dict[str, Any] = {
            "name": self.opts.applyset,
            "namespace": self.opts.namespace,
            "labels": {C.LABEL_APPLYSET_ID: self.set_id},
            "annotations": annotations,
        }
        if self.opts.owner:
            meta["ownerReferences"] = [owner_reference(self.opts.owner)]
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}

    def _read_parent(self) -> tuple[Obj | None, list[str], list[str]]:
        live = self.opts.live.parent(self.opts.namespace, self.opts.applyset) if self.opts.live else None
        if live is None:
            live = self.kube.get(self.parent_res, self.opts.namespace, self.opts.applyset)
        if live is None:
            return None, [], []
        meta = live.get("metadata") or {}
        ann, labels = meta.get("annotations") or {}, meta.get("labels") or {}
        tooling = ann.get(C.ANN_APPLYSET_TOOLING, "")
        where = f"ConfigMap/{self.opts.namespace}/{self.opts.applyset}"
        if labels.get(C.LABEL_APPLYSET_ID) != self.set_id or not tooling:
            raise ApplySetError(f"{where} exists but is not an ApplySet parent; choose another --applyset name")
        if not tooling.startswith(C.APPLYSET_TOOLING_PREFIX):
            raise ApplySetError(f"{where} belongs to another tool ({tooling}); refusing to change it")
        gks = [g for g in ann.get(C.ANN_APPLYSET_GROUP_KINDS, "").split(",") if g]
        namespaces = [n for n in ann.get(C.ANN_APPLYSET_NAMESPACES, "").split(",") if n]
        return live, gks, namespaces

    def _write_parent(self, live: Obj | None, desired: Obj) -> Obj | None:
        if live is not None and _parent_fields(live) == _parent_fields(desired):
            return live
        if self.opts.dry_run:
            return desired
        self._require_leader()
        return self.kube.apply(desired, self.opts.field_manager, force=True)

    # --- run ----------------------------------------------------------------------------------
    def run(self, objects: Sequence[Obj]) -> ApplyReport:
        report = ApplyReport(set_id=self.set_id)
        members, errors = self.prepare(objects)
        if errors:
            report.errors = errors
            return report
        try:
            parent, prev_gks, prev_ns = self._read_parent()
            cur_gks = sorted({m.key.group_kind for m in members})
            cur_ns = sorted({m.key.namespace for m in members if m.key.namespace})
            parent = self._write_parent(
                parent, self._parent(sorted(set(prev_gks) | set(cur_gks)), sorted(set(prev_ns) | set(cur_ns)))
            )
            listed = self._list_members(
                sorted(set(prev_gks) | set(cur_gks)), sorted(set(prev_ns) | set(cur_ns) | {self.opts.namespace})
            )
            for stage in order_for_apply(m.obj for m in members):
                keys = [key_of(o) for o in stage]
                for member in (next(m for m in members if m.key == k) for k in keys):
                    self._apply_one(member, listed, report)
            if report.errors:
                report.errors.append("prune skipped: not every object was applied")
                return report
            if self.opts.prune:
                self._prune(members, listed, report)
                if report.errors:
                    return report
                self._write_parent(parent, self._parent(cur_gks, cur_ns))
        except (ApiError, ApplySetError) as err:
            report.errors.append(str(err))
        except NotLeader:
            report.errors.append("leadership lost; stopped before writing")
        return report

    def _list_members(self, gks: Sequence[str], namespaces: Sequence[str]) -> dict[ObjKey, Obj]:
        out: dict[ObjKey, Obj] = {}
        selector = f"{C.LABEL_APPLYSET_PART_OF}={self.set_id}"
        for gk in gks:
            cached = self.opts.live.members(self.set_id, gk) if self.opts.live else None
            if cached is not None:
                out.update((k, o) for k, o in cached.items() if k.namespace in namespaces or not k.namespace)
                continue
            res = self._resource_for_gk(gk)
            if res is None:
                continue
            for ns in namespaces if res.namespaced else [""]:
                items, _ = self.kube.list(res, ns, label_selector=selector)
                for item in items:
                    out[key_of(item)] = item
        return out

    def _resource_for_gk(self, gk: str) -> Resource | None:
        kind, _, group = gk.partition(".")
        try:
            return self.kube.resource_for_group_kind(group, kind)
        except ApiError:
            return None  # a kind the server no longer serves has no members left to prune

    def _apply_one(self, m: _Member, listed: dict[ObjKey, Obj], report: ApplyReport) -> None:
        ann = (m.obj.get("metadata") or {}).get("annotations") or {}
        policy = ann.get(C.ANN_KC_SSA, "Merge")
        if policy == "Ignore":
            report.changes.append(Change(m.key, SKIPPED, f"{C.ANN_KC_SSA}: Ignore"))
            return
        meta = m.obj["metadata"]
        live = listed.get(m.key)
        if live is None and not (self.opts.live and self.opts.live.covers(m.key.group_kind) and policy == "Merge"):
            live = self.kube.get(m.res, meta.get("namespace", ""), meta["name"])
        if live is not None and policy == "IfNotPresent":
            report.changes.append(Change(m.key, SKIPPED, f"{C.ANN_KC_SSA}: IfNotPresent and it exists"))
            return
        if live is not None and self.opts.record and self.opts.record.unchanged(m.key, m.obj, live):
            report.changes.append(Change(m.key, UNCHANGED))
            report.applied.append(live)
            return
        recreate = self.opts.recreate_on_immutable or ann.get(C.ANN_KC_RECREATE) == "enabled"
        recreated = False
        try:
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
                live, recreated = None, True
                dry = self.kube.apply(m.obj, self.opts.field_manager, self.opts.force, dry_run=True)
            if live is not None and not has_drifted(live, dry):
                report.changes.append(Change(m.key, UNCHANGED))
                report.applied.append(live)
                if self.opts.record:
                    self.opts.record.verified(m.key, m.obj, live)
                return
            action = RECREATED if recreated else (CREATED if live is None else CONFIGURED)
            if self.opts.dry_run:
                report.changes.append(Change(m.key, action, "server dry run"))
                report.applied.append(dry)
                return
            self._require_leader()
            result = self.kube.apply(m.obj, self.opts.field_manager, self.opts.force)
            if self.opts.record:
                self.opts.record.verified(m.key, m.obj, result)
            report.changes.append(Change(m.key, action))
            report.applied.append(result)
            self.opts.progress(f"{m.key} {action}")
        except ApiError as err:
            report.errors.append(explain(m.key, err))

    def _delete_and_wait(self, m: _Member, attempts: int = 30) -> None:
        meta = m.obj["metadata"]
        self.kube.delete(m.res, meta.get("namespace", ""), meta["name"], propagation="Foreground")
        for i in range(attempts):
            if self.kube.get(m.res, meta.get("namespace", ""), meta["name"]) is None:
                return
            self.opts.sleep(min(0.2 * 2**i, 2.0))
        raise ApiError(504, "Timeout", f"{m.key} was not deleted in time for recreation")

    def _prune(self, members: list[_Member], listed: dict[ObjKey, Obj], report: ApplyReport) -> None:
        desired = {m.key for m in members}
        owner_uid = ((self.opts.owner or {}).get("metadata") or {}).get("uid")
        deletable: list[Obj] = []
        for key, obj in sorted(listed.items()):
            if key in desired:
                continue
            reason = self._keep_reason(obj, owner_uid)
            if reason:
                report.changes.append(Change(key, KEPT, reason))
            else:
                deletable.append(obj)
        if not deletable:
            return
        limit = max(self.opts.mass_prune_min, int(self.opts.mass_prune_ratio * len(listed)))
        if not self.opts.allow_mass_prune and (len(deletable) > limit or not members):
            report.errors.append(
                f"refusing to prune {len(deletable)} of {len(listed)} objects in ApplySet "
                f"{self.opts.namespace}/{self.opts.applyset} (limit {limit}"
                f"{'; the render is empty' if not members else ''}); rerun with --allow-mass-prune if intended"
            )
            return
        if self.opts.dry_run:
            report.changes.extend(Change(key_of(o), PRUNED, "server dry run") for o in order_for_delete(deletable))
            return
        self._require_leader()  # re-checked right before the DELETE batch
        for obj in order_for_delete(deletable):
            key = key_of(obj)
            res = self.kube.resource_of(obj)
            try:
                self.kube.delete(res, key.namespace, key.name)
                if self.opts.record:
                    self.opts.record.forget(key)
                report.changes.append(Change(key, PRUNED))
                self.opts.progress(f"{key} pruned")
            except ApiError as err:
                report.errors.append(explain(key, err))

    def _keep_reason(self, obj: Obj, owner_uid: str | None) -> str:
        meta = obj.get("metadata") or {}
        if obj.get("kind") in NEVER_PRUNE_KINDS:
            return f"{obj.get('kind')}s are never pruned"
        if (meta.get("annotations") or {}).get(C.ANN_KC_PRUNE) == "disabled":
            return f"{C.ANN_KC_PRUNE}: disabled"
        if self.opts.field_manager not in managers_of(obj):
            return f"field manager {self.opts.field_manager!r} does not manage it"
        for ref in meta.get("ownerReferences") or []:
            if ref.get("controller") and ref.get("uid") != owner_uid:
                return f"controlled by {ref.get('kind')}/{ref.get('name')}"
        return ""

    def _require_leader(self) -> None:
        if not self.opts.is_leader():
            raise NotLeader()


class ApplySetError(Exception):
    pass


def _parent_fields(obj: Obj) -> tuple[Any, ...]:
    meta = obj.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k == C.LABEL_APPLYSET_ID}
    ann = {k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith("applyset.kubernetes.io/")}
    refs = [{k: r.get(k) for k in ("kind", "name", "uid")} for r in meta.get("ownerReferences") or []]
    return labels, ann, refs


def explain(key: ObjKey, err: ApiError) -> str:
    """One readable line per failure: immutable fields and ownership conflicts say what to do."""
    fields = sorted({str(c.get("field", "")).lstrip(".") for c in err.causes if c.get("field")})
    if err.is_immutable:
        where = ", ".join(fields) or "a field"
        return (
            f"{key}: {where} is immutable and the new value differs; rerun with --recreate-on-immutable "
            f"(or annotate {C.ANN_KC_RECREATE}: enabled) to delete and recreate it — this causes downtime"
        )
    if err.is_conflict and err.causes:
        owners = sorted(
            {
                f"{str(c.get('field', '')).lstrip('.')} (owned by "
                f"{str(c.get('message', '')).split(chr(34))[1] if chr(34) in str(c.get('message', '')) else '?'})"
                for c in err.causes
            }
        )
        return f"{key}: conflict: {', '.join(owners)}; rerun with --force-conflicts to take ownership"
    if err.status == 0:
        return f"{key}: cannot reach the API server: {err.message}"
    return f"{key}: {err.status} {err.reason}: {err.message}".rstrip(": ")


# --- diff against the cluster -----------------------------------------------------------------
@dataclass
class ObjectDiff:
    key: ObjKey
    action: str  # created | configured | unchanged
    live: Obj | None
    merged: Obj | None


def diff_cluster(kube: Kube, objects: Sequence[Obj], opts: ApplyOptions) -> tuple[list[ObjectDiff], list[str]]:
    """Dry-run apply each object and compare with its live version (nothing is written)."""
    applier = Applier(kube, opts)
    members, errors = applier.prepare(objects)
    if errors:
        return [], errors
    out: list[ObjectDiff] = []
    for stage in order_for_apply(m.obj for m in members):
        for obj in stage:
            m = next(x for x in members if x.key == key_of(obj))
            meta = m.obj["metadata"]
            try:
                live = kube.get(m.res, meta.get("namespace", ""), meta["name"])
                dry = kube.apply(m.obj, opts.field_manager, opts.force, dry_run=True)
            except ApiError as err:
                errors.append(explain(m.key, err))
                continue
            if live is None:
                out.append(ObjectDiff(m.key, CREATED, None, normalise(dry)))
            elif has_drifted(live, dry):
                out.append(ObjectDiff(m.key, CONFIGURED, normalise(live), normalise(dry)))
            else:
                out.append(ObjectDiff(m.key, UNCHANGED, normalise(live), normalise(dry)))
    return out, errors


# --- wait -------------------------------------------------------------------------------------
@dataclass
class WaitResult:
    ok: bool
    statuses: dict[ObjKey, kstatus.Status]
    timed_out: bool = False


def wait_for(
    kube: Kube,
    objects: Sequence[Obj],
    timeout: float,
    *,
    interval: float = 2.0,
    fail_fast: bool = True,
    progress: Callable[[str], None] = lambda m: None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> WaitResult:
    """Poll every object until all are Current, one Failed (fail_fast), or ``timeout`` passes."""
    deadline = clock() + timeout
    last: dict[ObjKey, kstatus.Status] = {}
    refs = [(key_of(o), kube.resource_of(o)) for o in objects]
    while True:
        for key, res in refs:
            status = kstatus.compute(kube.get(res, key.namespace, key.name))
            if last.get(key) != status:
                progress(f"{key}: {status.state}" + (f" — {status.message}" if status.message else ""))
            last[key] = status
        states = {s.state for s in last.values()}
        if states <= {kstatus.CURRENT}:
            progress(f"all {len(last)} objects are ready")
            return WaitResult(True, last)
        if kstatus.FAILED in states and (fail_fast or states <= {kstatus.CURRENT, kstatus.FAILED}):
            return WaitResult(False, last)
        if clock() >= deadline:
            return WaitResult(False, last, timed_out=True)
        sleep(interval)
