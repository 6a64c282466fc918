"""Plan: scale to zero in Standard mode through KEDA's HTTP add-on — beyond KServe, and only on request.

KServe's Standard mode keeps a replica per component: its HPA builder raises ``minReplicas: 0`` to 1
(``reconcilers/hpa/hpa_reconciler.go``), and only Knative mode scales to zero. kedacore/http-add-on scales a
Deployment on HTTP traffic (``HTTPScaledObject``, ``http.keda.sh/v1alpha1``) and its interceptor holds each request
while the Deployment comes up from zero. A component is scaled by the add-on when it is asked for:

- ``kserve-compile.io/scale-to-zero: "true"`` on the isvc (every component) or in a component's ``annotations``:
  where the add-on cannot work (Knative mode, multi-node, canaries, autoscalerClass none/external, gRPC-only ports,
  a CPU or memory metric) that is an error;
- ``isvcCompile.scaleToZero.enabled`` in the config (cluster-wide): a Standard-mode component with
  ``minReplicas: 0``; where the add-on cannot work the component keeps KServe's autoscaler, with a note.

``"false"`` opts an isvc or a component out. Without either, KServe's behaviour is unchanged (a note says how to opt
in when ``minReplicas: 0`` meets the HPA). The plan names, per scaled component, what the renderers write: the
HTTPScaledObject's replicas, metric and target port, and the ``<component>-proxy`` ExternalName Service through
which in-cluster callers (a transformer's ``--predictor_host``, ``status.address``) reach the interceptor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import constants as C
from ..errors import InputError
from ..inputs.config import KServeConfig
from ..inputs.isvc_compile import Interceptor
from ..inputs.serving_types import InferenceService
from ..provenance import Origin, is_tracing, tag
from .components import Component
from .ports import service_ports
from .routes import is_grpc_port

ADD_ON = "KEDA's HTTP add-on"
WHAT = f"scale to zero through {ADD_ON} ({C.ANN_SCALE_TO_ZERO})"
# KServe's scaleMetric → the add-on's scalingMetric; cpu and memory have no counterpart (the add-on counts requests)
METRICS = {"concurrency": "concurrency", "rps": "requestRate"}
DEFAULT_METRIC = "concurrency"  # the add-on's, when scalingMetric is empty
ORIGIN = Origin(
    "default",
    f"kserve-compile scale to zero ({ADD_ON})",
    "kedacore/http-add-on config/crd/bases/http.keda.sh_httpscaledobjects.yaml; kserve_compile/plan/scale_to_zero.py",
)


@dataclass(frozen=True)
class ScaledComponent:
    """One component the add-on scales: its Deployment and Service are ``name``."""

    kind: str
    name: str
    namespace: str
    min_replicas: int
    max_replicas: int
    metric: str  # the add-on's: concurrency | requestRate
    target: int
    port: int  # the Service port the interceptor forwards to (the container port when the Service is headless)
    grpc_ports: tuple[int, ...] = ()  # the Service's gRPC ports: not routed through the add-on, which proxies HTTP

    @property
    def proxy(self) -> str:
        """The ExternalName Service in front of the interceptor for this component."""
        return self.name + C.SCALE_TO_ZERO_PROXY_SUFFIX

    @property
    def proxy_hosts(self) -> tuple[str, ...]:
        """The Host headers in-cluster callers send through ``proxy`` (the interceptor routes by Host)."""
        base = f"{self.proxy}.{self.namespace}"
        return (f"{base}.svc.{C.CLUSTER_DOMAIN}", f"{base}.svc", base)


@dataclass(frozen=True)
class ScaleToZero:
    """An isvc's components the add-on scales, and where its interceptor is."""

    interceptor: Interceptor
    scaledown_period: int | None
    components: Mapping[str, ScaledComponent]  # by kind

    def address(self, kind: str) -> str:
        """The in-cluster URL of a scaled component: its proxy Service, on the interceptor's port."""
        scaled = self.components[kind]
        return f"http://{scaled.proxy_hosts[0]}:{self.interceptor.port}"


