"""KServe-shaped objects for emitter tests and ``bench/emit_bench.py``.

What a raw-deployment render of one InferenceService produces (Deployment, Service, HPA,
Ingress), with the scalars that trip YAML emitters sprinkled in: env values like "on" and
"0755", quantities, ports, a multi-line JSON annotation, unicode.
"""

from __future__ import annotations

import json

import orjson


def isvc_objects(i: int, namespace: str = "default") -> list[dict]:
    name = f"model-{i:04d}"
    comp = f"{name}-predictor"
    labels = {
        "app": f"isvc.{comp}",
        "app.kubernetes.io/managed-by": "kserve-compile",
        "app.kubernetes.io/part-of": name,
        "component": "predictor",
        "serving.kserve.io/inferenceservice": name,
    }
    annotations = {
        "serving.kserve.io/deploymentMode": "RawDeployment",
        "serving.kserve.io/autoscalerClass": "hpa",
        "prometheus.kserve.io/port": "8080",
        "prometheus.kserve.io/path": "/metrics",
        "example.com/enabled": "on" if i % 2 else "yes",
        "example.com/config": json.dumps({"threshold": 0.5, "labels": ["a", "b"], "id": i}, indent=2),
        "example.com/owner": "équipe-données ✓",
    }
    container = {
        "name": "kserve-container",
        "image": "kserve/sklearnserver:v0.14.1",
        "args": [f"--model_name={name}", "--model_dir=/mnt/models", "--http_port=8080", "--workers", "1"],
        "env": [
            {"name": "INFERENCE_SERVICE_NAME", "value": name},
            {"name": "STORAGE_URI", "value": f"gs://kfserving-examples/models/sklearn/1.0/{name}"},
            {"name": "UMASK", "value": "0755"},
            {"name": "DEBUG", "value": "off"},
            {"name": "RETRIES", "value": "3"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        ],
        "ports": [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}],
        "readinessProbe": {
            "httpGet": {"path": f"/v1/models/{name}", "port": 8080},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
            "failureThreshold": 3,
        },
        "resources": {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "100m", "memory": "512Mi"}},
        "volumeMounts": [{"mountPath": "/mnt/models", "name": "kserve-provision-location", "readOnly": True}],
    }
    init = {
        "name": "storage-initializer",
        "image": "kserve/storage-initializer:v0.14.1",
        "args": [f"gs://kfserving-examples/models/sklearn/1.0/{name}", "/mnt/models"],
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "100Mi"}},
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": [{"mountPath": "/mnt/models", "name": "kserve-provision-location"}],
    }
    meta = {"name": comp, "namespace": namespace, "labels": labels, "annotations": annotations}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "selector": {"matchLabels": {"app": f"isvc.{comp}"}},
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": labels, "annotations": annotations},
                "spec": {
                    "automountServiceAccountToken": False,
                    "containers": [container],
                    "initContainers": [init],
                    "volumes": [{"name": "kserve-provision-location", "emptyDir": {}}],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": comp, "namespace": namespace, "labels": labels},
        "spec": {
            "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}],
            "selector": {"app": f"isvc.{comp}"},
            "type": "ClusterIP",
        },
    }
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": comp, "namespace": namespace, "labels": labels},
        "spec": {
            "maxReplicas": 3,
            "minReplicas": 1,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
                }
            ],
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": comp},
        },
    }
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "ingressClassName": "istio",
            "rules": [
                {
                    "host": f"{name}-{namespace}.example.com",
                    "http": {
                        "paths": [
                            {
                                "backend": {"service": {"name": comp, "port": {"number": 80}}},
                                "path": "/",
                                "pathType": "Prefix",
                            }
                        ]
                    },
                }
            ],
        },
    }
    # Independent trees, as a renderer builds them (shared dicts would make PyYAML emit aliases).
    return [orjson.loads(orjson.dumps(o)) for o in (deployment, service, hpa, ingress)]


def kserve_objects(n_isvc: int = 1000) -> list[dict]:
    """``4 * n_isvc`` objects, spread over a few namespaces."""
    out: list[dict] = []
    for i in range(n_isvc):
        out += isvc_objects(i, namespace=f"team-{i % 7}")
    return out
