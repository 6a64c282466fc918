"""Each migrate rule, before → after on commented YAML: the exact text KServe's stored form needs, comments and key
order kept, and nothing else in the document moved. KServe sources: pkg/apis/serving/v1beta1/
inference_service_defaults.go and the component Default() methods (predictor_custom.go, transformer_custom.go,
explainer_art.go)."""

from __future__ import annotations

import pytest

from kserve_compile.errors import CompileError
from kserve_compile.inputs.config import parse_config
from kserve_compile.inputs.defaults import embedded_configmap
from kserve_compile.inputs.serving_types import FRAMEWORKS
from kserve_compile.migrate import migrate_text
from kserve_compile.migrate.rules import ISVC_RULES, Settings

HEAD = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"


def settings(**overrides: str) -> Settings:
    """KServe's shipped config with some data keys replaced."""
    data = dict(embedded_configmap()["data"])
    data.update(overrides)
    return Settings.from_config(parse_config(data))


SHIPPED = settings()
STANDARD_NO_TOKEN = settings(
    deploy='{"defaultDeploymentMode": "RawDeployment"}', security='{"autoMountServiceAccountToken": false}'
)


def migrated(body: str, config: Settings = SHIPPED) -> str:
    return migrate_text(HEAD + body, "in.yaml", config).new_text.removeprefix(HEAD)


def rules_of(body: str, config: Settings = SHIPPED) -> set[str]:
    return {c.rule for o in migrate_text(HEAD + body, "in.yaml", config).objects for c in o.changes}


def test_every_rule_names_the_kserve_source_it_mirrors():
    for rule in ISVC_RULES:
        assert rule.source.startswith("pkg/apis/serving/v1beta1/"), rule
        assert rule.summary and rule.id


@pytest.mark.parametrize(("legacy", "current"), [("RawDeployment", "Standard"), ("Serverless", "Knative")])
def test_legacy_deployment_mode_names_become_the_current_ones(legacy: str, current: str):
    body = f"""metadata:
  name: m   # model
  annotations:
    serving.kserve.io/deploymentMode: "{legacy}"  # old name
    team: a
spec:
  predictor:
    model: {{modelFormat: {{name: sklearn}}, storageUri: gs://b/m}}
  # end
"""
    pad = " " * (len(legacy) - len(current))
    assert migrated(body.replace("\n    team: a", "\n    team: a\n    modelFormat: sklearn")) == body.replace(
        f'"{legacy}"  # old', f'"{current}"{pad}  # old'
    ).replace("\n    team: a", "\n    team: a\n    modelFormat: sklearn")
    assert rules_of(body) == {"deployment-mode-name", "model-format-annotation"}


def test_current_names_and_other_annotations_are_left_alone():
    body = """metadata:
  name: m
  annotations:
    serving.kserve.io/deploymentMode: Knative
    modelFormat: custom-name   # a user's own value wins (KServe sets it only when absent)
spec:
  predictor:
    model: {modelFormat: {name: sklearn}, storageUri: gs://b/m}
"""
    assert migrated(body) == body


def test_the_config_default_mode_is_written_when_the_isvc_names_none():
    body = """metadata:
  name: m
spec:
  predictor:
    model:
      modelFormat: {name: sklearn}
"""
    assert (
        migrated(body, STANDARD_NO_TOKEN)
        == """metadata:
  name: m
  annotations:
    serving.kserve.io/deploymentMode: Standard
    modelFormat: sklearn
spec:
  predictor:
    model:
      modelFormat: {name: sklearn}
    automountServiceAccountToken: false
"""
    )
    # the shipped config's default (Serverless → Knative) is not written: KServe adds only Standard and ModelMesh
    assert "deploymentMode" not in migrated(body)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_each_framework_field_becomes_predictor_model(framework: str):
    body = f"""metadata:
  name: m
  annotations:
    modelFormat: kept
spec:
  predictor:
    minReplicas: 1   # before
    # the old schema
    {framework}:
      storageUri: gs://b/m   # where
      runtimeVersion: "1.0"
    maxReplicas: 2   # after
"""
    v2 = framework in ("triton", "onnx", "huggingface")  # assign<Framework>Runtime sets v2 when unset
    assert (
        migrated(body)
        == f"""metadata:
  name: m
  annotations:
    modelFormat: kept
spec:
  predictor:
    minReplicas: 1   # before
    # the old schema
    model:
      modelFormat:
        name: {framework}
{"      protocolVersion: v2" + chr(10) if v2 else ""}      storageUri: gs://b/m   # where
      runtimeVersion: "1.0"
    maxReplicas: 2   # after
"""
    )


def test_a_framework_protocol_the_user_set_is_kept():
    body = """metadata: {name: m}
spec:
  predictor:
    triton:
      protocolVersion: grpc-v2
"""
    assert (
        migrated(body)
        == """metadata: {name: m, annotations: {modelFormat: triton}}
spec:
  predictor:
    model:
      modelFormat:
        name: triton
      protocolVersion: grpc-v2
"""
    )


@pytest.mark.parametrize(("fmt", "changed"), [("triton", True), ("vLLM", True), ("sklearn", False)])
def test_triton_and_vllm_models_get_protocol_v2(fmt: str, changed: bool):
    body = f"""metadata:
  name: m
  annotations: {{modelFormat: x}}
spec:
  predictor:
    model:
      modelFormat:
        name: {fmt}
      storageUri: gs://b/m
"""
    expected = body.replace("      storageUri", "      protocolVersion: v2\n      storageUri") if changed else body
    assert migrated(body) == expected


