"""Canary predictors in Standard mode: replica split, mergo override, building and rendering.

Ports KServe's ``components/predictor_test.go`` TestAdjustStableMinReplicasForCanaries (lines 111-238) and the
observable facts of ``ctl/canary_controller_test.go`` (replicas 109-223, storage annotation per variant 151-162).
"""

from __future__ import annotations

from typing import Any

import pytest

from kserve_compile import constants as C
from kserve_compile.errors import InputError
from kserve_compile.inputs.config import load_config
from kserve_compile.inputs.defaults import embedded_runtimes
from kserve_compile.inputs.serving_types import InferenceService
from kserve_compile.plan.canary import (
    build_canaries,
    canary_predictors,
    canary_replicas,
    merge_override,
    route_canaries,
    stable_min_replicas,
)
from kserve_compile.plan.components import build_predictor
from kserve_compile.plan.isvc import plan_isvc
from kserve_compile.render.workloads.standard import standard_workload

CONFIG = load_config([])
RUNTIMES = list(embedded_runtimes())
STANDARD_NONE = {C.ANN_DEPLOYMENT_MODE: C.MODE_STANDARD, C.ANN_AUTOSCALER_CLASS: C.AUTOSCALER_NONE}


def make_isvc(
    predictor: dict[str, Any],
    canaries: list[dict[str, Any]],
    annotations: dict[str, str] | None = None,
    status: dict[str, Any] | None = None,
) -> InferenceService:
    data: dict[str, Any] = {
        "apiVersion": C.ISVC_API_VERSION,
        "kind": C.KIND_ISVC,
        "metadata": {"name": "canary-test", "namespace": "default", "annotations": annotations or dict(STANDARD_NONE)},
        "spec": {"predictor": predictor, "canary": canaries},
    }
    if status is not None:
        data["status"] = status
    return InferenceService.model_validate(data)


def tf_predictor(uri: str, **extra: Any) -> dict[str, Any]:
    return {"model": {"modelFormat": {"name": "tensorflow"}, "storageUri": uri, "runtimeVersion": "0.14.0"}, **extra}


def canary(name: str, traffic: int, uri: str | None = None, **extra: Any) -> dict[str, Any]:
    predictor: dict[str, Any] = {"name": name, **extra}
    if uri is not None:
        predictor["model"] = {"modelFormat": {"name": "tensorflow"}, "storageUri": uri, "runtimeVersion": "0.14.0"}
    return {"trafficPercent": traffic, "predictor": predictor}


def built(isvc: InferenceService):  # noqa: ANN201
    plan = plan_isvc(isvc, CONFIG, RUNTIMES)
    labels = dict(plan.isvc.metadata.labels)
    build_predictor(plan.isvc, plan.isvc.spec.predictor, CONFIG, RUNTIMES, labels)
    return plan, build_canaries(plan.isvc, plan.components[0], CONFIG, RUNTIMES, labels)


# --- replicas (predictor_test.go:111-238, canary_controller_test.go) ---------------------------------------------

ADJUST_CASES = [
    # (name, stable, canaries [(name, traffic, explicit minReplicas)], ready names, expected stable)
    ("no canaries - unchanged", 10, [], set(), 10),
    ("canary not in status - stable unchanged", 10, [("v2", 20, None)], set(), 10),
    ("canary ready=false - stable unchanged", 10, [("v2", 20, None)], set(), 10),
    ("canary ready=true - stable reduced by computed count", 10, [("v2", 20, None)], {"v2"}, 8),
    ("mixed readiness - only ready canary counted", 10, [("v2", 20, None), ("v3", 30, None)], {"v2"}, 8),
    ("all canaries ready - stable reduced by full sum", 10, [("v2", 20, None), ("v3", 30, None)], {"v2", "v3"}, 5),
    ("reduction floored at 1", 2, [("v2", 50, None)], {"v2"}, 1),
    ("explicit canary minReplicas honored when ready", 10, [("v2", 20, 3)], {"v2"}, 7),
    ("explicit canary minReplicas ignored when not ready", 10, [("v2", 20, 3)], set(), 10),
]


@pytest.mark.parametrize(
    ("name", "stable", "canaries", "ready", "expected"), ADJUST_CASES, ids=[c[0] for c in ADJUST_CASES]
)
def test_adjust_stable_min_replicas_for_canaries(
    name: str, stable: int, canaries: list, ready: set, expected: int
) -> None:
    specs = [
        {"trafficPercent": t, "predictor": {"name": n, **({"minReplicas": m} if m is not None else {})}}
        for n, t, m in canaries
    ]
    isvc = make_isvc({"minReplicas": stable, **tf_predictor("s3://m/v1")}, specs)
    assert stable_min_replicas(isvc, ready) == expected


def test_stable_without_min_replicas_is_left_alone() -> None:
    isvc = make_isvc(tf_predictor("s3://m/v1"), [canary("v2", 50, "s3://m/v2")])
    assert stable_min_replicas(isvc, {"v2"}) is None


