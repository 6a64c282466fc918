"""The graph feature's inputs: InferenceGraphs and TrainedModels typed, each TrainedModel through KServe's
validating webhook (``pkg/apis/serving/v1alpha1/trained_model_webhook.go``) and matched to its parent isvc."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from .. import constants as C
from ..errors import InputError, Problem
from ..inputs.parse import Document
from ..inputs.typed import typed_all
from .graph_types import InferenceGraph, TrainedModel
from .trained_model import group_by_isvc, validate_trained_model


@dataclass
class GraphInputs:
    graphs: list[tuple[InferenceGraph, Document]] = field(default_factory=list)
    trained: list[tuple[TrainedModel, Document]] = field(default_factory=list)


def collect_graph_inputs(docs: Sequence[Document], problems: list[Problem]) -> GraphInputs:
    named = []
    for doc in docs:
        if doc.name:
            named.append(doc)
        else:
            problems.append(doc.problem("metadata.name is required", "metadata.name"))
    graphs = typed_all([d for d in named if d.kind == C.KIND_IG], InferenceGraph, problems)
    trained = []
    for tm, doc in typed_all([d for d in named if d.kind == C.KIND_TM], TrainedModel, problems):
        try:
            validate_trained_model(tm)
        except InputError as exc:
            problems.append(doc.problem(exc.message, exc.path))
            continue
        trained.append((tm, doc))
    return GraphInputs(graphs, trained)


def trained_by_isvc(
    trained: Sequence[tuple[TrainedModel, Document]], isvcs: Collection[tuple[str, str]], problems: list[Problem]
) -> dict[tuple[str, str], list[TrainedModel]]:
    """TrainedModels by parent ``(namespace, isvc)``; a TrainedModel whose isvc is not in the run is an error."""
    grouped: dict[tuple[str, str], list[TrainedModel]] = {}
    for tm, doc in trained:
        try:
            parents = group_by_isvc([tm], isvcs)
        except InputError as exc:
            problems.append(doc.problem(exc.message, exc.path))
            continue
        for key, models in parents.items():
            if models:
                grouped.setdefault(key, []).extend(models)
    return grouped