def test_the_model_format_annotation_is_added_with_the_model_s_format():
    body = """metadata:
  name: m
  labels: {team: a}   # labels
spec:
  predictor:
    model: {modelFormat: {name: lightgbm}, storageUri: gs://b/m}
"""
    assert migrated(body) == body.replace(
        "  labels: {team: a}   # labels\n",
        "  labels: {team: a}   # labels\n  annotations:\n    modelFormat: lightgbm\n",
    )


def test_custom_containers_are_named_and_get_the_configured_resources():
    body = """metadata:
  name: m
  annotations: {serving.kserve.io/deploymentMode: Knative}
spec:
  predictor:
    containers:
    - name: server   # the only one: renamed
      image: me/server:1
      resources:
        limits: {cpu: "4", memory: 1Gi}
  transformer:
    containers:
    - image: me/transformer:1
"""
    assert (
        migrated(body)
        == """metadata:
  name: m
  annotations: {serving.kserve.io/deploymentMode: Knative}
spec:
  predictor:
    containers:
    - name: kserve-container # the only one: renamed
      image: me/server:1
      resources:
        limits: {cpu: "4", memory: 1Gi}
        requests:
          cpu: "1"
          memory: 2Gi
  transformer:
    containers:
    - name: kserve-container
      image: me/transformer:1
      resources:
        limits:
          cpu: "1"
          memory: 2Gi
        requests:
          cpu: "1"
          memory: 2Gi
"""
    )
    assert rules_of(body) == {"custom-container-name", "custom-container-resources"}


def test_a_named_first_predictor_container_among_several_keeps_its_name():
    body = """metadata: {name: m}
spec:
  predictor:
    containers:
    - name: server
      image: me/server:1
      resources: {limits: {cpu: "1", memory: 2Gi}, requests: {cpu: "1", memory: 2Gi}}
    - name: sidecar
      image: me/sidecar:1
"""
    assert migrated(body) == body


def test_the_art_explainer_is_named_versioned_and_sized():
    body = """metadata: {name: m, annotations: {modelFormat: sklearn}}
spec:
  predictor:
    model: {modelFormat: {name: sklearn}}
  explainer:
    art:
      type: SquareAttack
      runtimeVersion: v0.14.0   # kept
      resources: {requests: {cpu: 500m, memory: 1Gi}}
"""
    assert migrated(body) == body.replace(
        "      type: SquareAttack\n", "      type: SquareAttack\n      name: kserve-container\n"
    ).replace(
        "{requests: {cpu: 500m, memory: 1Gi}}", '{requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: "1", memory: 2Gi}}'
    )


def test_no_token_is_mounted_where_the_config_says_so_unless_the_user_chose():
    body = """metadata: {name: m, annotations: {serving.kserve.io/deploymentMode: Knative, modelFormat: sklearn}}
spec:
  predictor:
    model: {modelFormat: {name: sklearn}}
  transformer:
    automountServiceAccountToken: true
    containers:
    - name: kserve-container
      image: t
      resources: {limits: {cpu: "1", memory: 2Gi}, requests: {cpu: "1", memory: 2Gi}}

# the end
"""
    assert migrated(body, STANDARD_NO_TOKEN) == body.replace(
        "    model: {modelFormat: {name: sklearn}}\n",
        "    model: {modelFormat: {name: sklearn}}\n    automountServiceAccountToken: false\n",
    )
    assert migrated(body) == body  # the shipped config mounts tokens: nothing to store


def test_a_modelmesh_predictor_keeps_its_framework_field():
    body = """metadata:
  name: m
  annotations:
    serving.kserve.io/deploymentMode: ModelMesh
spec:
  predictor:
    sklearn:
      storageUri: gs://b/m
"""
    assert migrated(body) == body


def test_other_kinds_are_never_touched():
    text = """apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: rt}
spec:
  containers:
  - name: something   # not renamed: ServingRuntime has no defaulting webhook
    image: x
"""
    assert migrate_text(text, "rt.yaml", STANDARD_NO_TOKEN).new_text == text


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (
            "metadata: {name: m}\nspec:\n  predictor:\n    sklearn: {storageUri: a}\n    xgboost: {storageUri: b}\n",
            "in.yaml:5:3: InferenceService/m: spec.predictor: sets 2 model frameworks (sklearn, xgboost)",
        ),
        (
            "metadata: {name: m}\nspec:\n  predictor:\n    model: {modelFormat: {name: a}}\n    sklearn: {storageUri: b}\n",
            "in.yaml:7:5: InferenceService/m: spec.predictor.sklearn: sets both sklearn and model",
        ),
        (
            "metadata:\n  name: m\n  annotations: [a]\nspec: {}\n",
            "in.yaml:5:3: InferenceService/m: metadata.annotations: must be a mapping, not a list",
        ),
        (
            "metadata:\n  name: m\n  annotations:\n    serving.kserve.io/deploymentMode: 3\n",
            "in.yaml:6:5: InferenceService/m: metadata.annotations[serving.kserve.io/deploymentMode]: must be a string, not a number",
        ),
        (
            "metadata: {name: m}\nspec:\n  predictor:\n    sklearn: gs://b/m\n",
            "in.yaml:6:5: InferenceService/m: spec.predictor.sklearn: must be a mapping, not a string",
        ),
    ],
)
def test_bad_input_is_reported_with_file_line_column_object_and_field(body: str, where: str):
    with pytest.raises(CompileError) as exc:
        migrate_text(HEAD + body, "in.yaml", SHIPPED)
    assert str(exc.value).startswith(where), str(exc.value)
