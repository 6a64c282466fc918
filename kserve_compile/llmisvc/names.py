"""Names and labels of the objects KServe's LLMInferenceService controller creates.

Mirrors ``knative.dev/pkg/kmeta.ChildName`` (used for every child name) and the name/label helpers of
``pkg/controller/v1alpha2/llmisvc`` (``workload.go``, ``workload_single_node.go``, ``workload_multi_node.go``,
``scheduler.go``, ``router.go``, ``scaling.go``, ``tokenizer.go``) and ``pkg/constants/constants.go``.
"""

from __future__ import annotations

import hashlib
import re

_LONGEST = 63
_MD5_LEN = 32
_HEAD = _LONGEST - _MD5_LEN
_TRAILING_INVALID = re.compile(r"[^a-zA-Z0-9]+$")


def child_name(parent: str, suffix: str) -> str:
    """``kmeta.ChildName``: ``parent+suffix``, or a prefix of ``parent`` plus its md5 when that is over 63 characters."""
    if len(parent) <= _LONGEST - len(suffix):
        return parent + suffix
    if _HEAD - len(suffix) <= 0:
        digest = hashlib.md5((parent + suffix).encode()).hexdigest()
        out = parent[:_HEAD] + digest
        if len(out) < _LONGEST:
            out += suffix[: _LONGEST - len(out)]
        return _TRAILING_INVALID.sub("", out)
    digest = hashlib.md5(parent.encode()).hexdigest()
    return parent[: _HEAD - len(suffix)] + digest + suffix


# label keys and values (pkg/constants/constants.go)
COMPONENT = "app.kubernetes.io/component"
NAME = "app.kubernetes.io/name"
PART_OF = "app.kubernetes.io/part-of"
PART_OF_VALUE = "llminferenceservice"
KSERVE_COMPONENT = "kserve.io/component"
KSERVE_COMPONENT_WORKLOAD = "workload"
ROLE = "llm-d.ai/role"
ROLE_BOTH, ROLE_DECODE, ROLE_PREFILL = "both", "decode", "prefill"
ROUTING_GROUP = "serving.kserve.io/routing-group"

WORKLOAD = "llminferenceservice-workload"
WORKLOAD_PREFILL = "llminferenceservice-workload-prefill"
WORKLOAD_WORKER = "llminferenceservice-workload-worker"
WORKLOAD_LEADER = "llminferenceservice-workload-leader"
WORKLOAD_WORKER_PREFILL = "llminferenceservice-workload-worker-prefill"
WORKLOAD_LEADER_PREFILL = "llminferenceservice-workload-leader-prefill"
ROUTER = "llminferenceservice-router"
ROUTER_SCHEDULER = "llminferenceservice-router-scheduler"
TOKENIZER = "tokenizer"

ANN_MODEL_BASED_ROUTING = "serving.kserve.io/model-based-routing-enabled"
ANN_POOL_MIGRATED = "serving.kserve.io/inference-pool-migrated"
ROUTING_SIDECAR = "llm-d-routing-sidecar"
POOL_GROUP_V1 = "inference.networking.k8s.io"
POOL_GROUP_V1ALPHA2 = "inference.networking.x-k8s.io"
LLMD_GROUP = "llm-d.ai"


def base_labels(name: str, component: str) -> dict[str, str]:
    return {COMPONENT: component, NAME: name, PART_OF: PART_OF_VALUE}


def workload_selector(name: str) -> dict[str, str]:
    """``GetWorkloadLabelSelector``: what the workload Service and the InferencePool select."""
    return {PART_OF: PART_OF_VALUE, NAME: name, KSERVE_COMPONENT: KSERVE_COMPONENT_WORKLOAD}


def main_deployment(name: str) -> str:
    return child_name(name, "-kserve")


def prefill_deployment(name: str) -> str:
    return child_name(name, "-kserve-prefill")


def main_lws(name: str) -> str:
    return child_name(name, "-kserve-mn")


def prefill_lws(name: str) -> str:
    return child_name(name, "-kserve-mn-prefill")


def workload_service(name: str) -> str:
    return child_name(name, "-kserve-workload-svc")


def inference_pool(name: str) -> str:
    return child_name(name, "-inference-pool")


def scheduler_deployment(name: str) -> str:
    return child_name(name, "-kserve-router-scheduler")


def epp_service(name: str) -> str:
    return child_name(name, "-epp-service")


def http_route(name: str) -> str:
    return child_name(name, "-kserve-route")


def self_signed_secret(name: str) -> str:
    return child_name(name, "-kserve-self-signed-certs")


def tokenizer(name: str) -> str:
    return child_name(name, "-tokenizer")
