"""InferenceGraph and TrainedModel (``serving.kserve.io/v1alpha1``): validation and rendering."""

from .models import GraphRouter, GraphSpec, GraphStep, InferenceGraph, TrainedModel
from .render import (
    graph_json,
    graph_status_url,
    is_stopped,
    render_graph,
    resolve_service_urls,
)
from .targets import IsvcTarget, isvc_target, predict_path
from .trained_model import (
    check_trained_models,
    group_by_isvc,
    model_config_json,
    predictor_memory_limit,
    validate_trained_model,
)
from .validation import validate_graph

__all__ = [
    "GraphRouter",
    "GraphSpec",
    "GraphStep",
    "InferenceGraph",
    "IsvcTarget",
    "TrainedModel",
    "check_trained_models",
    "graph_json",
    "graph_status_url",
    "group_by_isvc",
    "is_stopped",
    "isvc_target",
    "model_config_json",
    "predict_path",
    "predictor_memory_limit",
    "render_graph",
    "resolve_service_urls",
    "validate_graph",
    "validate_trained_model",
]
