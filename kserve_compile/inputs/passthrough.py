"""Pass-through: a repository directory holds more than KServe objects; what kserve-compile does not compile passes.

Each input document is one of:

- compiled — KServe's kinds (``serving.kserve.io``; one no table lists is an error), the ``inferenceservice-config``
  ConfigMap, the other ConfigMaps the compiler reads (the CA-bundle source it names, the scheduler configs an
  LLMInferenceService refers to, Knative's ``config-features``), and the ServiceAccounts/Secrets/ClusterStorageContainers the pod webhook reads
  (a ServiceAccount, Secret or read ConfigMap gets a note: it is read, not emitted);
- skipped with a note — a ``kustomization.yaml`` (kustomize's own file) and YAML that is not a Kubernetes object
  (no ``apiVersion``/``kind``, e.g. Helm values);
- passed through unchanged — everything else (other API groups, other core kinds, other ConfigMaps), emitted with
  the rendered objects and checked like them. ``--strict`` refuses these instead.

This mirrors how ``kubectl apply -f dir/`` and kustomize treat a directory: every manifest is applied as it is.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from .. import constants as C
from ..errors import CompileError, Problem
from .kinds import KindTable, misplaced_kind, unsupported_kind
from .knative_features import is_features_configmap
from .namespacing import group_of
from .parse import Document

KUSTOMIZE_FILE_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
KUSTOMIZE_GROUP = "kustomize.config.k8s.io"
# Live objects the pod webhook reads (storage credentials): compiled from, not emitted — KServe reads them from the
# cluster, it does not create them.
READ_ONLY_KINDS = frozenset({("v1", "ServiceAccount"), ("v1", "Secret")})
READ_ONLY_NOTE = (
    "read for storage credentials, as KServe reads it from the cluster; not part of the output (apply it separately)"
)
READ_CONFIGMAP_NOTE = "read as KServe reads it from the cluster; not part of the output (apply it separately)"
KNATIVE_FEATURES_NOTE = (
    "read as Knative's webhook reads it: its flags decide which Knative Services Knative admits; "
    "not part of the output (apply it separately)"
)


@dataclass
class Split:
    compiled: list[Document] = field(default_factory=list)
    passed: list[Document] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)


def split_inputs(
    docs: Sequence[Document], kinds: KindTable, read_configmaps: Collection[tuple[str, str]], *, strict: bool = False
) -> Split:
    """Sort the documents into compiled, passed through and skipped. ``kinds`` is every kind the run reads;
    ``read_configmaps`` the ``(namespace, name)`` of the ConfigMaps the compiler reads besides its config (the
    CA-bundle source, scheduler configs); ``strict`` makes pass-through an error."""
    out = Split()
    problems: list[Problem] = []
    for doc in docs:
        key = (doc.api_version, doc.kind)
        if _is_kustomize(doc):
            out.notes.append(doc.problem("a kustomize file, not a Kubernetes object: skipped", severity="note"))
        elif key in kinds and group_of(key[0]) == C.SERVING_GROUP:  # the common case, decided at once
            out.compiled.append(doc)
        elif not doc.api_version and not doc.kind:
            out.notes.append(doc.problem("not a Kubernetes object (no apiVersion and kind): skipped", severity="note"))
        elif not doc.api_version or not doc.kind:
            missing = "apiVersion" if not doc.api_version else "kind"
            problems.append(
                doc.problem(f"{missing} is required (a Kubernetes object has both apiVersion and kind)", missing)
            )
        elif group_of(doc.api_version) == C.SERVING_GROUP and (doc.api_version, doc.kind) not in kinds:
            problems.append(unsupported_kind(doc, kinds))
        elif misplaced := misplaced_kind(doc, kinds):
            problems.append(misplaced)
        elif _compiled(doc, kinds, read_configmaps):
            out.compiled.append(doc)
            if (doc.api_version, doc.kind) in READ_ONLY_KINDS:
                out.notes.append(doc.problem(READ_ONLY_NOTE, severity="note"))
            elif is_features_configmap(doc):
                out.notes.append(doc.problem(KNATIVE_FEATURES_NOTE, severity="note"))
            elif doc.kind == "ConfigMap" and not is_config(doc):
                out.notes.append(doc.problem(READ_CONFIGMAP_NOTE, severity="note"))
        elif strict:
            problems.append(
                doc.problem(
                    f"{doc.api_version}/{doc.kind} is not a KServe input; --strict refuses to pass it through", "kind"
                )
            )
        else:
            out.passed.append(doc)
    if problems:
        raise CompileError(problems)
    if not out.compiled and not out.passed:
        files = ", ".join(sorted({d.file for d in docs}))
        raise CompileError(
            [Problem("no Kubernetes objects in the input (only skipped documents)", file=files), *out.notes]
        )
    return out


def expand_lists(docs: Sequence[Document]) -> list[Document]:
    """A ``v1`` ``List`` (what ``kubectl get -o yaml`` and ``render -o json`` print) as its items, as kubectl reads it."""
    out = []
    for doc in docs:
        items = doc.data.get("items") if (doc.api_version, doc.kind) == ("v1", "List") else None
        if not isinstance(items, list):
            out.append(doc)
            continue
        for i, item in enumerate(items):
            if isinstance(item, dict):
                positions = {k[2:]: v for k, v in doc.positions.items() if k[:2] == ("items", i)}
                out.append(Document(item, doc.file, doc.index, positions))
    return out


def _is_kustomize(doc: Document) -> bool:
    return os.path.basename(doc.file) in KUSTOMIZE_FILE_NAMES or group_of(doc.api_version) == KUSTOMIZE_GROUP


def is_config(doc: Document) -> bool:
    """The ``inferenceservice-config`` ConfigMap (found by name, wherever it is)."""
    return (doc.api_version, doc.kind, doc.name) == ("v1", "ConfigMap", C.CONFIGMAP_NAME)


def configmap_key(doc: Document) -> tuple[str, str]:
    return (doc.namespace or "default", doc.name)


def _compiled(doc: Document, kinds: KindTable, read_configmaps: Collection[tuple[str, str]]) -> bool:
    if group_of(doc.api_version) == C.SERVING_GROUP:
        return True
    if (doc.api_version, doc.kind) == ("v1", "ConfigMap"):
        return is_config(doc) or configmap_key(doc) in read_configmaps
    return (doc.api_version, doc.kind) in kinds
