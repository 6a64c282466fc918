"""Knative autoscaling annotations on a revision template (``pkg/controller/v1alpha1/utils/utils.go``).

KServe turns the component's ``minReplicas``/``maxReplicas``/``scaleTarget``/``scaleMetric`` into Knative's
``autoscaling.knative.dev/*`` annotations, and — in Knative mode only — drops an isvc ``initial-scale`` annotation
that Knative would reject (not an integer, or ``0`` while ``allow-zero-initial-scale`` is off).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping

from .... import constants as C
from ....inputs.config import KServeConfig
from ....inputs.serving_types import ComponentExtension
from ....plan.components import Component

# Go's strconv.Atoi (base 10): an optional sign, then ASCII digits only — no spaces, underscores or prefixes.
_GO_DECIMAL = re.compile(r"[+-]?[0-9]+\Z")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def go_atoi(text: str) -> int | None:
    """The integer Go's ``strconv.Atoi`` reads from ``text`` on a 64-bit build, or None where it returns an error."""
    if not _GO_DECIMAL.match(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def initial_scale_allowed(value: str, *, allow_zero: bool = False) -> bool:
    """Whether KServe keeps an ``initial-scale`` value: an integer, and not ``0`` unless Knative allows zero."""
    number = go_atoi(value)
    return number is not None and (allow_zero or number != 0)


def apply_initial_scale_check(
    annotations: MutableMapping[str, str],
    component: Component,
    isvc_annotations: Mapping[str, str],
    config: KServeConfig,
    *,
    allow_zero: bool = False,
) -> None:
    """Remove the isvc's contribution of a rejected ``initial-scale`` from the component ``annotations``.

    KServe checks only the isvc's own annotation, and deletes it before the components copy the isvc annotations;
    a value from the component's ``annotations`` or the serving runtime is not checked and survives, with the
    component's winning as usual.
    """
    key = C.ANN_KNATIVE_INITIAL_SCALE
    value = isvc_annotations.get(key)
    if value is None or initial_scale_allowed(value, allow_zero=allow_zero):
        return
    annotations.pop(key, None)
    if key in config.annotation_disallowed:
        return
    runtime_annotations = component.runtime.spec.annotations if component.runtime is not None else None
    for source in (component.spec.annotations, runtime_annotations):
        if source and key in source:
            annotations[key] = source[key]
            return


def set_autoscaling_annotations(annotations: MutableMapping[str, str], spec: ComponentExtension) -> None:
    """``SetAutoScalingAnnotations``: class (KPA unless set), target, metric, min-scale always, max-scale unless 0."""
    annotations.setdefault(C.ANN_KNATIVE_CLASS, C.KNATIVE_KPA_CLASS)
    if spec.scale_target is not None:
        annotations[C.ANN_KNATIVE_TARGET] = str(spec.scale_target)
    if spec.scale_metric is not None:
        annotations[C.ANN_KNATIVE_METRIC] = spec.scale_metric
    min_scale = spec.min_replicas if spec.min_replicas is not None else C.DEFAULT_MIN_REPLICAS
    annotations[C.ANN_KNATIVE_MIN_SCALE] = str(min_scale)
    # 0 means "unbounded": Knative's cluster-wide max-scale applies
    if spec.max_replicas != 0:
        annotations[C.ANN_KNATIVE_MAX_SCALE] = str(spec.max_replicas)
