"""KServe's pod mutating webhook, applied to a pod template at render time (``pod/mutator.go``).

kserve-compile must work on clusters without KServe, so what the webhook would add at Pod admission is written into
the templates we render. The pod-template annotations stay, and every step is idempotent the way KServe's is (an
existing ``storage-initializer`` init container or ``agent`` container is left alone), so a real KServe webhook that
sees the Pod later changes nothing.

Steps, in KServe's order: GKE accelerator node selector → storage initializer → Istio-CNI UID → agent → metrics
aggregation → OCI model (only when OCI support is on). What needs state we do not have is skipped: Istio's sidecar is
injected into Pods after us (so only the explicit ``storage-initializer-uid`` annotation acts), Knative's
``queue-proxy`` is absent from a Knative Service template, and missing ServiceAccounts/Secrets produce warnings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import constants as C
from ...datacopy import clone
from ...errors import InputError
from ...inputs.cluster_state import ClusterState
from ...inputs.config import KServeConfig
from ...provenance import is_tracing, stamp
from ...provenance.sources import injector_origin
from .agent import check_agent_configs, inject_agent
from .metrics_aggregation import inject_metrics_aggregation
from .modelcar import inject_modelcar
from .storage import inject_storage_initializer, set_istio_cni_security_context


def inject_pod(
    template: dict[str, Any],
    *,
    namespace: str,
    config: KServeConfig,
    cluster: ClusterState,
    logger: Mapping[str, Any] | None = None,
    copy: bool = True,
    added: list[tuple[str, list[str]]] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The pod template after every mutation KServe's pod webhook would make, and warnings for what is unknowable.

    ``template`` is ``{"metadata": {...}, "spec": <PodSpec>}`` as the controller writes it into a Deployment or
    Knative Service. ``logger`` (optional) is the InferenceService's ``spec.predictor.logger``, all the webhook reads of
    it: the log store, marshaller and batching settings. Raises :class:`InputError` with KServe's wording where KServe would
    reject the Pod. ``copy=False`` hands ``template`` over to be changed in place (the pipeline's own templates).
    ``added``, when given, receives ``(injector, [what it added])`` for each injector that added something
    (containers, volumes, mounts, env, annotations, node selector keys by name).
    """
    if not isinstance(template, Mapping):
        raise InputError("pod template must be a mapping", "spec.template")
    out = clone(dict(template)) if copy else template
    metadata = out.setdefault("metadata", {}) or {}
    out["metadata"] = metadata
    spec = out.get("spec")
    if not isinstance(spec, dict):
        raise InputError("pod template has no spec", "spec.template.spec")
    warnings: list[str] = []
    if C.LABEL_ISVC not in (metadata.get("labels") or {}):
        return out, warnings  # the webhook's objectSelector: only KServe-managed pods
    check_agent_configs(config)

    step = _Steps(out, is_tracing(), added)
    _gke_accelerator_selector(metadata, spec)
    step.done("accelerator selector")
    inject_storage_initializer(metadata, spec, namespace=namespace, config=config, cluster=cluster, warnings=warnings)
    set_istio_cni_security_context(metadata, spec)
    step.done("storage initializer")
    inject_agent(metadata, spec, namespace=namespace, config=config, cluster=cluster, warnings=warnings, logger=logger)
    step.done("agent")
    inject_metrics_aggregation(metadata, spec, config)
    step.done("metrics aggregation")
    if config.storage_initializer.oci_mode:
        inject_modelcar(metadata.get("annotations") or {}, spec, config.storage_initializer, namespace)
        step.done("modelcar")
    return out, warnings


class _Steps:
    """After each injector: while tracing, what it added carries its origin; with ``added``, it is listed."""

    def __init__(self, template: dict[str, Any], traced: bool, added: list[tuple[str, list[str]]] | None) -> None:
        self.template = template
        self.traced = traced
        self.added = added
        self.before = _parts(template) if added is not None else set()

    def done(self, injector: str) -> None:
        if self.traced:
            stamp(self.template, injector_origin(injector))
        if self.added is None:
            return
        now = _parts(self.template)
        fresh = now - self.before
        # a new container is said once, not with everything it holds
        new = sorted(p for p in fresh if not any(p.startswith(c + ".") for c in fresh))
        if new:
            self.added.append((injector, new))
        self.before = now


def _parts(template: Mapping[str, Any]) -> set[str]:
    """The named parts of a pod template an injector may add: containers and what each holds, volumes, node
    selector keys, annotations and labels."""
    spec = template.get("spec") or {}
    meta = template.get("metadata") or {}
    parts = {f"metadata.{field}[{key}]" for field in ("annotations", "labels") for key in meta.get(field) or {}}
    parts |= {f"spec.nodeSelector[{key}]" for key in spec.get("nodeSelector") or {}}
    parts |= {f"spec.volumes[{v.get('name')}]" for v in spec.get("volumes") or [] if isinstance(v, Mapping)}
    for field in ("initContainers", "containers"):
        for c in spec.get(field) or []:
            if not isinstance(c, Mapping):
                continue
            at = f"spec.{field}[{c.get('name')}]"
            parts.add(at)
            for sub in ("env", "volumeMounts", "ports"):
                parts |= {f"{at}.{sub}[{e.get('name')}]" for e in c.get(sub) or [] if isinstance(e, Mapping)}
    return parts


def _gke_accelerator_selector(metadata: Mapping[str, Any], spec: dict[str, Any]) -> None:
    """``InjectGKEAcceleratorSelector``: pin GPU pods to the annotated GKE accelerator type."""
    gpu = any(
        C.NVIDIA_GPU_RESOURCE in ((c.get("resources") or {}).get("limits") or {}) for c in spec.get("containers") or []
    )
    selector = (metadata.get("annotations") or {}).get(C.ANN_GKE_ACCELERATOR)
    if gpu and selector is not None:
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), C.NODE_SELECTOR_GKE_ACCELERATOR: selector}
