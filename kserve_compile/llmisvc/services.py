"""The run's LLM services: loaded, rendered and reported (controller ``pkg/controller/v1alpha2/llmisvc``).

:func:`render_llm_services`: the run's LLMInferenceService (``v1alpha2``, or ``v1alpha1`` converted)
and LLMInferenceServiceConfig documents in, every object the controller would create out, with the problems found
(located in their documents). The modules, in pipeline order: ``llm_types`` (typed inputs), ``conversion``,
``validation``, ``presets`` and ``combine`` (preset selection, ``spec_merge``, ``variables``), then the builders
``workload``, ``multinode``, ``storage``, ``kvcache``, ``tracing``, ``scheduler`` (+ ``scheduler_config``),
``router``, ``scaling``; ``render`` runs them for one service and ``status`` reports its addresses.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InputError, Problem
from ..inputs.cluster_state import ClusterState
from ..inputs.config import KServeConfig
from ..inputs.parse import Document
from .conversion import convert_spec
from .llm_types import KIND_LLMISVC_CONFIG, V1ALPHA1, LLMConfig, LLMService, drop_nulls, get_path
from .names import ROUTING_GROUP
from .options import LLMOptions, options_from_config
from .presets import ConfigStore
from .render import RenderedService, ValidationFailed, render_service

if TYPE_CHECKING:
    from ..localmodel.collection import LocalModelInputs


@dataclass
class LLMContext:
    """What the LLM renderer reads besides its own documents."""

    config: KServeConfig
    cluster: ClusterState
    config_data: Mapping[str, Any] | None = (
        None  # the inferenceservice-config data (for ingress and llmisvcCompile keys)
    )
    configmaps: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # scheduler config ConfigMaps
    local_models: LocalModelInputs | None = None  # the caches the defaulting webhook matches ``model.uri`` against


@dataclass
class LLMResult:
    objects: list[dict[str, Any]]
    problems: list[Problem]
    warnings: list[Problem]
    services: list[tuple[LLMService, RenderedService]] = field(default_factory=list)
    options: LLMOptions = field(default_factory=LLMOptions)


def _metadata(doc: Document) -> tuple[str, str, dict[str, str], dict[str, str]]:
    meta = doc.data.get("metadata") or {}
    if not isinstance(meta, dict):
        raise InputError("metadata must be a mapping", "metadata")
    for key in ("labels", "annotations"):
        value = meta.get(key) or {}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise InputError("must be a mapping of strings", f"metadata.{key}")
    return doc.name, doc.namespace or "default", dict(meta.get("labels") or {}), dict(meta.get("annotations") or {})


def _spec(doc: Document, annotations: dict[str, str]) -> dict[str, Any]:
    spec = doc.data.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise InputError("spec must be a mapping", "spec")
    spec = drop_nulls(spec)
    if doc.api_version == V1ALPHA1:
        spec = convert_spec(spec, annotations)
    return spec


def load_service(doc: Document) -> LLMService:
    """The service after the defaulting webhook: ``model.name`` defaults to the name, the routing-group label set."""
    name, namespace, labels, annotations = _metadata(doc)
    spec = _spec(doc, annotations)
    model = spec.setdefault("model", {})
    if not isinstance(model, dict):
        raise InputError("must be a mapping", "spec.model")
    if not model.get("name"):
        model["name"] = name
    group = get_path(spec, "router", "route", "group")
    if group is not None:
        labels[ROUTING_GROUP] = str(group)
    else:
        labels.pop(ROUTING_GROUP, None)
    status = doc.data.get("status") if isinstance(doc.data.get("status"), dict) else {}
    uid = str((doc.data.get("metadata") or {}).get("uid") or "")
    return LLMService(name, namespace, labels, annotations, spec, status, doc, doc.api_version, uid)


def _local_model_labels(svc: LLMService, ctx: LLMContext) -> None:
    """The defaulting webhook's last step: the local-model cache labels and annotations for ``model.uri``."""
    from ..localmodel.rewrite import rewrite_llm_metadata

    uri = get_path(svc.spec, "model", "uri")
    uri = uri if isinstance(uri, str) else ""
    svc.labels, svc.annotations = rewrite_llm_metadata(
        svc.namespace, svc.labels, svc.annotations, uri, ctx.local_models, ctx.config
    )


