"""InferenceService admission: the HPA, KEDA and KPA autoscaling rules and when each applies.

Ports ``inference_service_validation.go`` (IV) 445-668 and ``inference_service_validation_test.go`` (IVT)
TestAutoscalerClassHPA, TestAutoscalerClassKEDA, TestValidateScalingKedaCompExtension and
TestCustomizeDeploymentStrategyUnsupportedForServerless.
"""

from __future__ import annotations

import pytest

from .helpers import (
    AUTOSCALER,
    MODE,
    STANDARD,
    admit,
    assert_rejects,
    config_with,
    sklearn,
)

HPA = {**STANDARD, AUTOSCALER: "hpa"}
KEDA = {**STANDARD, AUTOSCALER: "keda"}
KNATIVE = {MODE: "Knative"}
KNATIVE_HPA = {MODE: "Knative", "autoscaling.knative.dev/class": "hpa.autoscaling.knative.dev"}


def predictor(**ext: object) -> dict:
    return {"predictor": {"model": sklearn(), **ext}}


def resource(name: str, **target: object) -> dict:
    return {"type": "Resource", "resource": {"name": name, "target": target}}


# --- which rules apply (IV:446-466) -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "annotations", [STANDARD, {**STANDARD, AUTOSCALER: "none"}, {**STANDARD, AUTOSCALER: "external"}]
)
def test_standard_without_hpa_or_keda_has_no_autoscaling_rules(annotations: dict) -> None:
    """Standard mode checks nothing unless the autoscalerClass annotation says hpa or keda."""
    assert (
        admit(
            predictor(scaleMetric="concurrency", scaleTarget=500, deploymentStrategy={"type": "Recreate"}), annotations
        )
        == []
    )


def test_standard_default_from_configmap_counts_as_standard() -> None:
    """Defaulting writes the ConfigMap's Standard default into the annotation before validation reads it."""
    config = config_with(deploy={"defaultDeploymentMode": "Standard"})
    assert admit(predictor(deploymentStrategy={"type": "Recreate"}), {AUTOSCALER: "hpa"}, config=config) == []
    assert_rejects(
        predictor(scaleMetric="rps"),
        {AUTOSCALER: "hpa"},
        "[rps] is not a supported metric",
        "spec.predictor.scaleMetric",
        config=config,
    )


@pytest.mark.parametrize("annotations", [{}, KNATIVE, {MODE: "ModelMesh"}])
def test_any_other_mode_gets_kpa_rules(annotations: dict) -> None:
    """TestCustomizeDeploymentStrategyUnsupportedForServerless: no deploymentMode annotation (Knative default) → KPA."""
    assert_rejects(
        predictor(deploymentStrategy={"type": "Recreate"}),
        annotations,
        "customizing deploymentStrategy is only supported for raw deployment mode",
        "spec.predictor.deploymentStrategy",
    )


def test_knative_hpa_class_annotation_selects_hpa_rules() -> None:
    assert admit(predictor(scaleMetric="cpu", scaleTarget=80), KNATIVE_HPA) == []
    assert_rejects(
        predictor(scaleMetric="concurrency"),
        KNATIVE_HPA,
        "[concurrency] is not a supported metric",
        "spec.predictor.scaleMetric",
    )


def test_rules_apply_to_every_component() -> None:
    spec = {**predictor(), "transformer": {"containers": [{"image": "t"}], "scaleMetric": "rps"}}
    assert_rejects(spec, HPA, "[rps] is not a supported metric", "spec.transformer.scaleMetric")


# --- HPA (IV:527-565) -------------------------------------------------------------------------------------------------


def test_hpa_valid() -> None:
    assert admit(predictor(scaleMetric="cpu", scaleTarget=80), HPA) == []
    assert admit(predictor(scaleMetric="memory", scaleTarget=50), HPA) == []
    assert (
        admit(predictor(autoScaling={"metrics": [resource("cpu", type="Utilization", averageUtilization=80)]}), HPA)
        == []
    )


def test_hpa_metric() -> None:
    assert_rejects(
        predictor(scaleMetric="concurrency"),
        HPA,
        "[concurrency] is not a supported metric",
        "spec.predictor.scaleMetric",
    )


@pytest.mark.parametrize(
    ("metric", "target", "message"),
    [
        ("cpu", 0, "the target utilization percentage should be a [1-100] integer"),
        ("cpu", 101, "the target utilization percentage should be a [1-100] integer"),
        # ``metric == cpu && target < 1 || target > 100``: memory above 100 fails too
        ("memory", 101, "the target utilization percentage should be a [1-100] integer"),
        ("memory", 0, "the target memory should be greater than 1 MiB"),
    ],
)
def test_hpa_scale_target(metric: str, target: int, message: str) -> None:
    assert_rejects(predictor(scaleMetric=metric, scaleTarget=target), HPA, message, "spec.predictor.scaleTarget")


def test_hpa_default_metric_is_cpu() -> None:
    assert_rejects(
        predictor(scaleTarget=0),
        HPA,
        "the target utilization percentage should be a [1-100] integer",
        "spec.predictor.scaleTarget",
    )


