"""Metrics aggregation settings (``pod/metrics_aggregate_injector.go``).

Pod annotations from the ``metricsAggregator`` ConfigMap key when absent; with aggregation on, ``queue-proxy`` gets
the scrape target and the aggregate port. ``queue-proxy`` exists only in Knative's Pods, so on a rendered template
only the annotations change.
"""

from __future__ import annotations

from typing import Any

from ... import constants as C
from ...inputs.config import KServeConfig
from .credentials import merge_envs


def inject_metrics_aggregation(metadata: dict[str, Any], pod_spec: dict[str, Any], config: KServeConfig) -> None:
    """``InjectMetricsAggregator``; changes ``metadata`` and ``pod_spec`` in place."""
    cfg = config.metrics_aggregator
    annotations: dict[str, str] = metadata.setdefault("annotations", {})
    aggregate = annotations.setdefault(C.ANN_ENABLE_METRIC_AGGREGATION, cfg.enable_metric_aggregation)
    if aggregate == "true":
        for container in pod_spec.get("containers") or []:
            if container.get("name") != C.CONTAINER_QUEUE_PROXY:
                continue
            env = merge_envs(
                container.get("env") or [],
                [
                    {
                        "name": C.ENV_KSERVE_PROMETHEUS_PORT,
                        "value": annotations.get(C.ANN_PROMETHEUS_PORT, str(C.DEFAULT_HTTP_PORT)),
                    },
                    {
                        "name": C.ENV_KSERVE_PROMETHEUS_PATH,
                        "value": annotations.get(C.ANN_PROMETHEUS_PATH, C.DEFAULT_PROMETHEUS_PATH),
                    },
                ],
            )
            container["env"] = merge_envs(
                env, [{"name": C.ENV_AGGREGATE_PROMETHEUS_PORT, "value": str(C.AGGREGATE_METRICS_PORT)}]
            )
            ports = container.setdefault("ports", [])
            if not any(p.get("name") == C.AGGREGATE_METRICS_PORT_NAME for p in ports):
                ports.append(
                    {
                        "name": C.AGGREGATE_METRICS_PORT_NAME,
                        "containerPort": C.AGGREGATE_METRICS_PORT,
                        "protocol": "TCP",
                    }
                )
    scrape = annotations.setdefault(C.ANN_ENABLE_PROMETHEUS_SCRAPING, cfg.enable_prometheus_scraping)
    if scrape == "true":
        port = C.AGGREGATE_METRICS_PORT if aggregate == "true" else C.DEFAULT_POD_PROMETHEUS_PORT
        annotations[C.ANN_PROMETHEUS_IO_PORT] = str(port)
        annotations[C.ANN_PROMETHEUS_IO_PATH] = C.DEFAULT_PROMETHEUS_PATH