def load_config(doc: Document) -> LLMConfig:
    name, namespace, _, annotations = _metadata(doc)
    return LLMConfig(name, namespace, _spec(doc, annotations), doc=doc, annotations=annotations)


def render_llm_services(docs: Sequence[Document], ctx: LLMContext) -> LLMResult:
    """Every object for the LLMInferenceServices among ``docs`` (configs among them override shipped presets)."""
    problems: list[Problem] = []
    warnings: list[Problem] = []
    try:
        options = options_from_config(dict(ctx.config_data or {}))
    except InputError as exc:
        return LLMResult([], [Problem(exc.message, exc.path, "ConfigMap", "inferenceservice-config")], [])
    configs, services = _load(docs, problems)
    for svc in services:
        _local_model_labels(svc, ctx)
    store = ConfigStore(configs)
    result = LLMResult([], problems, warnings, options=options)
    with _no_cyclic_gc():
        for svc in services:
            _render_one(svc, ctx, store, options, result, services)
    return result


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Rendering builds large acyclic trees, which reference counting frees; with the default thresholds the cyclic
    collector rescans them again and again. Its thresholds are raised for the loop (fewer, larger passes; cyclic
    garbage is still collected) and restored after; disabling it outright costs one huge pass at the end instead."""
    old = gc.get_threshold()
    gc.set_threshold(200_000, 50, 50)
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _load(docs: Sequence[Document], problems: list[Problem]) -> tuple[list[LLMConfig], list[LLMService]]:
    configs: list[LLMConfig] = []
    services: list[LLMService] = []
    seen: dict[tuple[str, str, str], Document] = {}
    for doc in sorted(docs, key=lambda d: (d.kind, d.namespace, d.name, d.file, d.index)):
        if not doc.name:
            problems.append(doc.problem("metadata.name is required", "metadata.name"))
            continue
        key = (doc.kind, doc.namespace or "default", doc.name)
        if key in seen:
            problems.append(
                doc.problem(
                    f"{doc.kind} {key[1]}/{key[2]} is defined twice (also in {seen[key].file})", "metadata.name"
                )
            )
            continue
        seen[key] = doc
        try:
            if doc.kind == KIND_LLMISVC_CONFIG:
                configs.append(load_config(doc))
            else:
                services.append(load_service(doc))
        except InputError as exc:
            problems.append(doc.problem(exc.message, exc.path))
    return configs, services


def _render_one(svc: LLMService, ctx: LLMContext, store: ConfigStore, options: LLMOptions, result: LLMResult,
                peers: list[LLMService]) -> None:  # fmt: skip
    try:
        rendered = render_service(svc, ctx, store, options, peers)
    except ValidationFailed as exc:
        result.problems.extend(svc.problem(message, path) for path, message in exc.problems)
        return
    except InputError as exc:
        result.problems.append(svc.problem(exc.message, exc.path))
        return
    result.objects.extend(rendered.objects)
    result.warnings.extend(svc.problem(note, severity="warning") for note in rendered.notes)
    result.services.append((svc, rendered))


def llm_status_rows(
    docs: Sequence[Document], ctx: LLMContext
) -> tuple[list[tuple[str, dict[str, Any]]], list[Problem]]:
    """``(namespace/name, status)`` for each LLMInferenceService, as ``kserve-compile status`` prints them."""
    from .status import llm_status

    result = render_llm_services(docs, ctx)
    rows = [
        (f"{svc.namespace}/{svc.name}", llm_status(svc, rendered, result.options)) for svc, rendered in result.services
    ]
    return sorted(rows, key=lambda row: row[0]), result.problems


__all__ = ["LLMContext", "LLMResult", "llm_status_rows", "load_service", "render_llm_services"]
