"""``autoscaling.knative.dev/initial-scale``: KServe drops an isvc value Knative would reject.

Rules from ``pkg/controller/v1alpha1/utils/utils.go:113-155`` (ValidateInitialScaleAnnotation, which uses Go's
``strconv.Atoi``) and ``pkg/controller/v1beta1/inferenceservice/controller.go:239-267`` (run on the isvc's own
annotations in Knative mode, before the components copy them). Expected outcomes from
``pkg/controller/v1beta1/inferenceservice/controller_test.go:58-420``.
"""

from __future__ import annotations

import json

import pytest

from kserve_compile.inputs.config import parse_config
from kserve_compile.inputs.serving_types import ComponentExtension, ServingRuntime
from kserve_compile.plan.components import Component
from kserve_compile.plan.runtime_select import Selected
from kserve_compile.render.workloads.knative import (
    go_atoi,
    initial_scale_allowed,
    knative_service,
)

KEY = "autoscaling.knative.dev/initial-scale"
CONFIG = parse_config({"inferenceService": "{}"})


@pytest.mark.parametrize(
    "text, value",
    [
        ("3", 3),
        ("+3", 3),
        ("-1", -1),
        ("0", 0),
        ("-0", 0),
        ("007", 7),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("9223372036854775808", None),  # out of int64 range: ErrRange
        ("", None),
        (" 3", None),
        ("3 ", None),
        ("1_000", None),  # underscores only with base 0
        ("0x10", None),
        ("1.5", None),
        ("non-integer", None),
        ("\uff13", None),  # a full-width digit is no ASCII digit
        ("+", None),
    ],
)
def test_go_atoi(text: str, value: int | None) -> None:
    assert go_atoi(text) == value


@pytest.mark.parametrize(
    "text, allow_zero, kept",
    [
        ("0", False, False),  # controller_test.go:58-113
        ("3", False, True),  # :114-169
        ("non-integer", False, False),  # :170-225
        ("0", True, True),  # :254-309 (config-autoscaler allow-zero-initial-scale: "true")
        ("3", True, True),  # :310-365
        ("non-integer", True, False),  # :366-421
        ("-0", False, False),
        ("-2", False, True),  # an integer, so KServe keeps it (Knative validates the rest)
    ],
)
def test_initial_scale_allowed(text: str, allow_zero: bool, kept: bool) -> None:
    assert initial_scale_allowed(text, allow_zero=allow_zero) is kept


def _component(
    annotations: dict[str, str], own: dict[str, str] | None = None, runtime: dict[str, str] | None = None
) -> Component:
    selected = None
    if runtime is not None:
        rt = ServingRuntime.model_validate(
            {
                "apiVersion": "serving.kserve.io/v1alpha1",
                "kind": "ServingRuntime",
                "metadata": {"name": "rt", "namespace": "default"},
                "spec": {"annotations": runtime, "containers": [{"name": "kserve-container", "image": "i"}]},
            }
        )
        selected = Selected(rt, False)
    spec = ComponentExtension.model_validate({"minReplicas": 2, **({"annotations": own} if own is not None else {})})
    return Component(
        "predictor",
        "m-predictor",
        "default",
        {"serving.kserve.io/inferenceservice": "m"},
        annotations,
        {"containers": [{"name": "kserve-container", "image": "i"}]},
        spec,
        selected,
    )


def _template_annotations(c: Component, isvc_annotations: dict[str, str], **kw: bool) -> dict[str, str]:
    return knative_service(c, c.pod_spec, isvc_annotations, CONFIG, **kw)["spec"]["template"]["metadata"]["annotations"]


@pytest.mark.parametrize(
    "value, allow_zero, expected",
    [
        ("0", False, None),
        ("3", False, "3"),
        ("non-integer", False, None),
        ("0", True, "0"),
        ("3", True, "3"),
        ("non-integer", True, None),
    ],
)
def test_isvc_initial_scale_on_ksvc(value: str, allow_zero: bool, expected: str | None) -> None:
    """controller_test.go:58-421: the predictor ksvc template has the value, or no key at all."""
    isvc_annotations = {"serving.kserve.io/deploymentMode": "Knative", KEY: value}
    c = _component(dict(isvc_annotations))
    annotations = _template_annotations(c, isvc_annotations, allow_zero_initial_scale=allow_zero)
    assert annotations.get(KEY) == expected
    assert annotations["autoscaling.knative.dev/min-scale"] == "2"


def test_component_value_survives_a_rejected_isvc_value() -> None:
    """Only the isvc's annotation is checked; the component's own value (which wins the merge anyway) stays."""
    c = _component({KEY: "5"}, own={KEY: "5"})
    assert _template_annotations(c, {KEY: "0"})[KEY] == "5"


def test_runtime_value_takes_over_from_a_rejected_isvc_value() -> None:
    """With the isvc's value deleted first, the serving runtime's (lower priority) value is the one left."""
    c = _component({KEY: "bad"}, runtime={KEY: "4"})
    assert _template_annotations(c, {KEY: "bad"})[KEY] == "4"


def test_component_value_beats_runtime_value_after_rejection() -> None:
    c = _component({KEY: "5"}, own={KEY: "5"}, runtime={KEY: "4"})
    assert _template_annotations(c, {KEY: "non-integer"})[KEY] == "5"


def test_unchecked_component_value_passes_even_if_invalid() -> None:
    c = _component({KEY: "bad"}, own={KEY: "bad"})
    assert _template_annotations(c, {})[KEY] == "bad"


def test_disallowed_initial_scale_is_never_restored() -> None:
    cfg = parse_config({"inferenceService": json.dumps({"serviceAnnotationDisallowedList": [KEY]})})
    c = _component({}, own={KEY: "5"}, runtime={KEY: "4"})
    annotations = knative_service(c, c.pod_spec, {KEY: "0"}, cfg)["spec"]["template"]["metadata"]["annotations"]
    assert KEY not in annotations
