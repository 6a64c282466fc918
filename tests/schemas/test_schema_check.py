"""schema_check's interface: versions, unknown kinds, paths, lazy imports and the schema files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing.exceptions import Unresolvable
from schema_helpers import fixtures_by_id, mutate

from kserve_compile.checks import schema as schema_check
from kserve_compile.checks.schema import DEFAULT_KUBE_VERSION, SchemaIssue, check_object, check_objects, known_kinds

FIXTURES = fixtures_by_id()
DEPLOY = FIXTURES["apps/v1/Deployment/sklearn-iris-predictor"]
ISVC = FIXTURES["serving.kserve.io/v1beta1/InferenceService/sklearn-iris"]
KSVC = FIXTURES["serving.knative.dev/v1/Service/sklearn-iris-predictor"]
REPO = Path(__file__).resolve().parents[2]


def test_default_version_is_pinned() -> None:
    assert DEFAULT_KUBE_VERSION == "1.32"


def test_kube_version_changes_the_core_field_set() -> None:
    # Pod hostnameOverride first appears in the 1.34 schemas.
    dep = mutate(DEPLOY, "spec.template.spec.hostnameOverride", "pod-a")
    assert check_object(dep, "1.34") == []
    assert [i.path for i in check_object(dep)] == ["spec.template.spec.hostnameOverride"]
    assert [i.path for i in check_object(dep, "1.33")] == ["spec.template.spec.hostnameOverride"]


def test_kube_version_reaches_core_types_inside_crds() -> None:
    isvc = mutate(ISVC, "spec.predictor.hostnameOverride", "pod-a")
    assert check_object(isvc, "v1.34.2") == []
    assert [i.message for i in check_object(isvc, "1.32")] == [
        'unknown field "hostnameOverride"; did you mean "hostname"?'
    ]
    # Container restartPolicyRules (1.34) inside KServe's inlined model container.
    rules = [{"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}]
    isvc = mutate(ISVC, "spec.predictor.model.restartPolicyRules", rules)
    assert check_object(isvc, "1.34") == []
    assert [i.path for i in check_object(isvc, "1.32")] == ["spec.predictor.model.restartPolicyRules"]
    # Knative's container subset is fixed, whatever the version.
    ksvc = mutate(KSVC, "spec.template.spec.containers[0].restartPolicyRules", rules)
    assert [i.path for i in check_object(ksvc, "1.34")] == ["spec.template.spec.containers[0].restartPolicyRules"]


def test_older_kube_version_lacks_newer_pod_fields() -> None:
    dep = mutate(DEPLOY, "spec.template.spec.schedulingGates", [{"name": "wait"}])
    assert check_object(dep, "1.26") == []
    assert [i.path for i in check_object(dep, "1.25")] == ["spec.template.spec.schedulingGates"]


@pytest.mark.parametrize("version", ["1.99", "1.20", "latest", "", "1"])
def test_unsupported_kube_version_is_a_value_error(version: str) -> None:
    with pytest.raises(ValueError, match="Kubernetes version"):
        check_object(DEPLOY, version)


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
        {"apiVersion": "serving.knative.dev/v1", "kind": "Route", "metadata": {"name": "w"}},
        {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "InferenceService", "metadata": {"name": "w"}},
        {"apiVersion": "apps/v1", "kind": "Widget", "metadata": {"name": "w"}},
        {"apiVersion": "../v1", "kind": "Deployment", "metadata": {"name": "w"}},
        {"apiVersion": "apps/v1", "kind": "../../v1.32.0-local/Deployment", "metadata": {"name": "w"}},
    ],
    ids=lambda o: f"{o['apiVersion']}:{o['kind']}",
)
def test_unknown_kind_is_one_issue_naming_it(obj: dict) -> None:
    issues = check_object(obj)
    assert len(issues) == 1
    assert issues[0].message.startswith("no schema is known for")
    assert obj["apiVersion"] in issues[0].message and obj["kind"] in issues[0].message
    assert (issues[0].kind, issues[0].name) == (obj["kind"], "w")


def test_missing_type_information_and_non_mappings() -> None:
    assert [i.path for i in check_object({"kind": "Service", "metadata": {"name": "s"}})] == ["apiVersion"]
    assert [i.path for i in check_object({"apiVersion": "v1"})] == ["kind"]
    (issue,) = check_object(["not", "a", "mapping"])  # type: ignore[arg-type]
    assert "expected a mapping" in issue.message


def test_check_objects_keeps_input_order_and_gathers_all() -> None:
    bad_dep = mutate(DEPLOY, "spec.replicas", "2")
    bad_isvc = mutate(ISVC, "spec.predictor.minReplicas", "x")
    issues = check_objects([bad_isvc, DEPLOY, bad_dep])
    assert [(i.kind, i.path) for i in issues] == [
        ("InferenceService", "spec.predictor.minReplicas"),
        ("Deployment", "spec.replicas"),
    ]


def test_several_errors_in_one_object_are_all_reported_sorted_by_path() -> None:
    bad = mutate(ISVC, "spec.predictor.minReplicas", "x")
    bad = mutate(bad, "spec.predictor.bogus", 1)
    bad = mutate(bad, "metadata.annotations", {"a": 1, "b": 2})
    paths = [i.path for i in check_object(bad)]
    assert paths == [
        "metadata.annotations.a",
        "metadata.annotations.b",
        "spec.predictor.bogus",
        "spec.predictor.minReplicas",
    ]
    assert check_object(bad) == check_object(bad)


def test_issue_formats_and_converts_to_a_problem() -> None:
    issue = SchemaIssue("Deployment", "web", "spec.replicas", "'2' is not of type integer")
    assert str(issue) == "Deployment/web: spec.replicas: '2' is not of type integer"
    problem = issue.to_problem()
    assert (problem.kind, problem.name, problem.path, problem.message) == (
        "Deployment",
        "web",
        "spec.replicas",
        "'2' is not of type integer",
    )


def test_module_import_does_not_load_the_validators() -> None:
    code = (
        "import sys, kserve_compile.checks.schema as s\n"
        "heavy = [m for m in ('kubernetes_validate', 'jsonschema', 'referencing') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "assert s.check_object({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'c'}}) == []\n"
        "assert 'jsonschema' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _schema_files() -> list[Path]:
    return sorted(p for p in schema_check.SCHEMA_DIR.rglob("*.json"))


@pytest.mark.parametrize("path", _schema_files(), ids=lambda p: p.name)
def test_schema_file_conventions(path: Path) -> None:
    doc = json.loads(path.read_text())
    Draft202012Validator.check_schema(doc)
    rel = path.relative_to(schema_check.SCHEMA_DIR).as_posix()
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == f"https://kserve-compile.local/schemas/{rel}"
    assert doc["$comment"]
    if path.name.startswith("_"):
        return
    # One file per kind and version, named after it, stating its upstream source and version.
    (gvk,) = doc["x-kubernetes-group-version-kind"]
    assert rel == f"{gvk['group']}/{gvk['kind'].lower()}_{gvk['version']}.json"
    assert doc["properties"]["apiVersion"] == {"const": f"{gvk['group']}/{gvk['version']}"}
    assert doc["properties"]["kind"] == {"const": gvk["kind"]}
    assert doc["additionalProperties"] is False
    assert "from" in doc["$comment"] and " at " in doc["$comment"]


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        return [r for k, v in node.items() for r in ([v] if k == "$ref" else _refs(v))]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_every_reference_resolves_for_every_bundled_version() -> None:
    versions = schema_check._available_versions()
    assert versions[0] <= (1, 28) and versions[-1] >= (1, 32)
    for version in versions:
        registry = schema_check._registry(version)
        for path in _schema_files():
            doc_id = json.loads(path.read_text())["$id"]
            doc = registry.contents(doc_id)
            resolver = registry.resolver(base_uri=doc_id)
            for ref in _refs(doc):
                try:
                    resolver.lookup(ref)
                except Unresolvable:
                    pytest.fail(f"{path.name}: {ref} does not resolve for Kubernetes {version}")
            assert schema_check.INLINE_KEY not in json.dumps(doc)


def test_known_kinds_cover_the_issue_list() -> None:
    assert set(known_kinds()) >= {
        ("serving.kserve.io/v1beta1", "InferenceService"),
        ("serving.kserve.io/v1alpha1", "ServingRuntime"),
        ("serving.kserve.io/v1alpha1", "ClusterServingRuntime"),
        ("serving.kserve.io/v1alpha1", "InferenceGraph"),
        ("serving.kserve.io/v1alpha1", "TrainedModel"),
        ("serving.knative.dev/v1", "Service"),
        ("networking.istio.io/v1beta1", "VirtualService"),
        ("networking.istio.io/v1", "VirtualService"),
        ("gateway.networking.k8s.io/v1", "HTTPRoute"),
        ("keda.sh/v1alpha1", "ScaledObject"),
        ("opentelemetry.io/v1beta1", "OpenTelemetryCollector"),
    }


def test_missing_validate_extra_is_a_clear_error() -> None:
    code = (
        "import sys\n"
        "sys.modules['kubernetes_validate'] = None\n"
        "from kserve_compile.checks.schema import SchemaCheckUnavailable, check_object\n"
        "try:\n"
        "    check_object({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'c'}})\n"
        "except SchemaCheckUnavailable as exc:\n"
        "    assert 'validate' in str(exc), exc\n"
        "else:\n"
        "    raise SystemExit('no error')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
