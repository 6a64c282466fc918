"""The ``agent`` sidecar: request logger, batcher and multi-model puller (``pod/agent_injector.go``).

One container named ``agent`` serves on 9081 in front of the model server. It always uses the ``agent`` image and
resources from the ConfigMap, whichever of logger/batcher/puller asked for it. The helper changes the pod dicts it is
given; :func:`kserve_compile.render.pod_webhook.inject_pod` hands it copies.

Knative note: in a Knative Pod the webhook copies the ``queue-proxy`` container's env into the agent and points
``USER_PORT`` at 9081. ``queue-proxy`` is added by Knative to the Deployment it derives from a revision, so a
rendered Knative Service template has none and gets the ``SERVING_READINESS_PROBE`` branch instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ... import constants as C
from ...datacopy import clone
from ...errors import InputError
from ...inputs.cluster_state import ClusterState
from ...inputs.config import KServeConfig
from ...kube.quantity import QUANTITY_FORMAT_ERROR, is_quantity, requirements
from .credentials import add_service_account_credentials

PodSpec = dict[str, Any]


def check_agent_configs(config: KServeConfig) -> None:
    """The resource checks the webhook runs on every Pod (``getAgentConfigs``/``getLoggerConfigs``/``getBatcherConfigs``)."""
    for section, cfg, message in (
        ("logger", config.logger, 'Failed to parse resource configuration for "logger": "{}"'),
        ("batcher", config.batcher, 'Failed to parse resource configuration for "batcher": "{}"'),
        ("agent", config.agent, 'failed to parse resource configuration for "agent": {}'),
    ):
        for value in (cfg.memory_request, cfg.memory_limit, cfg.cpu_request, cfg.cpu_limit):
            if not is_quantity(value):
                raise InputError(message.format(QUANTITY_FORMAT_ERROR), f"data.{section}")


def _logger_settings(config: KServeConfig, logger: Mapping[str, Any] | None) -> dict[str, Any]:
    """``getLoggerConfigs``: the ConfigMap's logger, with store/marshaller/batching from the isvc's predictor logger."""
    cfg = config.logger
    out: dict[str, Any] = {
        "store": dict(cfg.storage) if cfg.storage is not None else None,
        "marshaller_url": cfg.marshaller_url,
        "batch_size": cfg.batch_size,
        "batch_interval": cfg.batch_interval,
    }
    if isinstance(logger, Mapping):
        out["store"] = dict(logger["storage"]) if isinstance(logger.get("storage"), Mapping) else None
        if logger.get("marshallerUrl") is not None:
            out["marshaller_url"] = str(logger["marshallerUrl"])
        if logger.get("batchSize") is not None:
            out["batch_size"] = int(logger["batchSize"])
        if logger.get("batchInterval") is not None:
            out["batch_interval"] = str(logger["batchInterval"])
    store = out["store"]
    if store is not None:
        if not store.get("key"):
            store["key"] = C.LOGGER_DEFAULT_STORAGE_KEY
        if not store.get("serviceAccountName"):
            store["serviceAccountName"] = C.LOGGER_DEFAULT_SERVICE_ACCOUNT
    return out


def _logger_args(
    metadata: Mapping[str, Any], namespace: str, config: KServeConfig, settings: Mapping[str, Any]
) -> list[str]:
    annotations: Mapping[str, str] = metadata.get("annotations") or {}
    labels: Mapping[str, str] = metadata.get("labels") or {}
    store = settings["store"] or {}
    args = [
        "--log-url",
        annotations.get(C.ANN_LOGGER_SINK_URL, config.logger.default_url),
        "--source-uri",
        str(metadata.get("name") or ""),  # a Pod from a ReplicaSet has no name yet at admission
        "--log-mode",
        annotations.get(C.ANN_LOGGER_MODE, "all"),
        "--inference-service",
        labels.get(C.LABEL_ISVC, ""),
        "--namespace",
        namespace,
        "--endpoint",
        labels.get(C.LABEL_ENDPOINT, ""),
        "--component",
        labels.get(C.LABEL_COMPONENT, ""),
    ]
    if store.get("path"):
        args += ["--log-store-path", str(store["path"])]
    fmt = (store.get("parameters") or {}).get("format")
    if fmt:
        args += ["--log-store-format", str(fmt)]
    if settings["marshaller_url"]:
        args += ["--log-marshaller-url", settings["marshaller_url"]]
    if settings["batch_size"] > 0:
        args += ["--log-batch-size", str(settings["batch_size"])]
    if settings["batch_interval"]:
        args += ["--log-batch-interval", settings["batch_interval"]]
    if C.ANN_LOGGER_METADATA_HEADERS in annotations:
        args += ["--metadata-headers", annotations[C.ANN_LOGGER_METADATA_HEADERS]]
    if C.ANN_LOGGER_METADATA_ANNOTATIONS in annotations:
        pairs = [
            f"{k}={annotations[k]}"
            for k in annotations[C.ANN_LOGGER_METADATA_ANNOTATIONS].split(",")
            if k in annotations
        ]
        args += ["--metadata-annotations", ",".join(pairs)]
    if config.logger.ca_cert_file:
        args += ["--logger-ca-cert-file", config.logger.ca_cert_file]
    args += ["--logger-tls-skip-verify", "true" if config.logger.tls_skip_verify else "false"]
    return args


def inject_agent(
    metadata: dict[str, Any],
    pod_spec: PodSpec,
    *,
    namespace: str,
    config: KServeConfig,
    cluster: ClusterState,
    warnings: list[str],
    logger: Mapping[str, Any] | None = None,
) -> None:
    """``InjectAgent``; changes ``pod_spec`` in place. ``logger`` is the isvc's ``spec.predictor.logger`` (JSON names)."""
    annotations: Mapping[str, str] = metadata.get("annotations") or {}
    logs, puller, batcher = (key in annotations for key in (C.ANN_LOGGER, C.ANN_AGENT, C.ANN_BATCHER))
    if not (logs or puller or batcher):
        return
    containers: list[dict[str, Any]] = pod_spec.get("containers") or []
    if any(c.get("name") == C.CONTAINER_AGENT for c in containers):
        return
    if not containers:
        raise InputError("Invalid configuration: the pod has no containers", "spec.containers")
    settings = _logger_settings(config, logger)
    args = _feature_args(annotations, puller=puller, batcher=batcher)
    if logs:
        args += _logger_args(metadata, namespace, config, settings)
    args += ["--component-port", _component_port(containers)]
    agent = _agent_container(config, args, *_agent_env_and_probe_path(containers), containers[0])
    if logs and config.logger.ca_bundle:
        pod_spec.setdefault("volumes", []).append(
            {"name": C.VOLUME_LOGGER_CA_BUNDLE, "configMap": {"name": config.logger.ca_bundle, "optional": True}}
        )
        agent.setdefault("volumeMounts", []).append(
            {"name": C.VOLUME_LOGGER_CA_BUNDLE, "mountPath": C.LOGGER_CA_CERT_MOUNT_PATH, "readOnly": True}
        )
    volumes = pod_spec.setdefault("volumes", [])
    service_accounts = [str(pod_spec.get("serviceAccountName") or "")]
    if logs and settings["store"] is not None:
        service_accounts.append(str(settings["store"].get("serviceAccountName") or C.LOGGER_DEFAULT_SERVICE_ACCOUNT))
    for sa in service_accounts:
        add_service_account_credentials(
            agent,
            volumes,
            namespace=namespace,
            annotations=annotations,
            service_account_name=sa,
            config=config.credentials,
            cluster=cluster,
            warnings=warnings,
        )
    containers.append(agent)
    pod_spec["containers"] = containers
    if puller:
        _mount_puller_volumes(pod_spec, annotations)
    if not pod_spec.get("volumes"):
        pod_spec.pop("volumes", None)


