"""The kinds a run reads, by ``(apiVersion, kind)``, and the one message for a KServe kind it does not read.

The core table lists what every InferenceService compiles against; each feature package (``graph``, ``llmisvc``,
``localmodel``) exports a table of its own kinds, and the driver hands the union of all of them to the input stage:
this package never imports a feature.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import constants as C
from ..errors import Problem, did_you_mean
from .namespacing import group_of
from .parse import Document

KindTable = Mapping[tuple[str, str], str]  # (apiVersion, kind) -> the group of the run that reads it

ISVC, RUNTIME, CLUSTER, CONFIGMAP = "isvc", "runtime", "cluster", "configmap"

CORE_KINDS: KindTable = {
    (C.ISVC_API_VERSION, C.KIND_ISVC): ISVC,
    (C.V1ALPHA1, C.KIND_SR): RUNTIME,
    (C.V1ALPHA1, C.KIND_CSR): RUNTIME,
    (C.V1ALPHA1, C.KIND_CSC): CLUSTER,
    ("v1", "ServiceAccount"): CLUSTER,
    ("v1", "Secret"): CLUSTER,
    ("v1", "ConfigMap"): CONFIGMAP,
}


def read_kserve_kinds(kinds: KindTable) -> list[str]:
    """``apiVersion/kind`` of every KServe kind the run reads, sorted."""
    return sorted(f"{v}/{k}" for v, k in kinds if group_of(v) == C.SERVING_GROUP)


def unsupported_kind(doc: Document, kinds: KindTable) -> Problem:
    """A ``serving.kserve.io`` object whose version and kind no table lists."""
    known = read_kserve_kinds(kinds)
    wrote = f"{doc.api_version}/{doc.kind}"
    return doc.problem(
        f"unsupported apiVersion/kind {wrote}{did_you_mean(wrote, known)} (kserve-compile reads {', '.join(known)})",
        "kind",
    )


KFSERVING_GROUP = "serving.kubeflow.org"  # KServe's API group before 0.7 (KFServing)
# What `kserve-compile migrate` moves from KFServing's group: the versions whose spec KServe kept unchanged.
KFSERVING_MIGRATED = frozenset(
    {("serving.kubeflow.org/v1beta1", C.KIND_ISVC), ("serving.kubeflow.org/v1alpha1", C.KIND_TM)}
)


def misplaced_kind(doc: Document, kinds: KindTable) -> Problem | None:
    """A KServe kind under another API group (KFServing's old one, or a misspelling): never passed through, since
    nothing in a cluster would serve it. None for any other document."""
    group = group_of(doc.api_version)
    if group == C.SERVING_GROUP:
        return None
    homes = sorted(v for v, k in kinds if k == doc.kind and group_of(v) == C.SERVING_GROUP)
    if not homes:
        return None
    version = doc.api_version.rpartition("/")[2]
    if group == KFSERVING_GROUP:
        if (doc.api_version, doc.kind) in KFSERVING_MIGRATED:
            fix = f"`kserve-compile migrate` rewrites it to {C.SERVING_GROUP}/{version}"
        else:
            fix = f"KServe serves {doc.kind} as {', '.join(homes)}; KFServing's {version} has no KServe equivalent"
        message = (
            f"{doc.api_version} is KFServing's API group, which KServe replaced with {C.SERVING_GROUP} (0.7): {fix}"
        )
        return doc.problem(message, "apiVersion")
    message = f"{doc.kind} is a KServe kind, served as {', '.join(homes)}, not in API group {group or 'core'!r}"
    return doc.problem(message + did_you_mean(doc.api_version, homes), "apiVersion")
