"""Canary predictors in Standard mode (``spec.canary``): one extra Deployment + Service (+ autoscaler) per canary.

KServe source: ``components/predictor.go`` (``canaryReplicaCount``, ``adjustStableMinReplicasForCanaries``,
``buildCanaryPredictor``, ``reconcileCanaryDeployments``).

Each canary predictor is the stable predictor — as the controller holds it after resolving the stable's runtime
(``model.runtime`` and ``protocolVersion`` filled in, runtime defaults applied) — with the canary's own predictor
merged over it the way ``mergo.Merge(..., WithOverride)`` does, the autoscaling fields cleared and ``minReplicas`` set
to the canary's fixed replica count. It is built through the same predictor path as the stable one (runtime,
annotations, its own storage-initializer source URI), named ``<isvc>-<canary.predictor.name>-predictor``.

The canary's raw reconciler is given a fresh ``ComponentExtensionSpec`` carrying only ``minReplicas``: its Deployment
gets the default rollout strategy, its Service never switches to the agent port, its HPA has min = max = replicas,
and ``storageUris`` (plural) are not rendered for it.

Offline, canaries are not Ready (no status): the stable keeps its ``minReplicas`` and the routes get no canary backend.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from ..errors import InputError
from ..inputs.config import KServeConfig
from ..inputs.serving_types import CanarySpec, ComponentExtension, InferenceService, PredictorSpec, ServingRuntime
from ..kube.merge import merge_override
from .components import Component, build_predictor


@dataclass(frozen=True)
class Canary:
    name: str  # the canary's predictor.name
    traffic_percent: int
    replicas: int
    predictor: PredictorSpec  # the merged predictor KServe builds the canary from
    component: (
        Component  # what the Standard builders take: spec carries only minReplicas, like KServe's canary reconciler
    )


def canary_replicas(isvc: InferenceService, canary: CanarySpec) -> int:
    """``canaryReplicaCount``: the canary's own ``minReplicas``, else its share of the stable's (default 1), rounded up."""
    if canary.predictor.min_replicas is not None:
        return canary.predictor.min_replicas
    stable = isvc.spec.predictor.min_replicas if isvc.spec.predictor.min_replicas is not None else 1
    return math.ceil(stable * canary.traffic_percent / 100)


def stable_min_replicas(isvc: InferenceService, ready: Collection[str] = ()) -> int | None:
    """``adjustStableMinReplicasForCanaries``: the stable ``minReplicas`` less the replicas of the canaries named in
    ``ready`` (never below 1). A renderer has no status, so it passes no ready canaries and gets the value unchanged."""
    stable = isvc.spec.predictor.min_replicas
    if not isvc.spec.canary or stable is None:
        return stable
    taken = sum(canary_replicas(isvc, c) for c in isvc.spec.canary if c.predictor.name in ready)
    return max(stable - taken, 1) if taken > 0 else stable


def resolved_stable(stable: Component) -> PredictorSpec:
    """The stable predictor as the controller holds it when it builds canaries: ``build_predictor``'s spec (runtime
    defaults and protocol applied) with ``model.runtime`` naming the runtime that was selected."""
    spec = stable.spec
    if not isinstance(spec, PredictorSpec):
        raise TypeError("resolved_stable needs the predictor component")
    if spec.model is not None and spec.model.runtime is None and stable.runtime is not None:
        spec = spec.model_copy(update={"model": spec.model.model_copy(update={"runtime": stable.runtime.name})})
    return spec


def canary_predictors(isvc: InferenceService, stable: PredictorSpec) -> list[tuple[PredictorSpec, int]]:
    """``buildCanaryPredictor`` for every ``spec.canary`` entry, in order: (merged predictor, trafficPercent)."""
    base = stable.model_dump(by_alias=True, exclude_none=True)
    out = []
    for index, canary in enumerate(isvc.spec.canary or []):
        replicas = canary_replicas(isvc, canary)
        merged = merge_override(base, canary.predictor.model_dump(by_alias=True, exclude_unset=True, exclude_none=True))
        try:
            predictor = PredictorSpec.model_validate(merged)
        except ValueError as exc:  # pragma: no cover - both sides were valid PredictorSpecs
            raise InputError(
                f"building canary predictor {canary.predictor.name!r}: {exc}", f"spec.canary[{index}].predictor"
            ) from None
        predictor = predictor.model_copy(
            update={
                "max_replicas": 0,
                "scale_target": None,
                "scale_metric": None,
                "auto_scaling": None,
                "min_replicas": replicas,
            }
        )
        out.append((predictor, canary.traffic_percent))
    return out


def build_canaries(
    isvc: InferenceService,
    stable: Component,
    config: KServeConfig,
    runtimes: Sequence[ServingRuntime],
    labels: Mapping[str, str],
) -> list[Canary]:
    """Every canary of a (defaulted) isvc, built like the stable predictor.

    ``stable`` is the built stable predictor component and ``labels`` the isvc labels after its runtime defaults
    (each canary works on its own copy, as KServe deep-copies the isvc)."""
    out = []
    specs = isvc.spec.canary or []
    for index, (predictor, traffic) in enumerate(canary_predictors(isvc, resolved_stable(stable))):
        path = f"spec.canary[{index}].predictor"
        name = specs[index].predictor.name or ""
        canary_isvc = isvc.model_copy(update={"spec": isvc.spec.model_copy(update={"predictor": predictor})})
        try:
            built = build_predictor(canary_isvc, predictor, config, runtimes, dict(labels), path=path)
        except InputError as exc:
            raise InputError(f"fails to build resources for canary {name}: {exc.message}", exc.path) from None
        replicas = predictor.min_replicas if predictor.min_replicas is not None else 0
        component = replace(built, spec=ComponentExtension.model_validate({"minReplicas": replicas}))
        out.append(Canary(name, traffic, replicas, built.spec, component))  # type: ignore[arg-type]
    return out


def route_canaries(canaries: Sequence[Canary]) -> tuple[tuple[str, int], ...]:
    """``RouteInput.canaries``: (canary Service name, trafficPercent) in spec order, for the HTTPRoute weights."""
    return tuple((c.component.name, c.traffic_percent) for c in canaries)