class _Refused(Exception):
    """Why the add-on cannot scale a component (an error when asked by annotation, a note when cluster-wide)."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.message, self.path = message, path


def asks_for_scale_to_zero(components: Sequence[Component], config: KServeConfig) -> bool:
    """Cheap: whether :func:`plan_scale_to_zero` has anything to do (an annotation, the cluster opt-in, or a
    ``minReplicas: 0`` to give a hint about)."""
    return config.isvc_compile.scale_to_zero.enabled or any(
        C.ANN_SCALE_TO_ZERO in c.annotations or c.spec.min_replicas == 0 for c in components
    )


def plan_scale_to_zero(
    isvc: InferenceService,
    mode: str,
    components: Sequence[Component],
    config: KServeConfig,
    *,
    multinode: bool,
    canaries: bool,
) -> tuple[ScaleToZero | None, list[str]]:
    """The components the add-on scales (None: none), and notes. Raises ``InputError`` where an annotation asks for
    what cannot work. A transformer's or explainer's ``--predictor_host`` is pointed at the predictor's proxy."""
    settings = config.isvc_compile.scale_to_zero
    notes: list[str] = []
    scaled: dict[str, ScaledComponent] = {}
    for component in components:
        asked = _asked(isvc, component, settings.enabled)
        if asked is None:
            hint = _hint(component, mode)
            notes += [hint] if hint else []
            continue
        if mode != C.MODE_STANDARD:
            if asked == "annotation":
                raise InputError(
                    f"{WHAT} is for Standard deployment mode: {mode} mode scales to zero itself, with minReplicas: 0",
                    _annotation_path(isvc, component.kind, C.ANN_SCALE_TO_ZERO),
                )
            continue  # cluster-wide: Knative mode scales to zero itself
        try:
            scaled[component.kind] = _scaled(isvc, component, config, multinode=multinode, canaries=canaries)
        except _Refused as refused:
            if asked == "annotation":
                raise InputError(refused.message, refused.path) from None
            notes.append(f"{component.kind} keeps KServe's autoscaler (cluster-wide {WHAT}): {refused.message}")
    if not scaled:
        return None, notes
    notes += [_grpc_note(c) for c in scaled.values() if c.grpc_ports]
    plan = ScaleToZero(settings.interceptor, settings.scaledown_period, scaled)
    if C.PREDICTOR in scaled:
        for component in components:
            if component.kind != C.PREDICTOR:
                _point_at_proxy(component, scaled[C.PREDICTOR], plan.interceptor)
    return plan, notes


def _asked(isvc: InferenceService, component: Component, cluster_wide: bool) -> str | None:
    """``annotation`` or ``config`` (how the component asks to be scaled by the add-on), or None."""
    value = component.annotations.get(C.ANN_SCALE_TO_ZERO)
    if value is not None:
        if value not in ("true", "false"):
            raise InputError(
                f'invalid value "{value}" for {C.ANN_SCALE_TO_ZERO}: must be "true" or "false"',
                _annotation_path(isvc, component.kind, C.ANN_SCALE_TO_ZERO),
            )
        return "annotation" if value == "true" else None
    return "config" if cluster_wide and component.spec.min_replicas == 0 else None


def _annotation_path(isvc: InferenceService, kind: str, key: str) -> str:
    """Where the component's annotation was written: on the component, else on the isvc."""
    spec = isvc.spec.predictor if kind == C.PREDICTOR else getattr(isvc.spec, kind)
    if spec is not None and key in (spec.annotations or {}):
        return f"spec.{kind}.annotations[{key}]"
    return f"metadata.annotations[{key}]"


def _hint(component: Component, mode: str) -> str:
    """``minReplicas: 0`` with the HPA keeps one replica, as in KServe: say how to scale to zero."""
    autoscaler = component.annotations.get(C.ANN_AUTOSCALER_CLASS, C.AUTOSCALER_HPA)
    if C.ANN_SCALE_TO_ZERO in component.annotations:  # "false": the user has decided
        return ""
    if mode != C.MODE_STANDARD or component.spec.min_replicas != 0 or autoscaler != C.AUTOSCALER_HPA:
        return ""
    return (
        f"{component.kind}: minReplicas 0 keeps 1 replica in Standard mode (KServe's HorizontalPodAutoscaler "
        f'has at least one); {C.ANN_SCALE_TO_ZERO}: "true" scales it to zero through {ADD_ON} (docs/scale-to-zero.md)'
    )