def _feature_args(annotations: Mapping[str, str], *, puller: bool, batcher: bool) -> list[str]:
    """The model puller's and the batcher's agent flags, from their annotations."""
    args: list[str] = []
    if puller:
        args.append("--enable-puller")
        if C.ANN_CONFIG_MOUNT_PATH in annotations:
            args += ["--config-dir", annotations[C.ANN_CONFIG_MOUNT_PATH]]
        if C.ANN_MODEL_DIR in annotations:
            args += ["--model-dir", annotations[C.ANN_MODEL_DIR]]
    if batcher:
        args.append("--enable-batcher")
        if C.ANN_BATCHER_MAX_BATCHSIZE in annotations:
            args += ["--max-batchsize", annotations[C.ANN_BATCHER_MAX_BATCHSIZE]]
        if C.ANN_BATCHER_MAX_LATENCY in annotations:
            args += ["--max-latency", annotations[C.ANN_BATCHER_MAX_LATENCY]]
    return args


def _component_port(containers: list[dict[str, Any]]) -> str:
    """The port the agent forwards to: the transformer's first port, else kserve-container's, else 8080."""
    port = str(C.DEFAULT_HTTP_PORT)
    for c in containers:
        if c.get("name") == C.CONTAINER_KSERVE and c.get("ports"):
            port = str(c["ports"][0].get("containerPort", 0))
    transformer = next((c for c in containers if c.get("name") == C.CONTAINER_TRANSFORMER), None)
    if transformer is not None:
        ports = transformer.get("ports") or []
        port = str(ports[0].get("containerPort", 0)) if ports else str(C.DEFAULT_HTTP_PORT)
    return port


