"""LLMInferenceService: KServe's generative-AI API rendered offline (controller ``pkg/controller/v1alpha2/llmisvc``).

Entry points for the driver: :data:`KINDS` (LLMInferenceService and LLMInferenceServiceConfig, ``v1alpha2`` and
``v1alpha1``), :func:`collect` and :func:`configmaps` (the scheduler-config ConfigMaps the services refer to, which
the input stage reads instead of passing them through). Rendering is :mod:`.services` (``render_llm_services``);
the modules, in pipeline order: ``llm_types`` (typed inputs), ``conversion``, ``validation``, ``presets`` and
``combine`` (preset selection, ``spec_merge``, ``variables``), then the builders ``workload``, ``multinode``,
``storage``, ``kvcache``, ``tracing``, ``scheduler`` (+ ``scheduler_config``), ``router``, ``scaling``; ``render``
runs them for one service and ``status`` reports its addresses. This module imports none of them at load.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import constants as C
from ..errors import Problem
from ..inputs.kinds import KindTable
from ..inputs.parse import Document

FEATURE = "llmisvc"
KINDS: KindTable = {
    (C.V1ALPHA2, C.KIND_LLMISVC): FEATURE,
    (C.V1ALPHA1, C.KIND_LLMISVC): FEATURE,
    (C.V1ALPHA2, C.KIND_LLMISVC_CONFIG): FEATURE,
    (C.V1ALPHA1, C.KIND_LLMISVC_CONFIG): FEATURE,
}


def collect(docs: Sequence[Document], problems: list[Problem]) -> list[Document]:
    """The LLM documents whose fields have the types their CRD declares (the spec is merged as plain data, so a
    wrong type is refused here, located, before any builder reads it); loaded against the run's config when
    rendered."""
    from ..checks.shapes import shape_problems

    kept = []
    for doc in docs:
        found = shape_problems(doc)
        problems.extend(found)
        if not found:
            kept.append(doc)
    return kept


def configmaps(docs: Sequence[Document]) -> set[tuple[str, str]]:
    """``(namespace, name)`` of every ConfigMap a scheduler ``config.ref`` may read: in the service's namespace (a
    ConfigMap that names none is in ``default``, as the API server puts it) or in ``kserve``."""
    if not docs:
        return set()
    from .llm_types import get_path

    out: set[tuple[str, str]] = set()
    for doc in docs:
        ref = get_path(doc.data, "spec", "router", "scheduler", "config", "ref", "name")
        if isinstance(ref, str) and ref:
            namespace = doc.namespace or "default"
            out |= {(namespace, ref), (C.KSERVE_NAMESPACE, ref)} | ({("", ref)} if namespace == "default" else set())
    return out


__all__ = ["services", "status", "FEATURE", "KINDS", "collect", "configmaps"]
