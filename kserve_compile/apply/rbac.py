"""What the daemon does with each resource — the one table its RBAC and its child informers are derived from.

The counterpart of KServe's manager ClusterRole (``config/rbac/role.yaml``, generated there from kubebuilder
markers), narrowed to what this daemon does: it reads Secrets but never writes them (ServiceAccounts only as LLMInferenceService renders them).

``python -m kserve_compile.apply.rbac`` prints ``deploy/base/rbac.yaml``; a test checks the file is exactly
that output, and that the daemon's code touches nothing this table does not grant.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import yaml

from kserve_compile import constants as C

READ = ("get", "list", "watch")
MANAGE = ("get", "list", "watch", "create", "patch", "delete")  # an SSA PATCH that creates is authorised as create


@dataclass(frozen=True)
class Use:
    api_version: str
    kind: str
    resource: str
    verbs: tuple[str, ...]
    why: str
    child: bool = False  # rendered and applied: watched (by ApplySet label) into the live cache

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


USES: tuple[Use, ...] = (
    Use("serving.kserve.io/v1beta1", C.KIND_ISVC, "inferenceservices", READ, "input"),
    Use("serving.kserve.io/v1beta1", C.KIND_ISVC, "inferenceservices/status", ("get", "patch"), "status"),
    Use(
        "serving.kserve.io/v1beta1",
        C.KIND_ISVC,
        "inferenceservices/finalizers",
        ("update",),
        "ownerReferences with blockOwnerDeletion",
    ),
    Use("serving.kserve.io/v1alpha1", C.KIND_IG, "inferencegraphs", READ, "input"),
    Use(
        "serving.kserve.io/v1alpha1",
        C.KIND_IG,
        "inferencegraphs/finalizers",
        ("update",),
        "ownerReferences with blockOwnerDeletion",
    ),
    Use("serving.kserve.io/v1alpha1", C.KIND_SR, "servingruntimes", READ, "input"),
    Use("serving.kserve.io/v1alpha1", C.KIND_CSR, "clusterservingruntimes", READ, "input"),
    Use(
        "serving.kserve.io/v1alpha1",
        C.KIND_CSC,
        "clusterstoragecontainers",
        READ,
        "input: storage-initializer containers (watched only where the cluster serves the kind)",
    ),
    Use(
        C.V1ALPHA2,
        C.KIND_LLMISVC,
        "llminferenceservices",
        READ,
        "input (watched only where the cluster serves the kind)",
    ),
    Use(
        C.V1ALPHA2,
        C.KIND_LLMISVC,
        "llminferenceservices/finalizers",
        ("update",),
        "ownerReferences with blockOwnerDeletion",
    ),
    Use(
        C.V1ALPHA2,
        C.KIND_LLMISVC_CONFIG,
        "llminferenceserviceconfigs",
        READ,
        "input: presets named by baseRefs (watched only where the cluster serves the kind)",
    ),
    Use(
        "serving.kserve.io/v1alpha1",
        C.KIND_LOCAL_MODEL_CACHE,
        "localmodelcaches",
        READ,
        "input: an isvc a cache covers mounts its PVC (watched only where the cluster serves the kind)",
    ),
    Use(
        "serving.kserve.io/v1alpha1",
        C.KIND_LOCAL_MODEL_NAMESPACE_CACHE,
        "localmodelnamespacecaches",
        READ,
        "input: as localmodelcaches, per namespace",
    ),
    Use(
        "serving.kserve.io/v1alpha1",
        C.KIND_LOCAL_MODEL_NODE_GROUP,
        "localmodelnodegroups",
        READ,
        "input: the node groups the caches name",
    ),
    Use(
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        MANAGE,
        "storage credentials (read: only those an isvc names); rendered for LLMInferenceService's scheduler and "
        "routing sidecar",
        child=True,
    ),
    Use("v1", "Secret", "secrets", READ, "storage credentials (only those an isvc's ServiceAccount names)"),
    Use("v1", "Event", "events", ("create",), "failures reported on the object"),
    Use("v1", "ConfigMap", "configmaps", MANAGE, "inferenceservice-config, ApplySet parents, rendered", child=True),
    Use("v1", "Service", "services", MANAGE, "rendered", child=True),
    Use("apps/v1", "Deployment", "deployments", MANAGE, "rendered", child=True),
    Use("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", MANAGE, "rendered", child=True),
    Use("networking.k8s.io/v1", "Ingress", "ingresses", MANAGE, "rendered", child=True),
    Use("serving.knative.dev/v1", "Service", "services", MANAGE, "rendered", child=True),
    Use("networking.istio.io/v1beta1", "VirtualService", "virtualservices", MANAGE, "rendered", child=True),
    Use("gateway.networking.k8s.io/v1", "HTTPRoute", "httproutes", MANAGE, "rendered", child=True),
    Use("keda.sh/v1alpha1", "ScaledObject", "scaledobjects", MANAGE, "rendered", child=True),
    # kserve-compile's opt-in scale to zero through KEDA's HTTP add-on (docs/scale-to-zero.md)
    Use(
        "http.keda.sh/v1alpha1", "HTTPScaledObject", "httpscaledobjects", MANAGE, "rendered (scale to zero)", child=True
    ),
    Use(
        "gateway.networking.k8s.io/v1beta1",
        "ReferenceGrant",
        "referencegrants",
        MANAGE,
        "rendered (scale to zero: HTTPRoutes to the add-on's interceptor)",
        child=True,
    ),
    Use(
        "opentelemetry.io/v1beta1", "OpenTelemetryCollector", "opentelemetrycollectors", MANAGE, "rendered", child=True
    ),
    # LLMInferenceService children (kserve_compile/llmisvc)
    Use(
        "leaderworkerset.x-k8s.io/v1",
        "LeaderWorkerSet",
        "leaderworkersets",
        MANAGE,
        "rendered (multi-node LLM)",
        child=True,
    ),
    Use("inference.networking.k8s.io/v1", "InferencePool", "inferencepools", MANAGE, "rendered", child=True),
    Use("inference.networking.x-k8s.io/v1alpha2", "InferencePool", "inferencepools", MANAGE, "rendered", child=True),
    Use(
        "cert-manager.io/v1",
        "Certificate",
        "certificates",
        MANAGE,
        "rendered (when the self-signed TLS option asks for cert-manager)",
        child=True,
    ),
    Use(
        "resource.k8s.io/v1",
        "ResourceClaimTemplate",
        "resourceclaimtemplates",
        MANAGE,
        "rendered (managed DRA)",
        child=True,
    ),
    Use(
        "rbac.authorization.k8s.io/v1",
        "Role",
        "roles",
        (*MANAGE, "bind", "escalate"),
        "rendered: the scheduler's and routing sidecar's Roles grant what KServe's controller grants",
        child=True,
    ),
    Use("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", MANAGE, "rendered", child=True),
    Use(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        MANAGE,
        "rendered: the scheduler's auth-delegator binding",
        child=True,
    ),
    Use(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        "clusterroles",
        ("bind",),
        "binding the ClusterRoles the scheduler's ClusterRoleBinding names",
    ),
)
LEASE = Use("coordination.k8s.io/v1", "Lease", "leases", ("get", "create", "update"), "leader election")

# (group, resource, verbs) over the whole table, Lease included
PERMISSIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = tuple(
    (u.group, u.resource, u.verbs) for u in (*USES, LEASE)
)
CHILD_KINDS: tuple[tuple[str, str], ...] = tuple((u.api_version, u.kind) for u in USES if u.child)

NAME = "kserve-compile"
NAMESPACE = C.KSERVE_NAMESPACE


def _rules(uses: tuple[Use, ...]) -> list[dict[str, object]]:
    """One rule per (group, verbs), resources sorted: short and stable."""
    grouped: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for u in uses:
        grouped.setdefault((u.group, u.verbs), set()).add(u.resource)
    return [{"apiGroups": [g], "resources": sorted(rs), "verbs": list(v)} for (g, v), rs in sorted(grouped.items())]


def manifests(name: str = NAME, namespace: str = NAMESPACE) -> list[dict[str, object]]:
    sa = {"kind": "ServiceAccount", "name": name, "namespace": namespace}
    rbac = "rbac.authorization.k8s.io/v1"
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}},
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": f"{name}-daemon"}, "rules": _rules(USES)},
        {
            "apiVersion": rbac,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"{name}-daemon"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{name}-daemon"},
            "subjects": [sa],
        },
        {
            "apiVersion": rbac,
            "kind": "Role",
            "metadata": {"name": f"{name}-leader-election", "namespace": namespace},
            "rules": _rules((LEASE,)),
        },
        {
            "apiVersion": rbac,
            "kind": "RoleBinding",
            "metadata": {"name": f"{name}-leader-election", "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{name}-leader-election"},
            "subjects": [sa],
        },
    ]


HEADER = (
    "# Generated by `python -m kserve_compile.apply.rbac` from the USES table in kserve_compile/apply/rbac.py;\n"
    "# tests/apply/test_apply_deploy.py fails when this file and the table disagree. Do not edit by hand.\n"
)


def render() -> str:
    return HEADER + yaml.safe_dump_all(manifests(), sort_keys=False, default_flow_style=None, width=120)


if __name__ == "__main__":
    sys.stdout.write(render())
