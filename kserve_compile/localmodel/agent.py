"""The download Jobs KServe's node agent (``localmodelnode`` binary, DaemonSet ``kserve-localmodelnode-agent``)
creates for its node's ``LocalModelNode``.

Mirrors ``pkg/controller/v1alpha1/localmodelnode/controller.go`` (``launchJob`` :117-229,
``getContainerSpecFromConfig``, ``injectCredentials``, ``getContainerSpecForStorageUri``, ``downloadModels``) and
``platform_default.go`` (mount path ``/mnt/models``, no job enhancement), as the agent acts on a node whose model
folder is empty and that has no earlier Job: one Job per distinct source URI (models sharing a URI share the folder
``models/<sha256(uri)[:16]>``, so only the first entry's Job is made). The shipped DaemonSet runs only on Nodes
labelled ``kserve/localmodel=worker``; other nodes get no Job.

A Job has only ``generateName`` (``<model>-<node>``): the API server names it. Its owner reference (the
LocalModelNode) and the Job status the agent reads back are the live cluster's.
"""

from __future__ import annotations

import posixpath
from typing import Any

from .. import constants as C
from ..datacopy import clone
from ..errors import InputError
from ..inputs.cluster_state import ClusterState
from ..inputs.config import KServeConfig
from ..render.pod_webhook.credentials import (
    add_service_account_credentials,
    add_storage_spec_credentials,
)
from ..render.pod_webhook.storage import local_model_storage_key, uri_supported
from .cache_types import LocalModelInfo


def download_jobs(
    node: str, models: list[LocalModelInfo], config: KServeConfig, cluster: ClusterState, warnings: list[str]
) -> list[dict[str, Any]]:
    """The Jobs for one node's LocalModelNode entries, in entry order, one per distinct storage key."""
    seen: set[str] = set()
    jobs = []
    for info in models:
        key = local_model_storage_key(info.source_model_uri)
        if key in seen:
            continue
        seen.add(key)
        jobs.append(download_job(node, info, config, cluster, warnings))
    return jobs


def download_job(
    node: str, info: LocalModelInfo, config: KServeConfig, cluster: ClusterState, warnings: list[str]
) -> dict[str, Any]:
    local = config.local_model
    namespace = local.job_namespace
    pvc = f"{info.model_name}-{info.node_group}" + (f"-{info.namespace}-download" if info.namespace else "")
    container = _download_container(info.source_model_uri, config, cluster)
    container["args"] = [info.source_model_uri, C.DEFAULT_MODEL_DIR]
    container["volumeMounts"] = [
        {
            "mountPath": C.DEFAULT_MODEL_DIR,
            "name": C.LOCAL_MODEL_PVC_SOURCE_VOLUME,
            "subPath": posixpath.join("models", local_model_storage_key(info.source_model_uri)),
        }
    ]
    volumes: list[dict[str, Any]] = [
        {"name": C.LOCAL_MODEL_PVC_SOURCE_VOLUME, "persistentVolumeClaim": {"claimName": pvc}}
    ]
    if info.service_account_name or info.storage is not None:
        _inject_credentials(container, volumes, info, namespace, config, cluster, warnings)
    labels = {"model": info.model_name, "node": node}
    if info.namespace:
        labels["modelNamespace"] = info.namespace
    security: dict[str, Any] = {} if local.fs_group is None else {"fsGroup": local.fs_group}
    ttl = local.job_ttl_seconds_after_finished
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"generateName": f"{info.model_name}-{node}", "namespace": namespace, "labels": labels},
        "spec": {
            "ttlSecondsAfterFinished": C.LOCAL_MODEL_DEFAULT_JOB_TTL_SECONDS if ttl is None else ttl,
            "template": {
                "spec": {
                    "nodeSelector": {C.LABEL_HOSTNAME: node},
                    "containers": [container],
                    "restartPolicy": "Never",
                    "volumes": volumes,
                    "securityContext": security,
                }
            },
        },
    }


def _download_container(uri: str, config: KServeConfig, cluster: ClusterState) -> dict[str, Any]:
    """The first enabled ClusterStorageContainer of workload type ``localModelDownloadJob`` that supports the URI,
    else the storage initializer image from ``storageInitializer.image`` (``localModel.defaultJobImage`` is not read
    by the agent)."""
    for csc in cluster.storage_containers:
        spec = csc.get("spec") or {}
        if csc.get("disabled") is True or spec.get("workloadType") != C.LOCAL_MODEL_DOWNLOAD_WORKLOAD:
            continue
        if uri_supported(spec, uri, str((csc.get("metadata") or {}).get("name", ""))):
            return clone(spec.get("container") or {})
    return {
        "name": C.LOCAL_MODEL_DOWNLOAD_CONTAINER,
        "image": config.storage_initializer.image or C.LOCAL_MODEL_DEFAULT_JOB_IMAGE,
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }


def _inject_credentials(
    container: dict[str, Any],
    volumes: list[dict[str, Any]],
    info: LocalModelInfo,
    namespace: str,
    config: KServeConfig,
    cluster: ClusterState,
    warnings: list[str],
) -> None:
    """``injectCredentials``: the storage-spec Secret when ``storage.key`` is set, else the ServiceAccount's
    (``default`` when unnamed), both looked up in the Job namespace. The agent logs a failure and still creates the
    Job, so a problem here is a warning."""
    try:
        if info.storage is not None and info.storage.key is not None:
            add_storage_spec_credentials(
                container,
                namespace=namespace,
                annotations={},
                storage_key=info.storage.key,
                override_params=info.storage.parameters,
                config=config.credentials,
                cluster=cluster,
                warnings=warnings,
            )
        else:
            add_service_account_credentials(
                container,
                volumes,
                namespace=namespace,
                annotations={},
                service_account_name=info.service_account_name,
                config=config.credentials,
                cluster=cluster,
                warnings=warnings,
            )
    except InputError as exc:
        warnings.append(f"download Job for {info.status_key}: credentials not injected: {exc.message}")
