"""InferenceGraph and TrainedModel (``serving.kserve.io/v1alpha1``): validation, rendering, running locally.

Entry points for the driver: :data:`KINDS` (the kinds this feature reads) and :func:`collect` (its documents typed and
admitted). The rest is in the modules named for what they do — ``resources`` (the typed API), ``validation``
(KServe's graph webhook), ``trained_model`` (the TrainedModel webhook and controller), ``targets`` (how a step
reaches an InferenceService), ``render`` (the router's Deployment, Service, autoscaler, ingress), ``show`` (drawing)
and ``run`` (serving a graph on this machine with :mod:`router`). This module imports none of them at load.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import constants as C
from ..errors import Problem
from ..inputs.kinds import KindTable
from ..inputs.parse import Document

if TYPE_CHECKING:
    from .collection import GraphInputs

FEATURE = "graph"
KINDS: KindTable = {(C.V1ALPHA1, C.KIND_IG): FEATURE, (C.V1ALPHA1, C.KIND_TM): FEATURE}


def collect(docs: Sequence[Document], problems: list[Problem]) -> GraphInputs:
    """The run's InferenceGraphs and TrainedModels, typed and admitted; problems are appended, located."""
    from .collection import collect_graph_inputs

    return collect_graph_inputs(docs, problems)


__all__ = [
    # modules
    "collection",
    "graph_types",
    "render",
    "run",
    "show",
    "targets",
    "trained_model",
    # names
    "FEATURE",
    "KINDS",
    "collect",
]