def test_hpa_metric_source_type() -> None:
    metrics = [
        resource("cpu", type="Utilization"),
        {"type": "External", "external": {"metric": {"query": "q"}, "target": {"type": "Value", "value": "1"}}},
    ]
    assert_rejects(
        predictor(autoScaling={"metrics": metrics}),
        HPA,
        "invalid HPA metric source type with value [External],valid metric source types are Resource",
        "spec.predictor.autoScaling.metrics[1].type",
    )


def test_hpa_resource_must_be_set() -> None:
    assert_rejects(
        predictor(autoScaling={"metrics": [{"type": "Resource"}]}),
        HPA,
        "metricSpec.Resource is not set for resource metric source type",
        "spec.predictor.autoScaling.metrics[0]",
    )


# --- KEDA (IV:567-634, 508-525) ---------------------------------------------------------------------------------------


def external(query: str = "avg(requests)", **target: object) -> dict:
    return {"type": "External", "external": {"metric": {"backend": "prometheus", "query": query}, "target": target}}


def podmetric(query: str = "avg(requests)", **target: object) -> dict:
    return {
        "type": "PodMetric",
        "podmetric": {"metric": {"backend": "opentelemetry", "query": query}, "target": target},
    }


@pytest.mark.parametrize(
    "metric",
    [
        resource("cpu", type="Utilization", averageUtilization=80),
        resource("memory", type="AverageValue", averageValue="2Gi"),
        resource("memory", type="AverageValue", averageValue="1Mi"),
        resource("memory", type="Utilization", averageUtilization=60),
        external(type="Value", value="10"),
        podmetric(type="Value", value="5"),
    ],
)
def test_keda_valid(metric: dict) -> None:
    assert admit(predictor(autoScaling={"metrics": [metric]}), KEDA) == []


M0 = "spec.predictor.autoScaling.metrics[0]"


@pytest.mark.parametrize(
    ("metric", "message", "path"),
    [
        ({"type": "Resource"}, "metricSpec.Resource is not set for resource metric source type", M0),
        (
            resource("cpu", type="AverageValue"),
            "the cpu target value type should be Utilization",
            f"{M0}.resource.target.type",
        ),
        (
            resource("memory", type="Value"),
            "the memory target value type should be AverageValue or Utilization",
            f"{M0}.resource.target.type",
        ),
        (
            resource("memory", type="AverageValue", averageValue="512Ki"),
            "the memory target value should be greater than 1 MiB",
            f"{M0}.resource.target.averageValue",
        ),
        # an absent averageValue reads as zero (MetricQuantity.GetQuantity of nil)
        (
            resource("memory", type="AverageValue"),
            "the memory target value should be greater than 1 MiB",
            f"{M0}.resource.target.averageValue",
        ),
        (resource("disk", type="Utilization"), "resource type disk is not supported", f"{M0}.resource.name"),
        (
            resource("cpu", type="Utilization"),
            "the AverageUtilization type should be set",
            f"{M0}.resource.target.averageUtilization",
        ),
        (
            resource("cpu", type="Utilization", averageUtilization=0),
            "the target utilization percentage should be a [1-100] integer",
            f"{M0}.resource.target.averageUtilization",
        ),
        ({"type": "External"}, "metricSpec.External is not set for external metric source type", M0),
        (external(query="", type="Value"), "the query should not be empty", f"{M0}.external.metric.query"),
        (external(type="Value"), "the target threshold value should not be empty", f"{M0}.external.target.value"),
        (
            external(type="AverageValue", value="3"),
            "the AverageValue type should be set",
            f"{M0}.external.target.averageValue",
        ),
        ({"type": "PodMetric"}, "metricSpec.PodMetric is not set for pod metric source type", M0),
        (podmetric(query="", type="Value"), "the query should not be empty", f"{M0}.podmetric.metric.query"),
        (podmetric(type="Value"), "the target threshold value should not be empty", f"{M0}.podmetric.target.value"),
        (
            {"type": "UnknownType"},
            "unknown KEDA metric type with value [UnknownType].Valid types are Resource,External,PodMetric",
            f"{M0}.type",
        ),
    ],
)
def test_keda_invalid(metric: dict, message: str, path: str) -> None:
    assert_rejects(predictor(autoScaling={"metrics": [metric]}), KEDA, message, path)


def test_keda_rejects_scale_metric() -> None:
    assert_rejects(
        predictor(scaleMetric="cpu"), KEDA, "ScaleMetric is not supported for KEDA", "spec.predictor.scaleMetric"
    )


# --- KPA (IV:636-668) -------------------------------------------------------------------------------------------------


def test_kpa_valid() -> None:
    assert admit(predictor(scaleMetric="rps", scaleTarget=1), KNATIVE) == []
    assert admit(predictor(scaleMetric="concurrency", scaleTarget=0), KNATIVE) == []


def test_kpa_metric() -> None:
    assert_rejects(
        predictor(scaleMetric="cpu"), KNATIVE, "[cpu] is not a supported metric", "spec.predictor.scaleMetric"
    )


def test_kpa_rps_target() -> None:
    assert_rejects(
        predictor(scaleMetric="rps", scaleTarget=0),
        KNATIVE,
        "the target for rps should be greater than 1",
        "spec.predictor.scaleTarget",
    )
