"""Apply order: Namespaces, CRDs, then (group, kind, namespace, name); independent of input order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kserve_compile.emit import APPLY_FIRST, sort_objects


def obj(api: str, kind: str, name: str, namespace: str | None = None, **extra: object) -> dict:
    meta: dict = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta, **extra}


UNSORTED = [
    obj("networking.k8s.io/v1", "Ingress", "m", "b"),
    obj("apps/v1", "Deployment", "m-predictor", "b"),
    obj("v1", "Service", "m-predictor", "b"),
    obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "inferenceservices.serving.kserve.io"),
    obj("autoscaling/v2", "HorizontalPodAutoscaler", "m-predictor", "a"),
    obj("v1", "Namespace", "b"),
    obj("apps/v1", "Deployment", "m-predictor", "a"),
    obj("v1", "ConfigMap", "cfg", "a"),
    obj("rbac.authorization.k8s.io/v1", "ClusterRole", "reader"),
    obj("v1", "Namespace", "a"),
    obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "aaa.example.com"),
    obj("serving.kserve.io/v1alpha1", "ServingRuntime", "sklearn", "a"),
    obj("v1", "Service", "m-predictor", "a"),
]

EXPECTED = [
    ("Namespace", "", "a"),
    ("Namespace", "", "b"),
    ("CustomResourceDefinition", "", "aaa.example.com"),
    ("CustomResourceDefinition", "", "inferenceservices.serving.kserve.io"),
    ("ConfigMap", "a", "cfg"),  # core group "" first, then by kind
    ("Service", "a", "m-predictor"),
    ("Service", "b", "m-predictor"),
    ("Deployment", "a", "m-predictor"),  # apps
    ("Deployment", "b", "m-predictor"),
    ("HorizontalPodAutoscaler", "a", "m-predictor"),  # autoscaling
    ("Ingress", "b", "m"),  # networking.k8s.io
    ("ClusterRole", "", "reader"),  # rbac.authorization.k8s.io
    ("ServingRuntime", "a", "sklearn"),  # serving.kserve.io
]


def ids(objs: list[dict]) -> list[tuple[str, str, str]]:
    return [(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objs]


def test_apply_order() -> None:
    assert ids(sort_objects(UNSORTED)) == EXPECTED


def test_order_table_is_data() -> None:
    assert APPLY_FIRST[:2] == (("", "Namespace"), ("apiextensions.k8s.io", "CustomResourceDefinition"))


def test_input_is_not_modified_and_objects_are_the_same() -> None:
    before = list(UNSORTED)
    out = sort_objects(iter(UNSORTED))
    assert UNSORTED == before
    assert sorted(map(id, out)) == sorted(map(id, UNSORTED))


@settings(max_examples=60, deadline=None)
@given(
    st.permutations(
        UNSORTED + [obj("v1", "ConfigMap", "cfg", "a", data={"v": "2"}), obj("v2", "ConfigMap", "cfg", "a")]
    )
)
def test_any_input_order_gives_the_same_result(objs: list[dict]) -> None:
    """Even duplicates (same identity, other content or version) land in one fixed order."""
    out = sort_objects(objs)
    reference = sort_objects(
        UNSORTED + [obj("v1", "ConfigMap", "cfg", "a", data={"v": "2"}), obj("v2", "ConfigMap", "cfg", "a")]
    )
    assert out == reference


def test_missing_fields_sort_as_empty() -> None:
    out = sort_objects([{"kind": "B", "apiVersion": "v1"}, {"kind": "A"}, {}])
    assert [o.get("kind") for o in out] == [None, "A", "B"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("nope", "object #2: expected a mapping, got str"),
        ({"kind": "Pod", "metadata": []}, "object #2: metadata: expected a mapping"),
        ({"kind": "Pod", "metadata": {"name": 3}}, "object #2: metadata.name: expected a string, got int"),
        ({"apiVersion": 1, "kind": "Pod"}, "object #2: apiVersion: expected a string"),
    ],
)
def test_malformed_objects_are_named(bad: object, message: str) -> None:
    with pytest.raises(TypeError) as caught:
        sort_objects([obj("v1", "Pod", "ok"), bad])  # type: ignore[list-item]
    assert str(caught.value).startswith(message)
