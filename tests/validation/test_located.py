"""Admission errors through the whole pipeline: each names its file, line, object and field."""

from __future__ import annotations

import pytest

from kserve_compile.driver import compile as compile_documents
from kserve_compile.errors import CompileError
from kserve_compile.inputs.parse import parse_text

ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: demo
  annotations:
    serving.kserve.io/deploymentMode: Standard
spec:
  predictor:
    model:
      modelFormat: {name: sklearn}
      storageUri: gs://b/m
"""

RUNTIME = """\
---
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: {name}
spec:
  protocolVersions: [v1]
  supportedModelFormats:
    - name: sklearn
      autoSelect: true
      priority: {priority}
  containers:
    - name: kserve-container
      image: example.com/server:1
      env:
        - name: {env}
          value: x
"""


def problems(text: str) -> list[str]:
    with pytest.raises(CompileError) as err:
        compile_documents(parse_text(text, "in.yaml"))
    return [p.format() for p in err.value.problems if p.severity == "error"]


def test_isvc_admission_error_is_located() -> None:
    text = ISVC + "    minReplicas: 3\n    maxReplicas: 2\n"
    assert problems(text) == [
        "in.yaml:12:5: InferenceService/demo: spec.predictor.minReplicas: 'MinReplicas' cannot be greater than MaxReplicas"
    ]


def test_every_isvc_reports_its_first_error() -> None:
    second = ISVC.replace("name: demo", "name: other") + "    containerConcurrency: -1\n    minReplicas: -1\n"
    text = ISVC.replace("name: demo", "name: Demo") + "---\n" + second
    found = problems(text)
    assert len(found) == 2
    assert found[0].startswith(
        'in.yaml:4:3: InferenceService/Demo: metadata.name: the InferenceService "Demo" is invalid'
    )
    assert (
        found[1]
        == "in.yaml:24:5: InferenceService/other: spec.predictor.containerConcurrency: parallelism cannot be less than 0"
    )


def test_bad_runtime_among_inputs_is_located() -> None:
    text = (
        ISVC
        + RUNTIME.format(name="first", env="A", priority=1)
        + RUNTIME.format(name="second", env="PYTHONPATH", priority=2)
    )
    assert problems(text) == [
        'in.yaml:44:11: ServingRuntime/second: spec.containers[0].env[0]: the ServingRuntime "second" is invalid: '
        'setting PYTHONPATH in container "kserve-container" is not allowed for security reasons',
    ]


def test_runtime_priority_clash_is_located() -> None:
    text = ISVC + RUNTIME.format(name="first", env="A", priority=1) + RUNTIME.format(name="second", env="B", priority=1)
    assert problems(text) == [
        "in.yaml:39:7: ServingRuntime/second: spec.supportedModelFormats[0].priority: same priority assigned for the model "
        "format sklearn in the servingruntimes first and second in namespace default",
    ]


def test_valid_inputs_with_a_runtime_render() -> None:
    result = compile_documents(parse_text(ISVC + RUNTIME.format(name="first", env="A", priority=1), "in.yaml"))
    assert any(o["kind"] == "Deployment" for o in result.objects)
