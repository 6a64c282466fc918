"""LLMInferenceService workload for the render benchmark: a mix of the three topologies KServe deploys.

Per three services: a single-node service with the managed router (scheduler, HTTPRoute, InferencePool), a
prefill/decode service with the router, and a multi-node data-parallel service (LeaderWorkerSet) without it.
"""

from __future__ import annotations

from typing import Any

MAIN = {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
ROUTER = {"scheduler": {}, "route": {}, "gateway": {}}


def _spec(kind: int, i: int) -> dict[str, Any]:
    model = {"uri": f"hf://org/model-{i % 7}", "name": f"org/model-{i % 7}"}
    if kind == 0:
        return {"model": model, "replicas": 2, "router": ROUTER, "template": MAIN}
    if kind == 1:
        return {"model": model, "replicas": 2, "router": ROUTER, "template": MAIN,
                "prefill": {"replicas": 1, "template": MAIN}}  # fmt: skip
    return {"model": model, "replicas": 1, "parallelism": {"data": 4, "dataLocal": 2, "tensor": 1},
            "template": MAIN, "worker": MAIN}  # fmt: skip


def llmisvcs(count: int) -> list[dict[str, Any]]:
    """``count`` LLMInferenceServices in ten namespaces, topologies in rotation."""
    return [_service(i) for i in range(count)]


def _service(i: int) -> dict[str, Any]:
    meta = {"name": f"llm-{i}", "namespace": f"team-{i % 10}"}
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": meta,
        "spec": _spec(i % 3, i),
    }
