"""Mode resolution, the defaulting webhook's rewrites, and KServe's error wording for bad inputs."""

from __future__ import annotations

import json

import pytest

from kserve_compile.driver import compile as compile_documents
from kserve_compile.errors import CompileError, InputError
from kserve_compile.inputs.config import parse_config
from kserve_compile.inputs.defaults import embedded_configmap
from kserve_compile.inputs.parse import parse_text
from kserve_compile.plan.defaulting import default_isvc
from kserve_compile.plan.mode import legacy_warning, resolve_mode
from kserve_compile.plan.storage_uri import validate_storage_uri

from .builders import isvc

SHIPPED = parse_config(embedded_configmap()["data"])
STANDARD = parse_config({**embedded_configmap()["data"], "deploy": json.dumps({"defaultDeploymentMode": "Standard"})})
MODE = "serving.kserve.io/deploymentMode"


@pytest.mark.parametrize(
    ("annotation", "status", "config", "expected"),
    [
        ("RawDeployment", None, SHIPPED, "Standard"),
        ("Serverless", None, STANDARD, "Knative"),
        ("Standard", None, SHIPPED, "Standard"),
        ("bogus", None, STANDARD, "Standard"),  # unknown annotation values are ignored
        (None, None, SHIPPED, "Knative"),  # shipped default "Serverless"
        ("Standard", "Serverless", SHIPPED, "Knative"),  # status.deploymentMode wins
        (None, "", SHIPPED, "Standard"),  # "" parses to Standard
    ],
)
def test_resolve_mode(annotation, status, config, expected) -> None:
    annotations = {MODE: annotation} if annotation is not None else {}
    assert resolve_mode(annotations, status, config) == expected


def test_missing_deploy_key_is_rejected() -> None:
    data = {k: v for k, v in embedded_configmap()["data"].items() if k != "deploy"}
    with pytest.raises(InputError, match='no "deploy" key'):
        resolve_mode({}, None, parse_config(data))


def test_legacy_warning_names_the_new_mode() -> None:
    assert legacy_warning({MODE: "RawDeployment"}) == 'deployment mode "RawDeployment" is deprecated; use "Standard"'
    assert legacy_warning({MODE: "Standard"}) is None


def test_defaulter_rewrites_legacy_annotation_and_adds_standard_default() -> None:
    spec = {"predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": "s3://b/m"}}}
    assert default_isvc(isvc(spec, {MODE: "RawDeployment"}), SHIPPED).metadata.annotations[MODE] == "Standard"
    assert default_isvc(isvc(spec), STANDARD).metadata.annotations[MODE] == "Standard"
    assert MODE not in default_isvc(isvc(spec), SHIPPED).metadata.annotations  # Knative default is not written


def test_framework_field_becomes_model_with_format_annotation() -> None:
    out = default_isvc(isvc({"predictor": {"sklearn": {"storageUri": "s3://b/m", "runtimeVersion": "1.3"}}}), SHIPPED)
    model = out.spec.predictor.model
    assert out.spec.predictor.sklearn is None
    assert model.model_format.name == "sklearn" and model.storage_uri == "s3://b/m" and model.runtime_version == "1.3"
    assert model.protocol_version is None
    assert out.metadata.annotations["modelFormat"] == "sklearn"


@pytest.mark.parametrize(("field", "fmt"), [("onnx", "onnx"), ("triton", "triton"), ("huggingface", "huggingface")])
def test_frameworks_defaulting_to_v2(field: str, fmt: str) -> None:
    out = default_isvc(isvc({"predictor": {field: {"storageUri": "s3://b/m"}}}), SHIPPED)
    assert out.spec.predictor.model.model_format.name == fmt
    assert out.spec.predictor.model.protocol_version == "v2"


@pytest.mark.parametrize(("fmt", "protocol"), [("triton", "v2"), ("vLLM", "v2"), ("onnx", None), ("huggingface", None)])
def test_model_form_protocol_defaults(fmt: str, protocol: str | None) -> None:
    out = default_isvc(
        isvc({"predictor": {"model": {"modelFormat": {"name": fmt}, "storageUri": "s3://b/m"}}}), SHIPPED
    )
    assert out.spec.predictor.model.protocol_version == protocol


def test_existing_model_format_annotation_is_kept() -> None:
    spec = {"predictor": {"model": {"modelFormat": {"name": "sklearn"}}}}
    assert default_isvc(isvc(spec, {"modelFormat": "mine"}), SHIPPED).metadata.annotations["modelFormat"] == "mine"


def test_custom_container_named_and_given_resource_defaults() -> None:
    out = default_isvc(
        isvc({"predictor": {"containers": [{"image": "x:1", "resources": {"limits": {"cpu": "3"}}}]}}), SHIPPED
    )
    container = out.spec.predictor.containers[0]
    assert container["name"] == "kserve-container"
    assert container["resources"] == {
        "limits": {"cpu": "3", "memory": "2Gi"},
        "requests": {"cpu": "1", "memory": "2Gi"},
    }


def test_automount_token_false_only_without_security_key() -> None:
    spec = {"predictor": {"model": {"modelFormat": {"name": "sklearn"}}}}
    no_security = parse_config({k: v for k, v in embedded_configmap()["data"].items() if k != "security"})
    assert default_isvc(isvc(spec), no_security).spec.predictor.k8s.get("automountServiceAccountToken") is False
    assert default_isvc(isvc(spec), SHIPPED).spec.predictor.k8s.get("automountServiceAccountToken") is None


def test_unsupported_storage_uri_message() -> None:
    with pytest.raises(InputError) as err:
        validate_storage_uri("ftp://host/model", "spec.predictor.model.storageUri")
    assert err.value.message.startswith("StorageURI not supported: storageUri, must be one of: [gs://, s3://, pvc://")
    assert err.value.message.endswith("StorageUri [ftp://host/model] is not supported")


@pytest.mark.parametrize(
    "uri",
    [
        "s3://b/m",
        "pvc://claim/p",
        "/local/path",
        "relative/path",
        "modelscope://org/m",
        "https://acct.blob.core.windows.net/c/m",
    ],
)
def test_supported_storage_uris(uri: str) -> None:
    validate_storage_uri(uri, "spec")


ISVC_TEXT = """
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: demo
  annotations:
    serving.kserve.io/deploymentMode: Standard
spec:
  predictor:
    model:
      modelFormat:
        name: {fmt}
      storageUri: {uri}
"""


def _compile_error(fmt: str, uri: str) -> str:
    with pytest.raises(CompileError) as err:
        compile_documents(parse_text(ISVC_TEXT.format(fmt=fmt, uri=uri), "isvc.yaml"))
    return "\n".join(str(p) for p in err.value.problems)


def test_pipeline_reports_unsupported_storage_uri_with_the_object() -> None:
    text = _compile_error("sklearn", "ftp://host/model")
    assert "StorageURI not supported" in text and "demo" in text


def test_pipeline_reports_no_runtime() -> None:
    text = _compile_error("no-such-format", "s3://b/m")
    assert "no runtime found to support predictor with model type: {no-such-format <nil>}" in text
