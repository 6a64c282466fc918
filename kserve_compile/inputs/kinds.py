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
