"""Generated, varied InferenceServices for the render benchmark (deterministic: seeded)."""

from __future__ import annotations

import random
from typing import Any

FORMATS = [
    ("sklearn", None),
    ("xgboost", None),
    ("lightgbm", None),
    ("tensorflow", None),
    ("pytorch", None),
    ("onnx", "v2"),
    ("triton", None),
    ("huggingface", None),
    ("sklearn", "v2"),
]
STORAGE = [
    "gs://bucket/models/{n}",
    "s3://bucket/models/{n}",
    "pvc://models-pvc/{n}",
    "https://example.com/{n}.tar.gz",
    "hf://org/{n}",
]


def isvcs(count: int = 1000, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        name = f"model-{i:04d}"
        fmt, protocol = FORMATS[i % len(FORMATS)]
        model: dict[str, Any] = {"modelFormat": {"name": fmt}, "storageUri": rng.choice(STORAGE).format(n=name)}
        if protocol:
            model["protocolVersion"] = protocol
        if rng.random() < 0.3:
            model["resources"] = {"limits": {"cpu": "2", "memory": "4Gi"}, "requests": {"cpu": "1", "memory": "2Gi"}}
        if rng.random() < 0.2:
            model["env"] = [{"name": "LOG_LEVEL", "value": "debug"}]
        predictor: dict[str, Any] = {
            "model": model,
            "minReplicas": rng.choice([1, 2, 3]),
            "maxReplicas": rng.choice([3, 5, 10]),
        }
        annotations = {"serving.kserve.io/deploymentMode": "Standard"}
        if rng.random() < 0.2:
            annotations["serving.kserve.io/autoscalerClass"] = rng.choice(["keda", "none", "external"])
        spec: dict[str, Any] = {"predictor": predictor}
        if rng.random() < 0.15:
            spec["transformer"] = {"containers": [{"name": "kserve-container", "image": "example.com/transformer:1.0"}]}
        out.append(
            {
                "apiVersion": "serving.kserve.io/v1beta1",
                "kind": "InferenceService",
                "metadata": {
                    "name": name,
                    "namespace": f"team-{i % 7}",
                    "labels": {"team": f"t{i % 7}"},
                    "annotations": annotations,
                },
                "spec": spec,
            }
        )
    return out
