"""Pure helpers over Kubernetes objects as plain dicts: identity, apply order, normalisation.

The apply order is ``render``'s output order (``kserve_compile/emit/order.py``, the one kind-order table),
so ``kserve-compile render`` prints objects in the order ``apply`` and the daemon write them.

Nothing here talks to a cluster; everything is deterministic and safe to import anywhere.
"""

from __future__ import annotations

import base64
import copy
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from kserve_compile import constants as C
from kserve_compile.emit.order import APPLY_FIRST, sort_objects

Obj = dict[str, Any]


class ObjKey(NamedTuple):
    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{kind}/{self.namespace}/{self.name}" if self.namespace else f"{kind}/{self.name}"

    @property
    def group_kind(self) -> str:
        return group_kind(self.group, self.kind)


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` → ``("apps", "v1")``; ``v1`` → ``("", "v1")``."""
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version


def group_kind(group: str, kind: str) -> str:
    """ApplySet's ``Kind.group`` spelling (core kinds have no suffix)."""
    return f"{kind}.{group}" if group else kind


def key_of(obj: Obj, default_namespace: str = "") -> ObjKey:
    meta = obj.get("metadata") or {}
    group, _ = split_api_version(str(obj.get("apiVersion", "")))
    return ObjKey(
        group, str(obj.get("kind", "")), str(meta.get("namespace") or default_namespace), str(meta.get("name", ""))
    )


# --- apply order: the one table in kserve_compile.emit.order -------------------------------------
NEVER_PRUNE_KINDS = frozenset({"Namespace", "CustomResourceDefinition"})


def stage_of(obj: Obj) -> int:
    """0: the kinds ``emit.order.APPLY_FIRST`` names (Namespaces, CRDs), which must exist before the rest; 1: the rest."""
    group, _ = split_api_version(str(obj.get("apiVersion", "")))
    return 0 if (group, str(obj.get("kind", ""))) in APPLY_FIRST else 1


def order_for_apply(objs: Iterable[Obj]) -> list[list[Obj]]:
    """Objects in ``render``'s output order (``emit.order.sort_objects``), cut into stages at the APPLY_FIRST kinds."""
    stages: list[list[Obj]] = [[], []]
    for obj in sort_objects(objs):
        stages[stage_of(obj)].append(obj)
    return [stage for stage in stages if stage]


def order_for_delete(objs: Iterable[Obj]) -> list[Obj]:
    return [o for stage in reversed(order_for_apply(objs)) for o in reversed(stage)]


# --- normalisation for comparison ------------------------------------------------------------
_VOLATILE_META = ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink")


def normalise(obj: Obj | None) -> Obj | None:
    """The object without server bookkeeping and status; Secret values masked."""
    if obj is None:
        return None
    out = copy.deepcopy(obj)
    out.pop("status", None)
    meta = out.get("metadata") or {}
    for k in _VOLATILE_META:
        meta.pop(k, None)
    for k in ("labels", "annotations"):
        if k in meta and not meta[k]:
            del meta[k]
    if out.get("kind") == "Secret" and out.get("apiVersion") == "v1":
        for field in ("data", "stringData"):
            if isinstance(out.get(field), dict):
                out[field] = {k: _mask(v) for k, v in sorted(out[field].items())}
    return out


def _mask(value: Any) -> str:
    digest = hashlib.sha256(str(value).encode()).hexdigest()[:12]
    return f"*** (sha256:{digest})"


def has_drifted(live: Obj | None, dry_run: Obj) -> bool:
    """True when applying would change the live object (Flux compares the dry-run result, not the input)."""
    return normalise(live) != normalise(dry_run)


# --- policy: fields owned by other controllers ------------------------------------------------
def scaled_targets(objs: Iterable[Obj]) -> set[tuple[str, str, str]]:
    """(namespace, kind, name) of workloads an HPA, a KEDA ScaledObject or an HTTPScaledObject in ``objs`` scales."""
    out: set[tuple[str, str, str]] = set()
    for obj in objs:
        kind = obj.get("kind")
        group, _ = split_api_version(str(obj.get("apiVersion", "")))
        is_hpa = kind == "HorizontalPodAutoscaler" and group == "autoscaling"
        is_keda = (kind, group) in (("ScaledObject", "keda.sh"), ("HTTPScaledObject", "http.keda.sh"))
        if not (is_hpa or is_keda):
            continue
        ref = (obj.get("spec") or {}).get("scaleTargetRef") or {}
        if ref.get("name"):
            ns = (obj.get("metadata") or {}).get("namespace", "")
            out.add((ns, ref.get("kind") or "Deployment", ref["name"]))
    return out


def strip_scaled_replicas(objs: Sequence[Obj]) -> list[Obj]:
    """Copies of ``objs`` with ``spec.replicas`` removed from every workload an HPA/KEDA scales."""
    targets = scaled_targets(objs)
    out = []
    for obj in objs:
        meta = obj.get("metadata") or {}
        ident = (meta.get("namespace", ""), obj.get("kind"), meta.get("name"))
        if ident in targets and "replicas" in (obj.get("spec") or {}):
            obj = copy.deepcopy(obj)
            del obj["spec"]["replicas"]
        out.append(obj)
    return out


# --- ApplySet (KEP-3659) ----------------------------------------------------------------------
def applyset_id(name: str, namespace: str, kind: str = "ConfigMap", group: str = "") -> str:
    raw = f"{name}.{namespace}.{kind}.{group}".encode()
    digest = base64.urlsafe_b64encode(hashlib.sha256(raw).digest()).decode().rstrip("=")
    return f"applyset-{digest}-v1"


def with_set_metadata(obj: Obj, set_id: str, owner: Obj | None = None) -> Obj:
    """A copy carrying the ApplySet membership label (and, in daemon mode, an owner reference)."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    meta.setdefault("labels", {})[C.LABEL_APPLYSET_PART_OF] = set_id
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return out


def owner_reference(owner: Obj) -> Obj:
    meta = owner.get("metadata") or {}
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def managers_of(obj: Obj) -> set[str]:
    return {str(m.get("manager")) for m in (obj.get("metadata") or {}).get("managedFields") or []}
