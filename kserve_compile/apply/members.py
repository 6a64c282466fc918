"""The objects of one run as ApplySet members: checked, resolved against discovery, labelled and owned.

Shared by ``apply`` and ``diff --cluster`` so that both send the server exactly the same objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kserve_compile import constants as C
from kserve_compile.apply.kube import ApiError, ClusterRefused, ClusterUnreachable, Kube, Resource
from kserve_compile.apply.objects import (
    Obj,
    ObjKey,
    key_of,
    owner_reference,
    strip_scaled_replicas,
    with_set_metadata,
)
from kserve_compile.apply.report import ApplyOptions


@dataclass
class Member:
    obj: Obj  # what we send (with set label / owner reference)
    key: ObjKey
    res: Resource


def prepare(kube: Kube, objects: Sequence[Obj], opts: ApplyOptions, set_id: str) -> tuple[list[Member], list[str]]:
    """Members in input order, and one error line per object that cannot be one (nothing is sent then)."""
    members: list[Member] = []
    errors: list[str] = []
    seen: set[ObjKey] = set()
    owner = owner_reference(opts.owner) if opts.owner else None
    owner_namespace = ((opts.owner or {}).get("metadata") or {}).get("namespace")
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
            res = kube.resource_of(obj)
        except (ClusterUnreachable, ClusterRefused):
            raise  # one clear error naming the server, not one line per object
        except ApiError as err:
            errors.append(f"{obj['kind']}/{name}: {err.message}")
            continue
        obj = _scoped(obj, res, opts.namespace)
        key = key_of(obj)
        part_of = (obj["metadata"].get("labels") or {}).get(C.LABEL_APPLYSET_PART_OF)
        if part_of and part_of != set_id:
            errors.append(
                f"{key}: metadata.labels[{C.LABEL_APPLYSET_PART_OF}] already names another "
                f"ApplySet ({part_of}); remove the label from the input"
            )
            continue
        if key in seen:
            errors.append(f"{key}: appears more than once in the input")
            continue
        seen.add(key)
        own = owner if res.namespaced and key.namespace == owner_namespace else None
        members.append(Member(with_set_metadata(obj, set_id, own), key, res))
    return members, errors


def _scoped(obj: Obj, res: Resource, namespace: str) -> Obj:
    """A copy with the namespace the server will give it: the default for namespaced kinds, none otherwise."""
    meta = dict(obj.get("metadata") or {})
    if res.namespaced:
        meta.setdefault("namespace", namespace)
    else:
        meta.pop("namespace", None)
    return {**obj, "metadata": meta}
