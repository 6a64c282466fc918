"""Multi-node (Ray / multiprocessing) objects for a planned head/worker split (``plan.multinode``): the worker
Deployment and the headless Services (``reconcilers/raw/raw_kube_reconciler.go``, ``components/predictor.go``
``workerSpec``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import constants as C
from ...datacopy import clone
from ...inputs.config import KServeConfig
from ...plan.components import Component
from ...plan.multinode import MultiNode, head_service_name, worker_app_label, worker_service_name
from .standard.deployment import deployment


def worker_deployment(
    worker: Component, template: dict[str, Any], config: KServeConfig, replicas: int
) -> dict[str, Any]:
    """``createRawWorkerDeployment``: the usual Deployment, a rolling update that keeps every old pod until the new
    ones are ready (0% unavailable, 100% surge), and a fixed replica count."""
    dep = deployment(worker, template, config)
    strategy = dep["spec"].get("strategy") or {}
    if strategy.get("type") == "RollingUpdate":
        dep["spec"]["strategy"] = {**strategy, "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": "0%"}}
    dep["spec"]["replicas"] = replicas
    return dep


def headless_services(head_service: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``createHeadlessSvc`` / ``createWorkerHeadlessSvc``: the head's Service metadata (``app`` and
    ``isvc.generation`` labels included) renamed, a role label added, no ports, ``clusterIP: None``."""
    meta = head_service["metadata"]
    service = meta["name"]
    gen = (meta.get("labels") or {}).get(C.LABEL_GENERATION, "")
    out = []
    for name, role, app in (
        (head_service_name(service, gen), C.MULTINODE_HEAD, C.app_label(service)),
        (worker_service_name(service, gen), C.MULTINODE_WORKER, worker_app_label(service)),
    ):
        headless_meta = clone(dict(meta))
        headless_meta["name"] = name
        headless_meta["labels"] = {**(meta.get("labels") or {}), C.LABEL_MULTINODE_ROLE: role}
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": headless_meta,
                "spec": {
                    "selector": {C.LABEL_APP: app, C.LABEL_GENERATION: gen},
                    "clusterIP": "None",
                    "publishNotReadyAddresses": True,
                },
            }
        )
    return out


def multinode_objects(
    mn: MultiNode, head_service: Mapping[str, Any], worker_template: dict[str, Any], config: KServeConfig
) -> list[dict[str, Any]]:
    """What multi-node adds next to the head's Service and Deployment: the two headless Services and the worker
    Deployment (``worker_template`` is the worker's finished pod template)."""
    return [*headless_services(head_service), worker_deployment(mn.worker, worker_template, config, mn.worker_replicas)]
