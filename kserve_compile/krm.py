"""``kserve-compile fn``: the compiler as a KRM function (kustomize exec/container function, kpt function).

Input is a ``ResourceList`` (``config.kubernetes.io/v1``): ``items`` are the package's objects, ``functionConfig``
optional (a ConfigMap whose ``data`` may set ``namespace``, ``strict`` and ``podWebhook``, as the CLI's ``-n``,
``--strict`` and ``--pod-webhook``).
Output is a ``ResourceList`` whose items are the KServe inputs replaced by what they render, every other item
unchanged, and whose ``results`` are the run's problems (severity ``error``, ``warning`` or ``info``, with
``resourceRef``, ``field.path`` and ``file``). A plain stream of YAML documents (no ResourceList) is read as the
documents of a ``render`` and answered with the rendered stream: that is a Helm post-renderer.

kustomize and kpt annotate each item with where it came from (``config.kubernetes.io/path``, ``…/index``,
``internal.config.kubernetes.io/…``, ``config.k8s.io/id``). Those are read for locating problems and removed from the
KServe inputs before compiling — KServe copies an InferenceService's annotations onto what it creates, and these
must not leak into the rendered objects. Mirrors the KRM Functions Specification (kubernetes-sigs/kustomize
``cmd/config/docs/api-conventions/functions-spec.md``) and kpt's ``results`` format (``kpt.dev/v1`` ``Result``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import CompileError, Problem
from .inputs.parse import Document

RESOURCE_LIST_API_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1alpha1")
PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
# Annotations the orchestrator adds to track items: never part of an object KServe would see.
_ORCHESTRATOR_PREFIXES = (
    "internal.config.kubernetes.io/",
    "config.kubernetes.io/",
    "config.k8s.io/",
    "kustomize.config.k8s.io/",
)
_SEVERITY = {"error": "error", "warning": "warning", "note": "info"}


def is_resource_list(docs: Sequence[Document]) -> bool:
    return len(docs) == 1 and docs[0].kind == "ResourceList" and docs[0].api_version in RESOURCE_LIST_API_VERSIONS


@dataclass(frozen=True)
class FunctionConfig:
    namespace: str | None = None
    strict: bool = False
    pod_webhook: str = "inline"


def function_config(resource_list: dict[str, Any]) -> FunctionConfig:
    """``functionConfig.data`` (a ConfigMap) or ``.spec``: ``namespace``, ``strict`` ("true"/"false"), ``podWebhook``
    ("inline"/"cluster")."""
    config = resource_list.get("functionConfig") or {}
    values = (config.get("data") or config.get("spec") or {}) if isinstance(config, dict) else {}
    if not isinstance(values, dict):
        raise CompileError([Problem("functionConfig.data must be a mapping", "functionConfig.data", file="<stdin>")])
    strict = str(values.get("strict", "false")).lower()
    if strict not in ("true", "false"):
        raise CompileError(
            [
                Problem(
                    f"functionConfig strict must be true or false, got {values['strict']!r}",
                    "functionConfig.data.strict",
                    file="<stdin>",
                )
            ]
        )
    pod_webhook = str(values.get("podWebhook", "inline"))
    if pod_webhook not in ("inline", "cluster"):
        message = f"functionConfig podWebhook must be inline or cluster, got {values['podWebhook']!r}"
        raise CompileError([Problem(message, "functionConfig.data.podWebhook", file="<stdin>")])
    namespace = values.get("namespace")
    return FunctionConfig(str(namespace) if namespace else None, strict == "true", pod_webhook)


def item_documents(resource_list: Document) -> list[Document]:
    """Each item as a Document located in the input (its file annotation, else the stream with line numbers)."""
    items = resource_list.data.get("items") or []
    if not isinstance(items, list):
        raise CompileError([resource_list.problem("items must be a list", "items")])
    docs = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise CompileError([resource_list.problem(f"items[{i}] is not an object", f"items[{i}]")])
        prefix = ("items", i)
        positions = {k[2:]: v for k, v in resource_list.positions.items() if k[:2] == prefix}
        annotations = _annotations(item)
        path = next((annotations[a] for a in PATH_ANNOTATIONS if a in annotations), None)
        docs.append(Document(item, str(path) if path else resource_list.file, i, {} if path else positions))
    return docs


def without_orchestrator_annotations(doc: Document) -> Document:
    """The item as KServe would read it: the orchestrator's tracking annotations removed."""
    annotations = _annotations(doc.data)
    kept = {k: v for k, v in annotations.items() if not k.startswith(_ORCHESTRATOR_PREFIXES)}
    if len(kept) == len(annotations):
        return doc
    meta = dict(doc.data["metadata"])
    if kept:
        meta["annotations"] = kept
    else:
        meta.pop("annotations", None)
    return Document({**doc.data, "metadata": meta}, doc.file, doc.index, doc.positions)