@pytest.mark.parametrize(
    ("stable", "traffic", "explicit", "expected"),
    [
        (4, 25, None, 1),  # canary_controller_test.go:134-149
        (4, 50, None, 2),  # canary_controller_test.go:207-214
        (None, 10, None, 1),  # stable minReplicas defaults to 1, rounded up
        (3, 40, None, 2),  # ceil(1.2)
        (4, 0, None, 0),
        (10, 20, 3, 3),  # an explicit canary minReplicas wins
    ],
)
def test_canary_replicas(stable: int | None, traffic: int, explicit: int | None, expected: int) -> None:
    predictor = tf_predictor("s3://m/v1", **({"minReplicas": stable} if stable is not None else {}))
    extra = {"minReplicas": explicit} if explicit is not None else {}
    isvc = make_isvc(predictor, [canary("v2", traffic, "s3://m/v2", **extra)])
    assert canary_replicas(isvc, isvc.spec.canary[0]) == expected


# --- mergo WithOverride --------------------------------------------------------------------------------------------


def test_merge_override_scalars_lists_and_structs() -> None:
    dst = {
        "name": "",
        "minReplicas": 4,
        "timeout": 30,
        "nodeSelector": {"pool": "cpu", "zone": "a"},
        "tolerations": [{"key": "a"}],
        "model": {
            "modelFormat": {"name": "tensorflow"},
            "storageUri": "s3://v1",
            "env": [{"name": "A", "value": "1"}],
            "resources": {"limits": {"cpu": "1", "memory": "2Gi"}},
        },
        "affinity": {"nodeAffinity": {"x": 1}},
    }
    src = {
        "name": "v2",
        "timeout": 0,  # empty: never overrides a set value
        "containerConcurrency": 0,  # empty but dst has none (a nil pointer): filled
        "nodeSelector": {"zone": "", "gpu": "yes"},  # a Go map: entries win even when empty
        "tolerations": [],  # an empty slice never overrides
        "model": {
            "storageUri": "s3://v2",
            "env": [{"name": "B", "value": "2"}],
            "resources": {"limits": {"memory": "4Gi"}},
        },
        "affinity": {"podAffinity": {"y": 2}},
    }
    out = merge_override(dst, src)
    assert out == {
        "name": "v2",
        "minReplicas": 4,
        "timeout": 30,
        "containerConcurrency": 0,
        "nodeSelector": {"pool": "cpu", "zone": "", "gpu": "yes"},
        "tolerations": [{"key": "a"}],
        "model": {
            "modelFormat": {"name": "tensorflow"},
            "storageUri": "s3://v2",
            "env": [{"name": "B", "value": "2"}],
            "resources": {"limits": {"cpu": "1", "memory": "4Gi"}},
        },
        "affinity": {"nodeAffinity": {"x": 1}, "podAffinity": {"y": 2}},
    }
    assert dst["name"] == "" and dst["model"]["storageUri"] == "s3://v1", "the stable predictor must not be mutated"


def test_canary_predictor_is_stable_merged_with_canary_and_autoscaling_cleared() -> None:
    stable = tf_predictor(
        "s3://m/v1",
        minReplicas=4,
        maxReplicas=8,
        scaleTarget=60,
        scaleMetric="cpu",
        labels={"variant": "stable", "team": "ml"},
        serviceAccountName="sa",
    )
    isvc = make_isvc(stable, [canary("v2", 25, "s3://m/v2", labels={"variant": "canary"})])
    [(predictor, traffic)] = canary_predictors(isvc, isvc.spec.predictor)
    assert traffic == 25
    assert predictor.name == "v2"
    assert predictor.model is not None and predictor.model.storage_uri == "s3://m/v2"
    assert predictor.model.runtime_version == "0.14.0"
    assert predictor.labels == {"variant": "canary", "team": "ml"}
    assert predictor.k8s["serviceAccountName"] == "sa"  # inherited from the stable PodSpec
    assert (
        predictor.min_replicas,
        predictor.max_replicas,
        predictor.scale_target,
        predictor.scale_metric,
        predictor.auto_scaling,
    ) == (1, 0, None, None, None)


def test_canary_without_model_inherits_the_stable_model() -> None:
    isvc = make_isvc(tf_predictor("s3://m/v1", minReplicas=2), [canary("v2", 50, containerConcurrency=4)])
    [(predictor, _)] = canary_predictors(isvc, isvc.spec.predictor)
    assert predictor.model is not None and predictor.model.storage_uri == "s3://m/v1"
    assert predictor.container_concurrency == 4 and predictor.min_replicas == 1


# --- built through the predictor path ------------------------------------------------------------------------------


