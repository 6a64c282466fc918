"""The webhook pipeline as a whole, and metrics aggregation ported from pod/metrics_aggregate_injector_test.go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kserve_compile.errors import InputError
from kserve_compile.inputs.cluster_state import ClusterState
from kserve_compile.inputs.config import parse_config
from kserve_compile.kube.quantity import canonical_quantity
from kserve_compile.render.pod_webhook.inject import inject_pod

DATA = Path(__file__).resolve().parents[2] / "kserve_compile" / "data"
SHIPPED = yaml.safe_load((DATA / "inferenceservice-config.yaml").read_text())["data"]
ISVC = {"serving.kserve.io/inferenceservice": "m"}


def config(**keys):
    return parse_config({**SHIPPED, **{k: json.dumps(v) for k, v in keys.items()}})


def run(annotations, containers, cfg=None):
    template = {
        "metadata": {"labels": dict(ISVC), "annotations": dict(annotations)},
        "spec": {"containers": containers},
    }
    out, warnings = inject_pod(template, namespace="default", config=cfg or config(), cluster=ClusterState())
    return out, warnings


def test_not_a_kserve_pod_is_untouched():
    template = {
        "metadata": {"annotations": {"internal.serving.kserve.io/storage-initializer-sourceuri": "gs://x"}},
        "spec": {"containers": [{"name": "kserve-container"}]},
    }
    assert inject_pod(template, namespace="default", config=config(), cluster=ClusterState()) == (template, [])


def test_shipped_metrics_config_sets_false_annotations():
    # TestInjectMetricsAggregator "setMetricAggregationFalse" style: annotations copied from the ConfigMap when absent.
    out, _ = run({}, [{"name": "kserve-container"}])
    assert out["metadata"]["annotations"] == {
        "serving.kserve.io/enable-metric-aggregation": "false",
        "serving.kserve.io/enable-prometheus-scraping": "false",
    }


def test_aggregation_and_scraping_on_queue_proxy():
    # TestInjectMetricsAggregator "setMetricAggregationEnvVarsAndPortsWithCustomPortAndPath" (:120-260)
    annotations = {
        "serving.kserve.io/enable-metric-aggregation": "true",
        "serving.kserve.io/enable-prometheus-scraping": "true",
        "prometheus.kserve.io/port": "8081",
        "prometheus.kserve.io/path": "/other/metrics",
    }
    out, _ = run(annotations, [{"name": "kserve-container"}, {"name": "queue-proxy"}])
    assert out["spec"]["containers"][1] == {
        "name": "queue-proxy",
        "env": [
            {"name": "KSERVE_CONTAINER_PROMETHEUS_METRICS_PORT", "value": "8081"},
            {"name": "KSERVE_CONTAINER_PROMETHEUS_METRICS_PATH", "value": "/other/metrics"},
            {"name": "AGGREGATE_PROMETHEUS_METRICS_PORT", "value": "9088"},
        ],
        "ports": [{"name": "aggr-metric", "containerPort": 9088, "protocol": "TCP"}],
    }
    assert out["metadata"]["annotations"]["prometheus.io/port"] == "9088"
    assert out["metadata"]["annotations"]["prometheus.io/path"] == "/metrics"


def test_scraping_without_aggregation_uses_queue_proxy_port():
    # "setPromAnnotationTrueWithAggrFalse" (:400-470)
    out, _ = run(
        {},
        [{"name": "kserve-container"}],
        cfg=config(metricsAggregator={"enableMetricAggregation": "false", "enablePrometheusScraping": "true"}),
    )
    annotations = out["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == "9091"
    assert annotations["serving.kserve.io/enable-metric-aggregation"] == "false"


def test_aggregation_defaults_without_annotations():
    # "setMetricAggregationEnvVarsAndPorts" (:50-119): default port 8080 and /metrics.
    out, _ = run(
        {},
        [
            {"name": "kserve-container"},
            {"name": "queue-proxy", "env": [{"name": "KSERVE_CONTAINER_PROMETHEUS_METRICS_PORT", "value": "1"}]},
        ],
        cfg=config(metricsAggregator={"enableMetricAggregation": "true", "enablePrometheusScraping": "false"}),
    )
    assert out["spec"]["containers"][1]["env"] == [
        {"name": "KSERVE_CONTAINER_PROMETHEUS_METRICS_PORT", "value": "8080"},
        {"name": "KSERVE_CONTAINER_PROMETHEUS_METRICS_PATH", "value": "/metrics"},
        {"name": "AGGREGATE_PROMETHEUS_METRICS_PORT", "value": "9088"},
    ]
    assert "prometheus.io/port" not in out["metadata"]["annotations"]


def test_gke_accelerator_selector():
    # accelerator_injector_test.go: only with an nvidia.com/gpu limit
    annotations = {"serving.kserve.io/gke-accelerator": "nvidia-tesla-t4"}
    out, _ = run(annotations, [{"name": "kserve-container", "resources": {"limits": {"nvidia.com/gpu": "1"}}}])
    assert out["spec"]["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}
    out, _ = run(annotations, [{"name": "kserve-container"}])
    assert "nodeSelector" not in out["spec"]


def test_full_pipeline_order_storage_then_agent():
    # mutator.go: storage initializer before the agent, both in one template, annotations kept.
    annotations = {
        "internal.serving.kserve.io/storage-initializer-sourceuri": "gs://m",
        "internal.serving.kserve.io/logger": "true",
    }
    out, warnings = run(annotations, [{"name": "kserve-container"}])
    assert [c["name"] for c in out["spec"]["containers"]] == ["kserve-container", "agent"]
    assert [c["name"] for c in out["spec"]["initContainers"]] == ["storage-initializer"]
    assert out["spec"]["initContainers"][0]["image"] == "kserve/storage-initializer:latest"
    assert out["metadata"]["annotations"]["internal.serving.kserve.io/storage-initializer-sourceuri"] == "gs://m"
    assert len(warnings) == 2  # the default ServiceAccount is unknown, for both containers


def test_missing_agent_config_fails_like_kserve():
    # getAgentConfigs errors on every Pod when the agent key lacks resources.
    data = {k: v for k, v in SHIPPED.items() if k != "agent"}
    with pytest.raises(InputError, match='failed to parse resource configuration for "agent"'):
        run({}, [{"name": "kserve-container"}], cfg=parse_config(data))


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1", "1"),
        ("100m", "100m"),
        ("1000m", "1"),
        ("0.5", "500m"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1536Mi", "1536Mi"),
        ("1000", "1k"),
        ("15Mi", "15Mi"),
    ],
)
def test_canonical_quantity(text, canonical):
    assert canonical_quantity(text) == canonical