def _scaled(
    isvc: InferenceService, component: Component, config: KServeConfig, *, multinode: bool, canaries: bool
) -> ScaledComponent:
    """What the add-on gets for a Standard-mode ``component``, or :class:`_Refused` saying why it cannot scale it."""
    path = f"spec.{component.kind}"
    if multinode and component.kind == C.PREDICTOR:
        raise _Refused(f"{WHAT} cannot scale a multi-node predictor (workerSpec)", "spec.predictor.workerSpec")
    if canaries and component.kind == C.PREDICTOR:
        raise _Refused(f"{WHAT} does not support canaries (spec.canary)", "spec.canary")
    autoscaler = component.annotations.get(C.ANN_AUTOSCALER_CLASS, C.AUTOSCALER_HPA)
    if autoscaler not in (C.AUTOSCALER_HPA, C.AUTOSCALER_KEDA):
        raise _Refused(
            f"{WHAT} replaces the component's HPA or KEDA autoscaler: autoscalerClass {autoscaler} has none",
            _annotation_path(isvc, component.kind, C.ANN_AUTOSCALER_CLASS),
        )
    ports = service_ports(component)
    port = _http_port(ports, config)
    if port is None:
        raise _Refused(f"{WHAT} needs an HTTP port: the {component.kind} Service has only gRPC ports", path)
    metric, target = _metric(component, path)
    ext = component.spec
    minimum = ext.min_replicas if ext.min_replicas is not None else 0
    maximum = max(ext.max_replicas, minimum, 1)
    grpc = tuple(int(p["port"]) for p in ports if is_grpc_port(p))
    return ScaledComponent(
        component.kind, component.name, component.namespace, minimum, maximum, metric, target, port, grpc
    )


def _http_port(ports: Sequence[Mapping[str, Any]], config: KServeConfig) -> int | None:
    """The first HTTP port of the component's Service; a headless Service maps no port, so its container port."""
    for port in ports:
        if is_grpc_port(port):
            continue
        if config.service.service_cluster_ip_none and isinstance(port.get("targetPort"), int):
            return int(port["targetPort"])
        return int(port["port"])
    return None


def _grpc_note(scaled: ScaledComponent) -> str:
    ports = ", ".join(str(p) for p in scaled.grpc_ports)
    return (
        f"{scaled.kind}: gRPC port {ports} of {scaled.name} is not routed through {ADD_ON}, which proxies HTTP: "
        "gRPC calls fail while the component has no replicas"
    )


def _metric(component: Component, path: str) -> tuple[str, int]:
    ext = component.spec
    if ext.auto_scaling is not None and ext.auto_scaling.metrics:
        raise _Refused(
            f"{WHAT} scales on concurrency or request rate: autoScaling.metrics do not apply "
            "(use scaleMetric concurrency or rps, and scaleTarget)",
            f"{path}.autoScaling.metrics",
        )
    name = ext.scale_metric or DEFAULT_METRIC
    if name not in METRICS:
        raise _Refused(f"[{name}] is not a supported metric for {WHAT}: use concurrency or rps", f"{path}.scaleMetric")
    target = ext.scale_target if ext.scale_target is not None else C.KEDA_HTTP_DEFAULT_TARGET
    if target < 1:
        raise _Refused(f"the target for {name} should be at least 1", f"{path}.scaleTarget")
    return METRICS[name], target


def _point_at_proxy(component: Component, predictor: ScaledComponent, interceptor: Interceptor) -> None:
    """KServe's ``--predictor_host <predictor>.<ns>`` (the one it appends) → the predictor's proxy, so a transformer's
    or explainer's calls go through the interceptor too; a host the user wrote is left alone."""
    default = f"{predictor.name}.{predictor.namespace}"
    proxied = f"{predictor.proxy}.{predictor.namespace}:{interceptor.port}"
    for container in component.pod_spec.get("containers") or []:
        args: list[Any] = container.get("args") or []
        for i in range(len(args) - 1):
            if args[i] == "--predictor_host" and args[i + 1] == default:
                args[i + 1] = tag(proxied, ORIGIN) if is_tracing() else proxied


def with_scale_to_zero(status: dict[str, Any], plan: ScaleToZero, entry: str) -> dict[str, Any]:
    """``status`` with the address of the entry component (``entry``: its kind) through its proxy when the add-on
    scales it, and ``scaleToZero``: the interceptor and, per scaled component, its HTTPScaledObject and replicas."""
    out = dict(status)
    if entry in plan.components and "address" in out:
        out["address"] = {"url": plan.address(entry)}
    out["scaleToZero"] = {
        "interceptor": str(plan.interceptor),
        "components": {
            kind: {
                "httpScaledObject": c.name,
                "address": plan.address(kind),
                "minReplicas": c.min_replicas,
                "maxReplicas": c.max_replicas,
            }
            for kind, c in plan.components.items()
        },
    }
    return out