def _agent_env_and_probe_path(containers: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Without queue-proxy the agent probes the component's readiness itself; with one it takes queue-proxy's env
    (and queue-proxy's user port moves to the agent's)."""
    queue_proxy = next((c for c in containers if c.get("name") == C.CONTAINER_QUEUE_PROXY), None)
    if queue_proxy is not None:
        env = [dict(e) for e in queue_proxy.get("env") or []]
        for item in queue_proxy.get("env") or []:
            if item.get("name") == C.ENV_USER_PORT:
                item["value"] = str(C.AGENT_PORT)
        return env, "/"
    transformer = next((c for c in containers if c.get("name") == C.CONTAINER_TRANSFORMER), None)
    probe = (transformer if transformer is not None else containers[0]).get("readinessProbe")
    if not (isinstance(probe, Mapping) and (probe.get("httpGet") is not None or probe.get("tcpSocket") is not None)):
        return [], "/"
    http_get = probe.get("httpGet")
    path = str(http_get["path"]) if isinstance(http_get, Mapping) and http_get.get("path") else "/"
    return [{"name": C.ENV_SERVING_READINESS_PROBE, "value": probe_json(probe)}], path


def _agent_container(
    config: KServeConfig, args: list[str], env: list[dict[str, Any]], probe_path: str, first: Mapping[str, Any]
) -> dict[str, Any]:
    agent: dict[str, Any] = {
        "name": C.CONTAINER_AGENT,
        "image": config.agent.image,
        "args": args,
        "resources": requirements(
            "agent",
            config.agent.cpu_limit,
            config.agent.memory_limit,
            config.agent.cpu_request,
            config.agent.memory_request,
        ),
        "ports": [{"name": C.AGENT_PORT_NAME, "containerPort": C.AGENT_PORT, "protocol": "TCP"}],
        "readinessProbe": {
            "httpGet": {
                "httpHeaders": [{"name": "K-Network-Probe", "value": "queue"}],
                "port": C.AGENT_PORT,
                "path": probe_path,
                "scheme": "HTTP",
            }
        },
    }
    if not agent["image"]:
        del agent["image"]
    if first.get("securityContext") is not None:
        agent["securityContext"] = clone(first["securityContext"])
    if env:
        agent["env"] = env
    return agent


def _mount_puller_volumes(pod_spec: PodSpec, annotations: Mapping[str, str]) -> None:
    """The model puller's shared model dir (agent and kserve-container) and its model-config ConfigMap."""
    if C.ANN_MODEL_DIR not in annotations:
        raise InputError(f"can not find {C.ANN_CONFIG_VOLUME_NAME} label", "metadata.annotations")
    model_dir = {"name": C.VOLUME_MODEL_DIR, "emptyDir": {}}
    _mount(pod_spec, C.CONTAINER_AGENT, model_dir, C.DEFAULT_MODEL_DIR)
    _mount(pod_spec, C.CONTAINER_KSERVE, model_dir, C.DEFAULT_MODEL_DIR)
    if C.ANN_CONFIG_VOLUME_NAME not in annotations:
        raise InputError(f"can not find {C.ANN_CONFIG_VOLUME_NAME} label", "metadata.annotations")
    config_volume = {"name": C.VOLUME_MODEL_CONFIG, "configMap": {"name": annotations[C.ANN_CONFIG_VOLUME_NAME]}}
    _mount(pod_spec, C.CONTAINER_AGENT, config_volume, C.MODEL_CONFIG_DIR)


def _mount(pod_spec: PodSpec, container_name: str, volume: dict[str, Any], path: str) -> None:
    """``mountVolumeToContainer``: add the volume once, append the mount to every container with that name."""
    volumes = pod_spec.setdefault("volumes", [])
    if not any(v.get("name") == volume["name"] for v in volumes):
        volumes.append(dict(volume))
    for container in pod_spec.get("containers") or []:
        if container.get("name") == container_name:
            container.setdefault("volumeMounts", []).append({"name": volume["name"], "mountPath": path})


# --- readiness probe as Go's encoding/json writes a corev1.Probe --------------------------------------------------
_PROBE_FIELDS = (
    "exec",
    "httpGet",
    "tcpSocket",
    "grpc",
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
    "terminationGracePeriodSeconds",
)
_HANDLER_FIELDS = {
    "exec": ("command",),
    "httpGet": ("path", "port", "host", "scheme", "httpHeaders"),
    "tcpSocket": ("port", "host"),
    "grpc": ("port", "service"),
}
_ALWAYS = {("httpGet", "port"), ("tcpSocket", "port"), ("grpc", "port"), ("grpc", "service")}


def _go_ordered_probe(probe: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _PROBE_FIELDS:
        value = probe.get(name)
        if name in _HANDLER_FIELDS:
            if value is None:
                continue
            handler: dict[str, Any] = {}
            for field in _HANDLER_FIELDS[name]:
                item = value.get(field)
                if item in (None, "", [], 0) and (name, field) not in _ALWAYS:
                    continue
                if field == "httpHeaders":
                    item = [{"name": h.get("name", ""), "value": h.get("value", "")} for h in item]
                handler[field] = item if item is not None or field != "port" else 0
            out[name] = handler
        elif value not in (None, 0):
            out[name] = value
    return out


def probe_json(probe: Mapping[str, Any]) -> str:
    """The ``SERVING_READINESS_PROBE`` value: compact JSON in Go's field order, HTML characters escaped."""
    text = json.dumps(_go_ordered_probe(probe), separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
