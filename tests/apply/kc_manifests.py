"""Hand-written KServe-shaped manifests for the apply-loop tests."""

from __future__ import annotations

import copy
from typing import Any


def deployment(
    name: str, ns: str = "ns", image: str = "img:1", replicas: int | None = 1, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": f"isvc.{name}"}},
        "template": {
            "metadata": {"labels": {"app": f"isvc.{name}"}},
            "spec": {"containers": [{"name": "kserve-container", "image": image}]},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": dict(labels or {"component": "predictor"})},
        "spec": spec,
    }


def service(name: str, ns: str = "ns") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "selector": {"app": f"isvc.{name}"},
            "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
        },
    }


def hpa(name: str, target: str, ns: str = "ns") -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": 3,
        },
    }


def ingress(name: str, ns: str = "ns", host: str = "m.example.com") -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "rules": [
                {
                    "host": host,
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": f"{name}-predictor", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ]
        },
    }


def isvc_set(name: str = "m", ns: str = "ns", transformer: bool = False) -> list[dict[str, Any]]:
    """What a renderer emits for a Standard-mode isvc: Deployment, Service, HPA per component, one Ingress."""
    objs = []
    for comp in ["predictor"] + (["transformer"] if transformer else []):
        objs += [
            deployment(f"{name}-{comp}", ns, replicas=None, labels={"component": comp}),
            service(f"{name}-{comp}", ns),
            hpa(f"{name}-{comp}", f"{name}-{comp}", ns),
        ]
    objs.append(ingress(name, ns))
    return copy.deepcopy(objs)


def shipped_configmap(mode: str = "Serverless") -> dict[str, Any]:
    """The project's copy of KServe's inferenceservice-config, with ``defaultDeploymentMode`` set to ``mode``."""
    import json
    import pathlib

    import yaml

    path = pathlib.Path(__file__).resolve().parents[2] / "kserve_compile" / "data" / "inferenceservice-config.yaml"
    cm = next(d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "ConfigMap")
    cm["data"]["deploy"] = json.dumps({"defaultDeploymentMode": mode})
    return cm
