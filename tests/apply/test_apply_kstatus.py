"""kstatus rules plus KServe/Knative failure reasons (table-driven)."""

from __future__ import annotations

import pytest

from kserve_compile.apply import kstatus
from kserve_compile.apply.objects import normalise, order_for_apply, strip_scaled_replicas

DEP = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"generation": 2}, "spec": {"replicas": 2}}
READY_DEP = {
    "observedGeneration": 2,
    "replicas": 2,
    "updatedReplicas": 2,
    "readyReplicas": 2,
    "availableReplicas": 2,
    "conditions": [{"type": "Available", "status": "True"}],
}


def with_status(obj, status):
    return dict(obj, status=status)


def ksvc(ready, reason=""):
    return {
        "apiVersion": "serving.knative.dev/v1",
        "kind": "Service",
        "metadata": {"generation": 1},
        "status": {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": ready, "reason": reason}]},
    }


@pytest.mark.parametrize(
    "obj,state",
    [
        (None, kstatus.NOT_FOUND),
        (with_status(DEP, READY_DEP), kstatus.CURRENT),
        (with_status(DEP, dict(READY_DEP, observedGeneration=1)), kstatus.IN_PROGRESS),
        (with_status(DEP, dict(READY_DEP, readyReplicas=1)), kstatus.IN_PROGRESS),
        (with_status(DEP, dict(READY_DEP, replicas=3)), kstatus.IN_PROGRESS),
        (
            with_status(
                DEP,
                dict(
                    READY_DEP,
                    conditions=[{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}],
                ),
            ),
            kstatus.FAILED,
        ),
        (dict(DEP, metadata={"generation": 2, "deletionTimestamp": "2026-01-01T00:00:00Z"}), kstatus.TERMINATING),
        ({"apiVersion": "v1", "kind": "Service", "spec": {"type": "ClusterIP"}}, kstatus.CURRENT),
        ({"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer"}}, kstatus.IN_PROGRESS),
        ({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {}}, kstatus.CURRENT),
        ({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {}}, kstatus.CURRENT),
        (ksvc("True"), kstatus.CURRENT),
        (ksvc("Unknown"), kstatus.IN_PROGRESS),
        (ksvc("False", "Deploying"), kstatus.IN_PROGRESS),
        (ksvc("False", "RevisionFailed"), kstatus.FAILED),
        (ksvc("False", "ContainerMissing"), kstatus.FAILED),
        (
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "HTTPRoute",
                "status": {"parents": [{"conditions": [{"type": "Accepted", "status": "True"}]}]},
            },
            kstatus.CURRENT,
        ),
        ({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "status": {}}, kstatus.IN_PROGRESS),
        (
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "status": {"conditions": [{"type": "NamesAccepted", "status": "False"}]},
            },
            kstatus.FAILED,
        ),
        (
            {"apiVersion": "x/v1", "kind": "Thing", "status": {"conditions": [{"type": "Stalled", "status": "True"}]}},
            kstatus.FAILED,
        ),
    ],
)
def test_kstatus(obj, state):
    assert kstatus.compute(obj).state == state


def test_staged_order_and_normalise():
    objs = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "c"}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}},
    ]
    assert [[o["kind"] for o in stage] for stage in order_for_apply(objs)] == [
        ["Namespace"],
        ["Service", "Deployment", "IngressClass"],
    ]
    live = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "uid": "u", "resourceVersion": "9", "managedFields": [], "labels": {}},
        "data": {"k": "c2VjcmV0"},
        "status": {},
    }
    out = normalise(live)
    assert out["metadata"] == {"name": "s"} and out["data"]["k"].startswith("*** (sha256:")
    assert "c2VjcmV0" not in str(out)


def test_keda_scaled_object_also_strips_replicas():
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n"},
        "spec": {"replicas": 3},
    }
    so = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "d", "namespace": "n"},
        "spec": {"scaleTargetRef": {"name": "d"}},
    }
    out = strip_scaled_replicas([dep, so])
    assert "replicas" not in out[0]["spec"] and dep["spec"]["replicas"] == 3


def test_apply_order_is_render_order():
    """One kind-order table: what `render` prints is the order `apply` and the daemon write in."""
    from kserve_compile.emit.order import sort_objects

    objs = [
        {"apiVersion": a, "kind": k, "metadata": {"name": n, "namespace": "ns"}}
        for a, k, n in [
            ("networking.k8s.io/v1", "Ingress", "i"),
            ("apps/v1", "Deployment", "d"),
            ("v1", "ServiceAccount", "sa"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "c"),
            ("v1", "Service", "s"),
            ("v1", "Namespace", "ns"),
            ("autoscaling/v2", "HorizontalPodAutoscaler", "h"),
        ]
    ]
    flat = [o for stage in order_for_apply(objs) for o in stage]
    assert flat == sort_objects(objs)
    assert [o["kind"] for o in order_for_apply(objs)[0]] == ["Namespace", "CustomResourceDefinition"]
