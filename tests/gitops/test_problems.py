"""One problem list: what the API server rejects, unknown fields and enum values with did-you-mean, the same in
render and validate; the mistyped deploymentMode warning."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kserve_compile.checks.apiserver import check_object
from tests.commands.test_cli import EXAMPLE, run

ISVC = yaml.safe_load(EXAMPLE.read_text())


def isvc_with(**model: object) -> dict:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["spec"]["predictor"]["model"].update(model)
    return data


def messages(obj: dict) -> dict[str, str]:
    return dict(check_object(obj))


def test_quantity_syntax() -> None:
    found = messages(isvc_with(resources={"limits": {"cpu": "lots"}}))
    assert found == {
        "spec.predictor.model.resources.limits.cpu": "invalid value 'lots': quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    }


def test_quantity_sign() -> None:
    found = messages(isvc_with(resources={"limits": {"memory": "-5Gi"}}))
    assert found == {
        "spec.predictor.model.resources.limits.memory": "invalid value '-5Gi': must be greater than or equal to 0"
    }


def test_request_above_limit() -> None:
    found = messages(isvc_with(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "500m"}}))
    assert found == {
        "spec.predictor.model.resources.requests.cpu": "invalid value '2': must be less than or equal to cpu limit of 500m"
    }


def test_valid_quantities_pass() -> None:
    assert (
        messages(
            isvc_with(
                resources={"requests": {"cpu": "100m", "memory": "1.5Gi", "nvidia.com/gpu": 1}, "limits": {"cpu": 1}}
            )
        )
        == {}
    )


def test_image_pull_policy_enum_with_did_you_mean() -> None:
    assert messages(isvc_with(imagePullPolicy="Sometimes")) == {
        "spec.predictor.model.imagePullPolicy": "unsupported value 'Sometimes': supported values: 'Always', 'IfNotPresent', 'Never'"
    }
    assert messages(isvc_with(imagePullPolicy="ifnotpresent"))["spec.predictor.model.imagePullPolicy"].endswith(
        'did you mean "IfNotPresent"?'
    )


def test_container_port_protocol_enum() -> None:
    found = messages(isvc_with(ports=[{"containerPort": 8080, "protocol": "HTTP"}]))
    assert found == {
        "spec.predictor.model.ports[0].protocol": "unsupported value 'HTTP': supported values: 'SCTP', 'TCP', 'UDP'"
    }


def test_label_key_with_a_space() -> None:
    data = {**ISVC, "metadata": {**ISVC["metadata"], "labels": {"team name": "a"}}}
    assert messages(data)["metadata.labels"].startswith(
        "invalid label key 'team name': name part must consist of alphanumeric"
    )


def test_label_value_of_70_characters() -> None:
    data = {**ISVC, "metadata": {**ISVC["metadata"], "labels": {"team": "x" * 70}}}
    assert messages(data)["metadata.labels[team]"].endswith(": must be no more than 63 characters")


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("-bad.example.com/x", "prefix part a lowercase RFC 1123 subdomain"),
        ("example.com/", "name part must be non-empty"),
        ("/x", "prefix part must be non-empty"),
        ("a/b/c", "prefix part a lowercase RFC 1123 subdomain"),
        ("x" * 64, "name part must be no more than 63 characters"),
    ],
)
def test_malformed_annotation_keys(key: str, expected: str) -> None:
    data = {**ISVC, "metadata": {**ISVC["metadata"], "annotations": {key: "v"}}}
    assert expected in messages(data)["metadata.annotations"]


def test_pod_template_labels_are_checked_too() -> None:
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"template": {"metadata": {"labels": {"a": "b c"}}}},
    }
    assert "spec.template.metadata.labels[a]" in messages(dep)


def test_name_lengths() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c" * 254}}
    assert messages(cm) == {"metadata.name": f"invalid value '{'c' * 254}': must be no more than 253 characters"}
    assert messages({**cm, "metadata": {"name": "c" * 253}}) == {}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s" * 64, "namespace": "n" * 64}}
    found = messages(svc)
    assert found["metadata.name"].endswith("must be no more than 63 characters")
    assert found["metadata.namespace"].endswith("must be no more than 63 characters")


def test_render_and_validate_report_the_same_problems(tmp_path: Path) -> None:
    bad = isvc_with(imagePullPolicy="Sometimes", resources={"limits": {"cpu": "lots", "memory": "-5Gi"}})
    bad["metadata"]["labels"] = {"bad key": "v" * 70}
    bad["spec"]["predictr"] = bad["spec"].pop("predictor")
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    rendered, validated = run("render", str(path)), run("validate", str(path))
    assert rendered.returncode == validated.returncode == 1
    assert rendered.stderr == validated.stderr
    assert 'spec.predictr: unknown field "predictr"; did you mean "predictor"?' in rendered.stderr
    assert "spec.predictor: required field is missing" in rendered.stderr


def test_unknown_fields_inside_the_predictor_get_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(EXAMPLE.read_text().replace("    model:\n", "    minReplica: 1\n    modle:\n"))
    result = run("render", str(path))
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "warning:" not in line]
    assert errors == [
        f'{path}:11:5: InferenceService/sklearn-iris: spec.predictor.minReplica: unknown field "minReplica"; did you mean "minReplicas"?',
        f'{path}:12:5: InferenceService/sklearn-iris: spec.predictor.modle: unknown field "modle"; did you mean "model"?',
    ]
    assert run("validate", str(path)).stderr == result.stderr


def test_mistyped_deployment_mode_warns_and_renders_as_kserve_does(tmp_path: Path) -> None:
    typo = tmp_path / "typo.yaml"
    typo.write_text(EXAMPLE.read_text().replace("deploymentMode: Standard", "deploymentMode: Standrad"))
    unset = tmp_path / "unset.yaml"
    unset.write_text(EXAMPLE.read_text().replace("    serving.kserve.io/deploymentMode: Standard\n", ""))
    result = run("render", str(typo))
    assert result.returncode == 0
    assert (
        "metadata.annotations[serving.kserve.io/deploymentMode]: warning: deploymentMode 'Standrad' is not one KServe "
        'knows (Standard, Knative, ModelMesh, RawDeployment, Serverless); did you mean "Standard"?; KServe ignores it'
    ) in result.stderr

    def kinds(text: str) -> list:
        return [(o["apiVersion"], o["kind"]) for o in yaml.safe_load_all(text)]

    assert kinds(result.stdout) == kinds(run("render", str(unset)).stdout)  # the config's default (Knative), as KServe
    assert ("serving.knative.dev/v1", "Service") in kinds(result.stdout)


def test_crd_enums_are_checked_by_render_as_by_validate(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["spec"]["predictor"]["scaleMetric"] = "cpus"
    data["spec"]["predictor"]["logger"] = {"mode": "everything"}
    path = tmp_path / "enum.yaml"
    path.write_text(yaml.safe_dump(data))
    rendered, validated = run("render", str(path)), run("validate", str(path))
    assert rendered.returncode == validated.returncode == 1
    assert rendered.stderr == validated.stderr
    assert (
        "spec.predictor.scaleMetric: unsupported value 'cpus': supported values: 'cpu', 'memory', 'concurrency', 'rps'; "
        'did you mean "cpu"?'
    ) in rendered.stderr
    # where KServe's webhook has its own message for a field, that wording is the one reported (once)
    assert "spec.predictor.logger.mode: invalid logger type\n" in rendered.stderr
    assert "'everything'" not in rendered.stderr


def test_crd_enum_table_comes_from_the_schemas() -> None:
    from kserve_compile.checks.enums import enum_fields

    isvc = dict(enum_fields("serving.kserve.io/v1beta1", "InferenceService"))
    assert isvc[("spec", "predictor", "scaleMetric")] == ("cpu", "memory", "concurrency", "rps")
    assert isvc[("spec", "transformer", "logger", "mode")] == ("all", "request", "response")
    graph = dict(enum_fields("serving.kserve.io/v1alpha1", "InferenceGraph"))
    assert graph[("spec", "nodes", "{}", "routerType")] == ("Sequence", "Splitter", "Ensemble", "Switch")
    assert enum_fields("v1", "ConfigMap") == ()
