"""The CRDs of the standalone install (``deploy/crds/crds.yaml``), generated from one table.

Every KServe kind the daemon reads, and the others a KServe user creates (TrainedModel, LocalModelNode), with
KServe's names, scope, served versions, status subresource and printer columns (``config/crd/full`` in
kserve/kserve) but a schema of our own: structural, ``spec`` kept as sent (``x-kubernetes-preserve-unknown-fields``)
with only the fields KServe requires, ``status`` typed where the daemon writes it (conditions as a map keyed by
``type``, so server-side apply merges them condition by condition). What KServe's full schemas refuse beyond the
required fields is left to the compiler's own checks (``kserve-compile validate``).

LLMInferenceService and its Config are served as ``v1alpha2`` only: KServe also serves ``v1alpha1`` through a
conversion webhook this install does not run (``render`` converts ``v1alpha1`` files offline).

``python -m kserve_compile.apply.crds`` prints the file; a test checks the file is exactly that output.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import yaml

from kserve_compile import constants as C

GROUP = "serving.kserve.io"
READY = ("Ready", "string", ".status.conditions[?(@.type=='Ready')].status")
REASON = ("Reason", "string", ".status.conditions[?(@.type=='Ready')].reason")
URL = ("URL", "string", ".status.url")
AGE = ("Age", "date", ".metadata.creationTimestamp")
CONDITIONS, UNTYPED, NONE = "conditions", "untyped", "none"
RUNTIME_COLUMNS = (
    ("Disabled", "boolean", ".spec.disabled"),
    ("ModelType", "string", ".spec.supportedModelFormats[*].name"),
    ("Containers", "string", ".spec.containers[*].name"),
    AGE,
)


@dataclass(frozen=True)
class Crd:
    kind: str
    plural: str
    version: str
    scope: str = "Namespaced"
    short_names: tuple[str, ...] = ()
    required: tuple[str, ...] = ()  # spec fields KServe's schema requires
    status_subresource: bool = True
    status: str = CONDITIONS  # CONDITIONS: status.conditions typed (KServe's Ready family); UNTYPED; NONE: no status
    columns: tuple[tuple[str, str, str], ...] = ()
    top_level: tuple[tuple[str, str], ...] = ()  # fields beside spec: (name, type)


TABLE: tuple[Crd, ...] = (
    Crd(C.KIND_ISVC, "inferenceservices", "v1beta1", short_names=("isvc",), required=("predictor",),
        columns=(URL, READY, AGE)),
    Crd(C.KIND_IG, "inferencegraphs", "v1alpha1", short_names=("ig",), required=("nodes",), columns=(URL, READY, AGE)),
    Crd(C.KIND_TM, "trainedmodels", "v1alpha1", short_names=("tm",), required=("inferenceService", "model"),
        columns=(URL, READY, AGE)),
    Crd(C.KIND_SR, "servingruntimes", "v1alpha1", required=("containers",), status_subresource=False,
        status=NONE, columns=RUNTIME_COLUMNS),
    Crd(C.KIND_CSR, "clusterservingruntimes", "v1alpha1", scope="Cluster", required=("containers",),
        status_subresource=False, status=NONE, columns=RUNTIME_COLUMNS),
    Crd(C.KIND_CSC, "clusterstoragecontainers", "v1alpha1", scope="Cluster",
        required=("container", "supportedUriFormats"), status_subresource=False, status=NONE,
        top_level=(("disabled", "boolean"),)),
    Crd(C.KIND_LLMISVC, "llminferenceservices", "v1alpha2", short_names=("llmisvc",),
        columns=(URL, READY, REASON, AGE, ("URLs", "string", ".status.addresses[*].url"))),
    Crd(C.KIND_LLMISVC_CONFIG, "llminferenceserviceconfigs", "v1alpha2", columns=(READY, REASON, AGE)),
    Crd(C.KIND_LOCAL_MODEL_CACHE, "localmodelcaches", "v1alpha1", scope="Cluster",
        required=("modelSize", "nodeGroups", "sourceModelUri"), status=UNTYPED),
    Crd(C.KIND_LOCAL_MODEL_NAMESPACE_CACHE, "localmodelnamespacecaches", "v1alpha1",
        required=("modelSize", "nodeGroups", "sourceModelUri"), status=UNTYPED),
    Crd(C.KIND_LOCAL_MODEL_NODE_GROUP, "localmodelnodegroups", "v1alpha1", scope="Cluster",
        required=("persistentVolumeClaimSpec", "persistentVolumeSpec", "storageLimit"), status_subresource=False,
        status=UNTYPED),
    Crd(C.KIND_LOCAL_MODEL_NODE, "localmodelnodes", "v1alpha1", scope="Cluster", required=("localModels",),
        status=UNTYPED),
)  # fmt: skip

_INT64 = {"type": "integer", "format": "int64"}
_CONDITIONS = {
    "type": "array",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
    "items": {
        "type": "object",
        "required": ["type", "status"],
        "properties": {
            "type": {"type": "string"},
            "status": {"type": "string"},
            "severity": {"type": "string"},
            "reason": {"type": "string"},
            "message": {"type": "string"},
            "lastTransitionTime": {"type": "string"},
            "observedGeneration": _INT64,
        },
    },
}


def _schema(crd: Crd) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if crd.required:
        spec["required"] = list(crd.required)
    properties: dict[str, Any] = {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": spec,
    }
    properties.update((name, {"type": type_}) for name, type_ in crd.top_level)
    if crd.status != NONE:
        status: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        if crd.status == CONDITIONS:
            status["properties"] = {"observedGeneration": _INT64, "url": {"type": "string"}, "conditions": _CONDITIONS}
        properties["status"] = status
    return {"type": "object", "properties": properties}


def manifest(crd: Crd) -> dict[str, Any]:
    names: dict[str, Any] = {
        "kind": crd.kind,
        "listKind": f"{crd.kind}List",
        "plural": crd.plural,
        "singular": crd.kind.lower(),
    }
    if crd.short_names:
        names["shortNames"] = list(crd.short_names)
    version: dict[str, Any] = {
        "name": crd.version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": _schema(crd)},
    }
    if crd.status_subresource:
        version["subresources"] = {"status": {}}
    if crd.columns:
        version["additionalPrinterColumns"] = [{"name": n, "type": t, "jsonPath": p} for n, t, p in crd.columns]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{crd.plural}.{GROUP}"},
        "spec": {"group": GROUP, "scope": crd.scope, "names": names, "versions": [version]},
    }


HEADER = (
    "# KServe's CRDs for clusters WITHOUT KServe (the standalone overlay); on a cluster that runs KServe they would\n"
    "# replace its full CRDs. Generated by `python -m kserve_compile.apply.crds` from the table in\n"
    "# kserve_compile/apply/crds.py; tests/apply/test_apply_deploy.py fails when the two disagree. Do not edit by hand.\n"
)


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # the schema fragments are shared dicts; the file spells each one out


def render() -> str:
    return HEADER + yaml.dump_all([manifest(c) for c in TABLE], Dumper=_Dumper, sort_keys=False, width=120)


if __name__ == "__main__":
    sys.stdout.write(render())