def _annotations(item: dict[str, Any]) -> dict[str, Any]:
    meta = item.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return annotations if isinstance(annotations, dict) else {}


Refs = dict[tuple[str, str, str], dict[str, str]]  # (file, kind, name) → the item's apiVersion and namespace


def item_refs(items: Sequence[Document]) -> Refs:
    return {
        (d.file, d.kind, d.name): {"apiVersion": d.api_version, **({"namespace": d.namespace} if d.namespace else {})}
        for d in items
    }


def results(problems: Sequence[Problem], refs: Refs | None = None) -> list[dict[str, Any]]:
    """Problems as KRM ``results`` (``resourceRef`` completed from ``refs``: apiVersion, kind, name, namespace)."""
    out = []
    for p in problems:
        result: dict[str, Any] = {"message": p.message, "severity": _SEVERITY.get(p.severity, "info")}
        if p.kind:
            result["resourceRef"] = {**(refs or {}).get((p.file, p.kind, p.name), {}), "kind": p.kind, "name": p.name}
        if p.path:
            result["field"] = {"path": p.path}
        if p.file:
            result["file"] = {"path": p.file}
        if p.line:
            result["tags"] = {"line": str(p.line), "column": str(p.col or 1)}
        out.append(result)
    return out


def resource_list(
    items: Sequence[dict[str, Any]], problems: Sequence[Problem], refs: Refs | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": RESOURCE_LIST_API_VERSIONS[0], "kind": "ResourceList", "items": list(items)}
    if problems:
        out["results"] = results(problems, refs)
    return out


def _replaced(doc: Document) -> bool:
    """KServe's own inputs, which the function replaces by what they render."""
    from . import constants as C
    from .inputs.namespacing import group_of

    return group_of(doc.api_version) == C.SERVING_GROUP or (doc.api_version, doc.kind, doc.name) == (
        "v1",
        "ConfigMap",
        C.CONFIGMAP_NAME,
    )


def run_function(
    resource_list_doc: Document, configmaps: Sequence[Document] | None = None
) -> tuple[dict[str, Any], bool]:
    """The output ResourceList and whether the run succeeded (on failure the items come back unchanged).

    KServe's inputs are compiled without the orchestrator's annotations; every other item goes through the driver as
    it is (passed through, or read and kept), so the output holds it unchanged. ``configmaps``: ``--config``'s ConfigMaps."""
    from .driver import CompileOptions, compile
    from .inputs.gather import assemble

    original = resource_list_doc.data.get("items") or []
    refs: Refs = {}
    try:
        config = function_config(resource_list_doc.data)
        items = item_documents(resource_list_doc)
        refs = item_refs(items)
        docs = [without_orchestrator_annotations(d) if _replaced(d) else d for d in items]
        options = CompileOptions(
            namespace=config.namespace,
            strict=config.strict,
            keep_read_inputs=True,
            pod_webhook="cluster" if config.pod_webhook == "cluster" else "inline",
        )
        result = compile(assemble(docs, configmaps), options)
    except CompileError as exc:
        return resource_list(original if isinstance(original, list) else [], exc.problems, refs), False
    return resource_list(result.objects, result.warnings, refs), True