def test_canary_components_match_canary_controller_test() -> None:
    isvc = make_isvc(
        tf_predictor("s3://test/model-v1", minReplicas=4),
        [canary("v2", 25, "s3://test/model-v2"), canary("v3", 25, "s3://test/model-v3")],
    )
    plan, canaries = built(isvc)
    assert [(c.name, c.component.name, c.replicas, c.traffic_percent) for c in canaries] == [
        ("v2", "canary-test-v2-predictor", 1, 25),
        ("v3", "canary-test-v3-predictor", 1, 25),
    ]
    stable = plan.components[0]
    assert stable.annotations[C.ANN_STORAGE_SOURCE_URI] == "s3://test/model-v1"
    for c, uri in zip(canaries, ("s3://test/model-v2", "s3://test/model-v3"), strict=True):
        assert c.component.annotations[C.ANN_STORAGE_SOURCE_URI] == uri
        assert c.component.labels[C.LABEL_COMPONENT] == C.PREDICTOR
        assert c.component.labels[C.LABEL_ISVC] == "canary-test"
        assert c.component.spec.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True) == {
            "minReplicas": 1
        }
        assert c.component.runtime is not None and c.component.runtime.name == stable.runtime.name
        image = c.component.pod_spec["containers"][0]["image"]
        assert image.endswith(":0.14.0"), image


def test_rendered_objects_replicas_and_storage_initializer() -> None:
    isvc = make_isvc(tf_predictor("s3://test/model-v1", minReplicas=4), [canary("v2", 25, "s3://test/model-v2")])
    _, canaries = built(isvc)
    [c] = canaries
    from kserve_compile.render.workloads.standard.deployment import pod_template

    objects = standard_workload(c.component, pod_template(c.component), CONFIG, otel=False)
    assert c.component.name == "canary-test-v2-predictor"
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objects]
    assert kinds == [
        ("Service", "canary-test-v2-predictor"),
        ("Deployment", "canary-test-v2-predictor"),
    ]  # class none: no HPA
    dep = objects[1]
    assert dep["spec"]["replicas"] == 1
    assert dep["spec"]["template"]["metadata"]["annotations"][C.ANN_STORAGE_SOURCE_URI] == "s3://test/model-v2"
    assert dep["spec"]["selector"]["matchLabels"] == {C.LABEL_APP: "isvc.canary-test-v2-predictor"}


def test_hpa_class_gives_min_equal_max_and_logger_keeps_port_8080() -> None:
    annotations = {C.ANN_DEPLOYMENT_MODE: C.MODE_STANDARD}
    stable = tf_predictor(
        "s3://m/v1",
        minReplicas=3,
        maxReplicas=6,
        scaleTarget=70,
        logger={"mode": "all", "url": "http://sink.default/"},
        deploymentStrategy={"type": "Recreate"},
    )
    isvc = make_isvc(stable, [canary("v2", 40, "s3://m/v2")], annotations=annotations)
    _, canaries = built(isvc)
    [c] = canaries
    assert c.replicas == 2
    assert c.predictor.logger is not None  # inherited, so the agent annotations are there …
    assert c.component.annotations[C.ANN_LOGGER] == "true"
    from kserve_compile.render.workloads.standard.deployment import pod_template

    objects = standard_workload(c.component, pod_template(c.component), CONFIG, otel=False)
    svc, dep, hpa = objects
    assert svc["spec"]["ports"][0]["targetPort"] == C.DEFAULT_HTTP_PORT  # … but the canary reconciler has no logger
    assert dep["spec"]["strategy"]["type"] == "RollingUpdate"  # nor the stable's deploymentStrategy
    assert "replicas" not in dep["spec"]
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 2)
    assert hpa["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}
    ]


def test_canary_inherits_the_stable_runtime_and_is_checked_against_it() -> None:
    # The stable's auto-selected runtime is written into the model KServe merges over, so a canary of another
    # format without its own runtime is checked against the stable's runtime.
    isvc = make_isvc(
        tf_predictor("s3://m/v1"),
        [
            {
                "trafficPercent": 10,
                "predictor": {"name": "v2", "model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://m/v2"}},
            }
        ],
    )
    # the pipeline builds canaries while planning, so the error surfaces there
    with pytest.raises(InputError) as err:
        plan_isvc(isvc, CONFIG, RUNTIMES)
    assert err.value.message.startswith("fails to build resources for canary v2: ")
    assert "kserve-tensorflow-serving" in err.value.message
    assert err.value.path.startswith("spec.canary[0].predictor")


def test_route_canaries_lists_services_in_spec_order() -> None:
    isvc = make_isvc(
        tf_predictor("s3://m/v1", minReplicas=4), [canary("v3", 10, "s3://m/v3"), canary("v2", 20, "s3://m/v2")]
    )
    _, canaries = built(isvc)
    assert route_canaries(canaries) == (("canary-test-v3-predictor", 10), ("canary-test-v2-predictor", 20))


def test_no_canaries_builds_nothing() -> None:
    isvc = make_isvc(tf_predictor("s3://m/v1"), [])
    _, canaries = built(isvc)
    assert canaries == [] and route_canaries(canaries) == ()
