"""Knative mode: the ``serving.knative.dev/v1`` Service per isvc component."""

from .autoscaling import go_atoi, initial_scale_allowed, set_autoscaling_annotations
from .service import (
    knative_service,
    revision_annotations,
    revision_template,
    traffic_targets,
)

__all__ = [
    "autoscaling",
    "go_atoi",
    "initial_scale_allowed",
    "knative_service",
    "revision_annotations",
    "revision_template",
    "set_autoscaling_annotations",
    "traffic_targets",
]
