"""The Knative Service built from a hand-made component, against KServe's ksvc builder rules.

Cases follow ``pkg/controller/v1beta1/inferenceservice/reconcilers/knative/ksvc_reconciler_test.go:40-204``
(TestCreateKnativeService) and the rules of ``ksvc_reconciler.go:87-219`` and
``pkg/controller/v1alpha1/utils/utils.go:48-81`` (SetAutoScalingAnnotations).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kserve_compile.errors import InputError
from kserve_compile.inputs.config import KServeConfig, parse_config
from kserve_compile.inputs.serving_types import ComponentExtension
from kserve_compile.plan.components import Component
from kserve_compile.render.workloads.knative import knative_service, revision_template

ROLLOUT = "serving.knative.dev/rollout-duration"
PASSTHROUGH = "serving.knative.openshift.io/enablePassthrough"
TAG_ROUTING = "serving.kserve.io/enable-tag-routing"
CLASS, TARGET, METRIC = (
    "autoscaling.knative.dev/class",
    "autoscaling.knative.dev/target",
    "autoscaling.knative.dev/metric",
)
MIN, MAX = "autoscaling.knative.dev/min-scale", "autoscaling.knative.dev/max-scale"
KPA = "kpa.autoscaling.knative.dev"
VISIBILITY = "networking.knative.dev/visibility"

POD = {"containers": [{"name": "test-container", "image": "test-image"}]}


def config(inference_service: dict | None = None) -> KServeConfig:
    """A ConfigMap with the ``inferenceService`` key (so KServe's built-in disallowed lists apply) unless None."""
    data = {"deploy": json.dumps({"defaultDeploymentMode": "Knative"})}
    if inference_service is not None:
        data["inferenceService"] = json.dumps(inference_service)
    return parse_config(data)


# ksvc_reconciler_test.go:85 passes disallowedLabelList ["serving.knative.dev/revision"]
TEST_CONFIG = config({"serviceLabelDisallowedList": ["serving.knative.dev/revision"]})


def component(
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    kind: str = "predictor",
    **ext: Any,
) -> Component:
    return Component(
        kind=kind,
        name="test-service",
        namespace="default",
        labels={"app": "test-app"} if labels is None else labels,
        annotations=dict(annotations or {}),
        pod_spec=json.loads(json.dumps(POD)),
        spec=ComponentExtension.model_validate(ext),
    )


# ksvc_reconciler_test.go:45-66: the annotations and ComponentExtensionSpec of the first case
META_ANNOTATIONS = {ROLLOUT: "30s", PASSTHROUGH: "true", TAG_ROUTING: "true"}
FULL_EXT = {
    "minReplicas": 1,
    "maxReplicas": 3,
    "scaleTarget": 10,
    "scaleMetric": "concurrency",
    "canaryTrafficPercent": 20,
    "timeout": 300,
    "containerConcurrency": 100,
}


def build(c: Component, cfg: KServeConfig = TEST_CONFIG, **kw: Any) -> dict[str, Any]:
    return knative_service(c, c.pod_spec, {}, cfg, **kw)


def test_canary_split_with_tag_routing_and_managed_annotations() -> None:
    """ksvc_reconciler_test.go:93-101 "With canary traffic split", checks at :145-197, whole object spelled out."""
    ksvc = build(component(META_ANNOTATIONS, **FULL_EXT), rolled_out_revision="test-revision-1")
    assert ksvc == {
        "apiVersion": "serving.knative.dev/v1",
        "kind": "Service",
        "metadata": {
            "name": "test-service",
            "namespace": "default",
            "labels": {"app": "test-app"},
            "annotations": {ROLLOUT: "30s", PASSTHROUGH: "true"},
        },
        "spec": {
            "template": {
                "metadata": {
                    "labels": {"app": "test-app"},
                    "annotations": {
                        TAG_ROUTING: "true",
                        CLASS: KPA,
                        TARGET: "10",
                        METRIC: "concurrency",
                        MIN: "1",
                        MAX: "3",
                    },
                },
                "spec": {
                    "containers": [{"name": "test-container", "image": "test-image"}],
                    "containerConcurrency": 100,
                    "timeoutSeconds": 300,
                    "responseStartTimeoutSeconds": 300,
                },
            },
            "traffic": [
                {"latestRevision": True, "percent": 20, "tag": "latest"},
                {"revisionName": "test-revision-1", "latestRevision": False, "percent": 80, "tag": "prev"},
            ],
        },
    }


def test_without_canary_all_traffic_to_latest_tagged() -> None:
    """ksvc_reconciler_test.go:102-110 "Without canary traffic": empty extension, one target at 100, tag kept."""
    ksvc = build(component(META_ANNOTATIONS), rolled_out_revision="test-revision-1")
    assert ksvc["spec"]["traffic"] == [{"latestRevision": True, "percent": 100, "tag": "latest"}]
    template = ksvc["spec"]["template"]
    assert template["metadata"]["annotations"] == {TAG_ROUTING: "true", CLASS: KPA, MIN: "1"}
    # no timeout, no containerConcurrency: Knative's defaults apply
    assert set(template["spec"]) == {"containers"}


def test_canary_100_percent_has_no_previous_target() -> None:
    """ksvc_reconciler_test.go:111-121 "With canary 100 percent": a single latest target at 100."""
    ksvc = build(component(META_ANNOTATIONS, canaryTrafficPercent=100), rolled_out_revision="test-revision-1")
    assert ksvc["spec"]["traffic"] == [{"latestRevision": True, "percent": 100, "tag": "latest"}]


def test_canary_without_rolled_out_revision_is_the_default_split() -> None:
    """First rollout (no status yet): canaryTrafficPercent is ignored (ksvc_reconciler.go:135)."""
    for revision in (None, ""):
        ksvc = build(component({}, canaryTrafficPercent=20), rolled_out_revision=revision)
        assert ksvc["spec"]["traffic"] == [{"latestRevision": True, "percent": 100}]


def test_canary_zero_sends_everything_to_previous() -> None:
    ksvc = build(component({}, canaryTrafficPercent=0), rolled_out_revision="r-00001")
    assert ksvc["spec"]["traffic"] == [
        {"latestRevision": True, "percent": 0},
        {"revisionName": "r-00001", "latestRevision": False, "percent": 100, "tag": "prev"},
    ]


def test_tag_routing_needs_the_exact_value_true() -> None:
    for value in ("True", "1", "yes", ""):
        ksvc = build(component({TAG_ROUTING: value}))
        assert ksvc["spec"]["traffic"] == [{"latestRevision": True, "percent": 100}], value


def test_tag_routing_from_component_annotations() -> None:
    """KServe reads the tag-routing key from the component annotations (isvc ∪ component), not the isvc alone."""
    ksvc = build(component({TAG_ROUTING: "true"}))
    assert ksvc["spec"]["traffic"][0]["tag"] == "latest"


def test_no_managed_annotations_means_no_metadata_annotations() -> None:
    ksvc = build(component({"foo": "bar"}))
    assert "annotations" not in ksvc["metadata"]
    assert ksvc["spec"]["template"]["metadata"]["annotations"]["foo"] == "bar"


def test_autoscaling_defaults_min_one_no_max() -> None:
    """utils.go:66-80: min-scale "1" when minReplicas is unset; max-scale only when maxReplicas is not 0."""
    annotations = build(component())["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {CLASS: KPA, MIN: "1"}


def test_autoscaling_min_zero_is_written() -> None:
    annotations = build(component(minReplicas=0, maxReplicas=5))["spec"]["template"]["metadata"]["annotations"]
    assert annotations[MIN] == "0" and annotations[MAX] == "5"


def test_autoscaling_class_override_is_kept() -> None:
    """utils.go:56-58: a user-set class (e.g. HPA) is not replaced by KPA."""
    hpa = "hpa.autoscaling.knative.dev"
    annotations = build(component({CLASS: hpa}, scaleMetric="cpu", scaleTarget=70))["spec"]["template"]["metadata"][
        "annotations"
    ]
    assert annotations[CLASS] == hpa
    assert annotations[METRIC] == "cpu" and annotations[TARGET] == "70"


def test_user_min_max_scale_annotations_are_replaced() -> None:
    """Without the ``inferenceService`` key nothing is filtered, so the isvc's min/max-scale reach the component;
    SetAutoScalingAnnotations overwrites min-scale always and max-scale when maxReplicas is set."""
    c = component({MIN: "7", MAX: "9"}, minReplicas=2, maxReplicas=4)
    annotations = build(c, config(None))["spec"]["template"]["metadata"]["annotations"]
    assert annotations[MIN] == "2" and annotations[MAX] == "4"


def test_user_max_scale_survives_when_max_replicas_is_zero() -> None:
    c = component({MAX: "9"})
    annotations = build(c, config(None))["spec"]["template"]["metadata"]["annotations"]
    assert annotations[MAX] == "9" and annotations[MIN] == "1"


def test_cluster_local_label_reaches_ksvc_metadata_not_template() -> None:
    """ksvc_reconciler.go:166-168 + :197: ksvc labels unfiltered, template labels minus the disallowed list."""
    labels = {VISIBILITY: "cluster-local", "serving.kserve.io/inferenceservice": "m", "component": "predictor"}
    ksvc = build(component(labels=labels), config({}))
    assert ksvc["metadata"]["labels"] == labels
    assert ksvc["spec"]["template"]["metadata"]["labels"] == {
        "serving.kserve.io/inferenceservice": "m",
        "component": "predictor",
    }


def test_label_disallowed_list_appends_user_entries() -> None:
    labels = {"app": "a", "serving.knative.dev/revision": "x", VISIBILITY: "cluster-local"}
    ksvc = build(component(labels=labels), TEST_CONFIG)
    assert ksvc["spec"]["template"]["metadata"]["labels"] == {"app": "a"}
    assert ksvc["metadata"]["labels"] == labels


def test_without_inference_service_key_no_label_is_filtered() -> None:
    """configmap.go:234-253 quirk: the built-in lists exist only when the ``inferenceService`` key does."""
    labels = {"app": "a", VISIBILITY: "cluster-local"}
    ksvc = build(component(labels=labels), config(None))
    assert ksvc["spec"]["template"]["metadata"]["labels"] == labels


def test_pod_spec_is_copied_not_defaulted() -> None:
    """Knative mode adds no KServe pod defaults (no readinessProbe, imagePullPolicy …) and does not alias input."""
    c = component(timeout=60)
    ksvc = knative_service(c, c.pod_spec, {}, TEST_CONFIG)
    spec = ksvc["spec"]["template"]["spec"]
    assert spec["containers"] == POD["containers"]
    assert spec["timeoutSeconds"] == 60 and spec["responseStartTimeoutSeconds"] == 60
    spec["containers"][0]["image"] = "changed"
    assert c.pod_spec["containers"][0]["image"] == "test-image"
    assert "timeoutSeconds" not in c.pod_spec


def test_component_annotations_are_not_mutated() -> None:
    c = component(dict(META_ANNOTATIONS), **FULL_EXT)
    before = dict(c.annotations)
    build(c, rolled_out_revision="r")
    assert c.annotations == before


def test_pod_template_from_revision_template_keeps_webhook_annotations() -> None:
    """A template that went through the pod webhook: annotations it added (metrics aggregation) are kept."""
    c = component({"foo": "bar", ROLLOUT: "10s"}, labels={"app": "a", VISIBILITY: "cluster-local"}, maxReplicas=2)
    template = revision_template(c, {}, config({}))
    assert template["metadata"]["annotations"] == {"foo": "bar", CLASS: KPA, MIN: "1", MAX: "2"}
    assert template["metadata"]["labels"] == {"app": "a"}
    template["metadata"]["annotations"]["prometheus.io/port"] = "9088"
    template["spec"]["containers"][0]["env"] = [{"name": "X", "value": "1"}]
    ksvc = knative_service(c, template, {}, config({}))
    assert ksvc["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"] == "9088"
    assert ksvc["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "X", "value": "1"}]
    assert ksvc["metadata"]["annotations"] == {ROLLOUT: "10s"}
    assert ksvc["spec"]["template"]["metadata"]["labels"] == {"app": "a"}


def test_same_result_from_pod_spec_and_untouched_template() -> None:
    c = component(dict(META_ANNOTATIONS), **FULL_EXT)
    template = revision_template(c, {}, TEST_CONFIG)
    assert knative_service(c, template, {}, TEST_CONFIG) == knative_service(c, c.pod_spec, {}, TEST_CONFIG)


def test_canary_out_of_range_is_a_located_error() -> None:
    """Knative would reject a percent outside 0..100; the error names the component's field."""
    c = component(kind="explainer", canaryTrafficPercent=150)
    with pytest.raises(InputError) as err:
        build(c, rolled_out_revision="r")
    assert err.value.path == "spec.explainer.canaryTrafficPercent"
    assert "test-service" in err.value.message and "150" in err.value.message


@pytest.mark.parametrize(
    "given, path",
    [
        ("not a mapping", "spec.predictor"),
        ({"metadata": {}, "spec": ["x"]}, "spec.predictor.template.spec"),
        ({"metadata": "x", "spec": {}}, "spec.predictor.template.metadata"),
    ],
)
def test_bad_pod_template_is_a_located_error(given: Any, path: str) -> None:
    with pytest.raises(InputError) as err:
        knative_service(component(), given, {}, TEST_CONFIG)
    assert err.value.path == path
    assert "Knative Service test-service" in err.value.message
