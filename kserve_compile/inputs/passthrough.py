"""Pass-through: a repository directory holds more than KServe objects; what kserve-compile does not compile passes.

Each input document is one of:

- compiled — KServe's kinds (``serving.kserve.io``, any kind: an unknown one stays an error there), the
  ``inferenceservice-config`` ConfigMap, the CA-bundle ConfigMap it names, and the ServiceAccounts/Secrets/
  ClusterStorageContainers the pod webhook reads (a ServiceAccount or Secret gets a note: it is read, not emitted);
- skipped with a note — a ``kustomization.yaml`` (kustomize's own file) and YAML that is not a Kubernetes object
  (no ``apiVersion``/``kind``, e.g. Helm values);
- passed through unchanged — everything else (other API groups, other core kinds, other ConfigMaps), emitted with
  the rendered objects and checked like them. ``--strict`` refuses these instead.

This mirrors how ``kubectl apply -f dir/`` and kustomize treat a directory: every manifest is applied as it is.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import constants as C
from ..errors import CompileError, Problem
from .context import SUPPORTED_KINDS
from .namespacing import group_of
from .parse import Document

KUSTOMIZE_FILE_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
KUSTOMIZE_GROUP = "kustomize.config.k8s.io"
# Live objects the pod webhook reads (storage credentials): compiled from, not emitted — KServe reads them from the
# cluster, it does not create them.
READ_ONLY_KINDS = frozenset({"ServiceAccount", "Secret"})
READ_ONLY_NOTE = (
    "read for storage credentials, as KServe reads it from the cluster; not part of the output (apply it separately)"
)


@dataclass
class Split:
    compiled: list[Document] = field(default_factory=list)
    passed: list[Document] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)


def split_inputs(docs: Sequence[Document], *, strict: bool = False) -> Split:
    """Sort the documents into compiled, passed through and skipped; ``strict`` makes pass-through an error."""
    out = Split()
    problems: list[Problem] = []
    ca_bundle = _ca_bundle_name(docs)
    for doc in docs:
        if _is_kustomize(doc):
            out.notes.append(doc.problem("a kustomize file, not a Kubernetes object: skipped", severity="note"))
        elif not doc.api_version or not doc.kind:
            out.notes.append(doc.problem("not a Kubernetes object (no apiVersion and kind): skipped", severity="note"))
        elif group_of(doc.api_version) == C.SERVING_GROUP and (doc.api_version, doc.kind) not in SUPPORTED_KINDS:
            problems.append(_unknown_kserve_kind(doc))
        elif _compiled(doc, ca_bundle):
            out.compiled.append(doc)
            if doc.kind in READ_ONLY_KINDS and doc.api_version == "v1":
                out.notes.append(doc.problem(READ_ONLY_NOTE, severity="note"))
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


def _unknown_kserve_kind(doc: Document) -> Problem:
    from ..checks.suggest import did_you_mean

    known = sorted({f"{v}/{k}" for v, k in SUPPORTED_KINDS if group_of(v) == C.SERVING_GROUP})
    hint = did_you_mean(f"{doc.api_version}/{doc.kind}", known)
    return doc.problem(
        f"unsupported apiVersion/kind {doc.api_version}/{doc.kind}{hint} (kserve-compile reads {', '.join(known)}; "
        "LLMInferenceService and LocalModelCache are not rendered)",
        "kind",
    )


def _is_kustomize(doc: Document) -> bool:
    return os.path.basename(doc.file) in KUSTOMIZE_FILE_NAMES or group_of(doc.api_version) == KUSTOMIZE_GROUP


def _compiled(doc: Document, ca_bundle: str | None) -> bool:
    if group_of(doc.api_version) == C.SERVING_GROUP:
        return True  # an unknown KServe kind is reported by the compiler
    if (doc.api_version, doc.kind) == ("v1", "ConfigMap"):
        return doc.name == C.CONFIGMAP_NAME or (doc.name == ca_bundle and doc.namespace in ("", C.KSERVE_NAMESPACE))
    return (doc.api_version, doc.kind) in SUPPORTED_KINDS


def _ca_bundle_name(docs: Sequence[Document]) -> str | None:
    """``storageInitializer.caBundleConfigMapName`` of the inputs' config (None if unset or unreadable here)."""
    from .context import load_config

    try:
        config = load_config(
            [d for d in docs if (d.api_version, d.kind, d.name) == ("v1", "ConfigMap", C.CONFIGMAP_NAME)]
        )
    except CompileError:
        return None  # the compiler reports it
    return config.storage_initializer.ca_bundle_config_map_name or None


def passed_objects(split: Split) -> list[dict[str, Any]]:
    return [doc.data for doc in split.passed]
