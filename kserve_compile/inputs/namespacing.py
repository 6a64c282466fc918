"""``-n/--namespace``: the namespace of every namespaced input that names none, as ``kubectl -n`` and ``helm -n``.

KServe's own objects take their namespace from the InferenceService (and its runtime, graph, ServiceAccount...), so
setting it on the inputs is enough for every rendered object and every host (``{{.Name}}-{{.Namespace}}.<domain>``)
to follow. Without ``-n`` an input without a namespace is in ``default``, as the API server would put it — the
objects passed through as well, so that the output says where each one goes.

As with ``kubectl apply -n``, an input that names a different namespace is an error. Cluster-scoped kinds and the
inputs KServe reads from its own namespace (the ``inferenceservice-config`` ConfigMap and the CA-bundle one) and
Knative's ``config-features`` in ``knative-serving`` keep theirs. Mirrors kubectl's namespace enforcement (``k8s.io/cli-runtime`` ``resource.Builder`` with
``RequireNamespace``) and KServe's webhook defaulting of an unset namespace.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from .. import constants as C
from ..errors import CompileError, Problem, UsageError
from .knative_features import KEY as KNATIVE_FEATURES
from .parse import Document

# Kinds with no namespace (those an input to kserve-compile may plausibly hold; every other kind is namespaced).
CLUSTER_SCOPED_KINDS: frozenset[tuple[str, str]] = frozenset(
    {
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("node.k8s.io", "RuntimeClass"),
        ("networking.k8s.io", "IngressClass"),
        ("gateway.networking.k8s.io", "GatewayClass"),
        ("apiregistration.k8s.io", "APIService"),
        ("cert-manager.io", "ClusterIssuer"),
        (C.SERVING_GROUP, C.KIND_CSR),
        (C.SERVING_GROUP, C.KIND_CSC),
        (C.SERVING_GROUP, "LocalModelCache"),
        (C.SERVING_GROUP, "LocalModelNode"),
        (C.SERVING_GROUP, "LocalModelNodeGroup"),
    }
)

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def is_namespaced(doc: Document) -> bool:
    return (group_of(doc.api_version), doc.kind) not in CLUSTER_SCOPED_KINDS


def check_namespace_flag(namespace: str) -> None:
    if len(namespace) > 63 or not _DNS_LABEL.match(namespace):
        raise UsageError(
            f"--namespace {namespace!r}: must be a DNS label (lower-case letters, digits and '-', at most 63)"
        )


def _keeps_own_namespace(doc: Document, kserve_configmaps: Collection[str]) -> bool:
    """The ConfigMaps KServe reads from its own namespace: the config, the CA-bundle source it names (its name in
    ``kserve_configmaps``), and any other one named into ``kserve``; and Knative's ``config-features`` in
    ``knative-serving``."""
    return (
        doc.api_version == "v1"
        and doc.kind == "ConfigMap"
        and (
            doc.name == C.CONFIGMAP_NAME
            or doc.name in kserve_configmaps
            or doc.namespace == C.KSERVE_NAMESPACE
            or (doc.namespace, doc.name) == KNATIVE_FEATURES
        )
    )


def with_namespace(
    docs: Sequence[Document], namespace: str | None, kserve_configmaps: Collection[str] = ()
) -> list[Document]:
    """``docs`` with a namespace filled in where a namespaced object has none: ``namespace`` (``-n``; one that
    names a different one is then an error), else ``default``, as the API server fills it in."""
    if namespace is not None:
        check_namespace_flag(namespace)
    fill = namespace or "default"
    out: list[Document] = []
    problems: list[Problem] = []
    for doc in docs:
        if not is_namespaced(doc) or _keeps_own_namespace(doc, kserve_configmaps) or doc.namespace == fill:
            out.append(doc)
        elif doc.namespace and namespace is not None:
            problems.append(
                doc.problem(
                    f"the namespace of the object ({doc.namespace}) does not match --namespace {namespace}; "
                    "remove it from the object or pass the matching --namespace",
                    "metadata.namespace",
                )
            )
        elif doc.namespace:
            out.append(doc)
        else:
            out.append(_set_namespace(doc, fill))
    if problems:
        raise CompileError(problems)
    return out


def _set_namespace(doc: Document, namespace: str) -> Document:
    meta = doc.data.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    meta["namespace"] = namespace
    return Document({**doc.data, "metadata": meta}, doc.file, doc.index, doc.positions)
