"""The Knative Service of one isvc component (``reconcilers/knative/ksvc_reconciler.go`` createKnativeService).

Where the labels and annotations go:

* Service ``metadata.labels``: the component labels, unfiltered (so ``networking.knative.dev/visibility:
  cluster-local`` on the isvc reaches Knative, which then keeps the route cluster-local).
* Service ``metadata.annotations``: only ``serving.knative.dev/rollout-duration`` and the OpenShift passthrough
  annotation, moved out of the component annotations.
* Revision template labels: the component labels minus ``serviceLabelDisallowedList``.
* Revision template annotations: everything else, plus the autoscaling annotations.

The revision's pod spec is the component's own, without the Standard-mode pod defaults (Knative applies its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .... import constants as C
from ....datacopy import clone
from ....errors import InputError
from ....inputs.config import KServeConfig
from ....plan.components import Component
from .autoscaling import apply_initial_scale_check, set_autoscaling_annotations


def revision_annotations(
    component: Component,
    isvc_annotations: Mapping[str, str],
    config: KServeConfig,
    *,
    allow_zero_initial_scale: bool = False,
) -> tuple[dict[str, str], dict[str, str]]:
    """``(revision template annotations, Knative Service annotations)`` for ``component``."""
    annotations = dict(component.annotations)
    apply_initial_scale_check(annotations, component, isvc_annotations, config, allow_zero=allow_zero_initial_scale)
    set_autoscaling_annotations(annotations, component.spec)
    ksvc_annotations = {key: annotations.pop(key) for key in C.KNATIVE_KSVC_ANNOTATIONS if key in annotations}
    return annotations, ksvc_annotations


def revision_template(
    component: Component,
    isvc_annotations: Mapping[str, str],
    config: KServeConfig,
    *,
    allow_zero_initial_scale: bool = False,
) -> dict[str, Any]:
    """``{metadata: {labels, annotations}, spec: <PodSpec>}`` as KServe writes the revision template, before the pod
    webhook — the input for :func:`kserve_compile.render.pod_webhook.inject_pod` in Knative mode."""
    annotations, _ = revision_annotations(
        component, isvc_annotations, config, allow_zero_initial_scale=allow_zero_initial_scale
    )
    labels = {k: v for k, v in component.labels.items() if k not in config.label_disallowed}
    return {"metadata": {"labels": labels, "annotations": annotations}, "spec": clone(component.pod_spec)}


def traffic_targets(
    component: Component, annotations: Mapping[str, str], rolled_out_revision: str | None
) -> list[dict[str, Any]]:
    """``spec.traffic``: all to the latest revision, or — with ``canaryTrafficPercent`` and a revision already rolled
    out — the canary share to the latest and the rest to the rolled-out revision (tag ``prev``)."""
    latest: dict[str, Any] = {"latestRevision": True, "percent": 100}
    if annotations.get(C.ANN_ENABLE_TAG_ROUTING) == "true":
        latest["tag"] = C.TRAFFIC_TAG_LATEST
    canary = component.spec.canary_traffic_percent
    if canary is None or not rolled_out_revision:
        return [latest]
    if not 0 <= canary <= 100:
        raise InputError(
            f"expected 0 <= {canary} <= 100: canaryTrafficPercent of Knative Service {component.name}",
            f"spec.{component.kind}.canaryTrafficPercent",
        )
    latest["percent"] = canary
    targets = [latest]
    if canary < 100:
        targets.append(
            {
                "tag": C.TRAFFIC_TAG_PREV,
                "revisionName": rolled_out_revision,
                "latestRevision": False,
                "percent": 100 - canary,
            }
        )
    return targets


def knative_service(
    component: Component,
    pod_template_spec: Mapping[str, Any],
    isvc_annotations: Mapping[str, str],
    config: KServeConfig,
    *,
    rolled_out_revision: str | None = None,
    allow_zero_initial_scale: bool = False,
) -> dict[str, Any]:
    """The ``serving.knative.dev/v1`` Service KServe creates for ``component``.

    ``pod_template_spec`` is the revision's PodSpec with the pod webhook already inlined — or the whole template
    ``{metadata, spec}`` that :func:`revision_template` returned and the webhook changed; annotations the webhook added
    (e.g. metrics aggregation's ``prometheus.io/*``) are then kept. ``isvc_annotations`` are the InferenceService's
    own annotations (the ``initial-scale`` check reads them). ``rolled_out_revision`` is the component's
    ``status.components.<kind>.latestRolledoutRevision``, which enables the canary split. ``allow_zero_initial_scale``
    mirrors Knative's ``config-autoscaler`` (off by default, as in Knative).
    """
    pod_spec, webhook_meta = _split_template(component, pod_template_spec)
    annotations, ksvc_annotations = revision_annotations(
        component, isvc_annotations, config, allow_zero_initial_scale=allow_zero_initial_scale
    )
    traffic = traffic_targets(component, annotations, rolled_out_revision)
    labels = {k: v for k, v in component.labels.items() if k not in config.label_disallowed}
    labels.update(webhook_meta.get("labels") or {})
    annotations.update(webhook_meta.get("annotations") or {})

    revision_spec = clone(dict(pod_spec))
    ext = component.spec
    if ext.container_concurrency is not None:
        revision_spec["containerConcurrency"] = ext.container_concurrency
    if ext.timeout is not None:
        # KServe sets both; without a timeout Knative's defaults apply to both
        revision_spec["timeoutSeconds"] = ext.timeout
        revision_spec["responseStartTimeoutSeconds"] = ext.timeout

    metadata: dict[str, Any] = {"name": component.name, "namespace": component.namespace}
    if component.labels:
        metadata["labels"] = dict(component.labels)
    if ksvc_annotations:
        metadata["annotations"] = ksvc_annotations
    template_meta: dict[str, Any] = {}
    if labels:
        template_meta["labels"] = labels
    if annotations:
        template_meta["annotations"] = annotations
    return {
        "apiVersion": C.KNATIVE_SERVING_API_VERSION,
        "kind": C.KIND_KNATIVE_SERVICE,
        "metadata": metadata,
        "spec": {"template": {"metadata": template_meta, "spec": revision_spec}, "traffic": traffic},
    }


def _split_template(component: Component, given: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """``(PodSpec, template metadata)`` from either a PodSpec or a ``{metadata, spec}`` template."""
    where = f"spec.{component.kind}"
    if not isinstance(given, Mapping):
        raise InputError(
            f"the pod spec of Knative Service {component.name} must be a mapping, not {type(given).__name__}", where
        )
    if "spec" not in given:  # a PodSpec has no "spec" field
        return given, {}
    spec, meta = given["spec"], given.get("metadata") or {}
    if not isinstance(spec, Mapping):
        raise InputError(
            f"the pod template of Knative Service {component.name} has no spec mapping", f"{where}.template.spec"
        )
    if not isinstance(meta, Mapping):
        raise InputError(
            f"the pod template metadata of Knative Service {component.name} must be a mapping",
            f"{where}.template.metadata",
        )
    return spec, meta
