"""Stage 3, plan one InferenceService: default, validate, resolve the mode, build its components.

A :class:`Plan` is an isvc as KServe's controller holds it just before it creates objects: the mutating webhook's
defaults applied, the validating webhook's rules passed, the deployment mode resolved, and each component (with its
runtime merged) built — plus, in Standard mode, its multi-node head/worker split and its canaries. Status URLs and
InferenceGraph targets are computed from a plan alone, without rendering any object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import constants as C
from ..errors import InputError
from ..inputs.config import KServeConfig
from ..inputs.serving_types import InferenceService, ServingRuntime
from ..provenance import is_tracing, stamp
from ..provenance.sources import component_origin
from .admission import validate_isvc
from .components import Component, build_explainer, build_predictor, build_transformer
from .defaulting import default_isvc
from .mode import legacy_warning, resolve_mode

if TYPE_CHECKING:  # Knative, canary and multi-node support load only when an isvc needs them
    from .canary import Canary
    from .multinode import MultiNode
    from .scale_to_zero import ScaleToZero


@dataclass
class Plan:
    """An isvc after defaulting, validation, mode resolution and component building — before any object exists."""

    isvc: InferenceService
    mode: str
    components: list[Component]
    notes: list[str]
    multinode: MultiNode | None = None
    canaries: list[Canary] = field(default_factory=list)
    scale_to_zero: ScaleToZero | None = None  # beyond KServe, opt-in: components KEDA's HTTP add-on scales

    @property
    def stopped(self) -> bool:
        return self.isvc.metadata.annotations.get(C.ANN_STOP, "").lower() == "true"


def plan_isvc(isvc: InferenceService, config: KServeConfig, runtimes: Sequence[ServingRuntime]) -> Plan:
    notes = [w for w in [legacy_warning(isvc.metadata.annotations)] if w]
    written = isvc
    isvc = default_isvc(isvc, config)
    status_mode = (isvc.status or {}).get("deploymentMode") if isinstance(isvc.status, dict) else None
    mode = resolve_mode(isvc.metadata.annotations, status_mode, config)
    notes.extend(validate_isvc(isvc, mode, config, source=written))
    if mode == C.MODE_MODELMESH:
        raise InputError(
            "deployment mode ModelMesh is not supported by kserve-compile",
            f"metadata.annotations[{C.ANN_DEPLOYMENT_MODE}]",
        )
    labels = dict(isvc.metadata.labels)
    stable = build_predictor(isvc, isvc.spec.predictor, config, runtimes, labels)
    plan = Plan(isvc, mode, [stable], notes)
    if mode == C.MODE_STANDARD:
        _plan_standard_extras(plan, stable, config, runtimes, labels)
    if isvc.spec.transformer is not None:
        plan.components.append(build_transformer(isvc, config, labels))
    if isvc.spec.explainer is not None:
        plan.components.append(build_explainer(isvc, config, labels))
    _plan_scale_to_zero(plan, config)
    if is_tracing():
        _claim_components(plan)
    return plan


def _claim_components(plan: Plan) -> None:
    """While tracing: what the component builders set without an origin is theirs."""
    extras = [plan.multinode.worker] if plan.multinode is not None else []
    for component in [*plan.components, *extras, *(c.component for c in plan.canaries)]:
        origin = component_origin(component.kind)
        for part in (component.labels, component.annotations, component.pod_spec):
            stamp(part, origin)


def _plan_standard_extras(
    plan: Plan, stable: Component, config: KServeConfig, runtimes: Sequence[ServingRuntime], labels: dict[str, str]
) -> None:
    """Standard mode only: the multi-node head replaces the predictor; canaries are built beside it."""
    isvc = plan.isvc
    if isvc.spec.predictor.worker_spec is not None:
        from .multinode import expand_multinode

        plan.multinode = expand_multinode(isvc, stable, config, labels)
        plan.components[0] = plan.multinode.head
    if isvc.spec.canary:
        from .canary import build_canaries

        plan.canaries = build_canaries(isvc, stable, config, runtimes, labels)


def _plan_scale_to_zero(plan: Plan, config: KServeConfig) -> None:
    """kserve-compile's opt-in scale to zero through KEDA's HTTP add-on (``scale_to_zero``); KServe has none."""
    from .scale_to_zero import asks_for_scale_to_zero, plan_scale_to_zero

    if not asks_for_scale_to_zero(plan.components, config):
        return
    plan.scale_to_zero, notes = plan_scale_to_zero(
        plan.isvc,
        plan.mode,
        plan.components,
        config,
        multinode=plan.multinode is not None,
        canaries=bool(plan.canaries),
    )
    plan.notes.extend(notes)
