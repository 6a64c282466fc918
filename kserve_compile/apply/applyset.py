"""The ApplySet parent (KEP-3659): a ConfigMap recording which GroupKinds and namespaces its members span.

As kubectl's ApplySet (``k8s.io/kubectl/pkg/cmd/apply/applyset.go``): the parent is written with the union of the
old and new GroupKinds *before* any member is touched, so an interrupted run never loses track of an object, and
narrowed to the current set once pruning is done. A ConfigMap of that name that is not a parent, or is another
tool's parent, is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kserve_compile import __version__
from kserve_compile import constants as C
from kserve_compile.apply.errors import ApplySetError
from kserve_compile.apply.kube import Kube
from kserve_compile.apply.objects import Obj, owner_reference
from kserve_compile.apply.report import ApplyOptions


@dataclass
class ParentState:
    """The live parent (None: there is none yet) and the GroupKinds and extra namespaces it records."""

    live: Obj | None = None
    group_kinds: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)


def desired_parent(opts: ApplyOptions, set_id: str, group_kinds: Sequence[str], namespaces: Sequence[str]) -> Obj:
    annotations = {
        C.ANN_APPLYSET_TOOLING: f"{C.APPLYSET_TOOLING_PREFIX}v{__version__}",
        C.ANN_APPLYSET_GROUP_KINDS: ",".join(sorted(set(group_kinds))),
    }
    extra = sorted(set(namespaces) - {opts.namespace, ""})
    if extra:
        annotations[C.ANN_APPLYSET_NAMESPACES] = ",".join(extra)
    meta: dict[str, Any] = {
        "name": opts.applyset,
        "namespace": opts.namespace,
        "labels": {C.LABEL_APPLYSET_ID: set_id},
        "annotations": annotations,
    }
    if opts.owner:
        meta["ownerReferences"] = [owner_reference(opts.owner)]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def read_parent(kube: Kube, opts: ApplyOptions, set_id: str) -> ParentState:
    live = opts.live.parent(opts.namespace, opts.applyset) if opts.live else None
    if live is None:
        live = kube.get(kube.resource("v1", "ConfigMap"), opts.namespace, opts.applyset)
    if live is None:
        return ParentState()
    meta = live.get("metadata") or {}
    ann, labels = meta.get("annotations") or {}, meta.get("labels") or {}
    tooling = ann.get(C.ANN_APPLYSET_TOOLING, "")
    where = f"ConfigMap/{opts.namespace}/{opts.applyset}"
    if labels.get(C.LABEL_APPLYSET_ID) != set_id or not tooling:
        raise ApplySetError(f"{where} exists but is not an ApplySet parent; choose another --applyset name")
    if not tooling.startswith(C.APPLYSET_TOOLING_PREFIX):
        raise ApplySetError(f"{where} belongs to another tool ({tooling}); refusing to change it")
    return ParentState(
        live,
        [g for g in ann.get(C.ANN_APPLYSET_GROUP_KINDS, "").split(",") if g],
        [n for n in ann.get(C.ANN_APPLYSET_NAMESPACES, "").split(",") if n],
    )


def same_parent(live: Obj, desired: Obj) -> bool:
    """True when the live parent already records what ``desired`` would (no write needed)."""
    return _parent_fields(live) == _parent_fields(desired)


def _parent_fields(obj: Obj) -> tuple[Any, ...]:
    meta = obj.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k == C.LABEL_APPLYSET_ID}
    ann = {k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith("applyset.kubernetes.io/")}
    refs = [{k: r.get(k) for k in ("kind", "name", "uid")} for r in meta.get("ownerReferences") or []]
    return labels, ann, refs
