"""Bad local-model inputs: KServe's admission and CRD rules, each located in its document; nothing is written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kserve_compile.errors import CompileError

from .helpers import cache, config, isvc, node, node_group, render

ROOT = Path(__file__).resolve().parents[2]
URI = "s3://mybucket/mymodel"


def _errors(tmp_path: Path, *objects: dict[str, Any]) -> list[str]:
    with pytest.raises(CompileError) as exc:
        render(tmp_path, *objects)
    return [p.format() for p in exc.value.problems if p.severity == "error"]


def test_two_cluster_caches_with_one_uri(tmp_path: Path) -> None:
    # localmodelcache_validator.go validateUniqueStorageURI
    errors = _errors(
        tmp_path, config(), node_group("gpu1"), cache("b-cache", URI, ["gpu1"]), cache("a-cache", URI, ["gpu1"])
    )
    assert len(errors) == 1
    assert errors[0].endswith(
        f"LocalModelCache/b-cache: spec.sourceModelUri: LocalModelCache a-cache has the same StorageURI {URI}"
    )
    assert re.match(r"^\S+/in\.yaml:\d+:\d+: LocalModelCache/b-cache: ", errors[0]), errors[0]


def test_missing_node_groups(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        config(),
        node_group("gpu1"),
        cache("c", URI, ["gpu1", "gpu9"]),
        cache("n", URI, ["gpu8"], namespace="team"),
    )
    assert any(
        e.endswith('LocalModelCache/c: spec.nodeGroups[1]: localmodelnodegroups.serving.kserve.io "gpu9" not found')
        for e in errors
    )
    assert any(
        e.endswith(
            "LocalModelNamespaceCache/n: spec.nodeGroups[0]: NodeGroup gpu8 not found: "
            'localmodelnodegroups.serving.kserve.io "gpu8" not found'
        )
        for e in errors
    )


@pytest.mark.parametrize(
    ("change", "where", "message"),
    [
        ({"nodeGroups": []}, "spec.nodeGroups", "should have at least 1 items"),
        ({"modelSize": "lots"}, "spec.modelSize", "quantities must match"),
        ({"sourceModelUri": None}, "spec.sourceModelUri", "required field is missing"),
        ({"storageUri": "x"}, "spec", 'unknown field "storageUri"'),
    ],
)
def test_crd_rules(tmp_path: Path, change: dict[str, Any], where: str, message: str) -> None:
    bad = cache("c", URI, ["gpu1"])
    bad["spec"].update(change)
    bad["spec"] = {k: v for k, v in bad["spec"].items() if v is not None}
    errors = _errors(tmp_path, config(), node_group("gpu1"), bad)
    assert any(f"LocalModelCache/c: {where}: {message}" in e for e in errors), errors


def test_bad_node_selector_is_located_in_the_node_group(tmp_path: Path) -> None:
    group = node_group("gpu1")
    group["spec"]["persistentVolumeSpec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0][
        "operator"
    ] = "Near"
    errors = _errors(tmp_path, config(), group, cache("c", URI, ["gpu1"]), node("n", "gpu1"))
    assert any(
        "LocalModelNodeGroup/gpu1: spec.persistentVolumeSpec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator: "
        '"Near" is not a valid label selector operator' in e
        for e in errors
    ), errors


def test_empty_job_namespace(tmp_path: Path) -> None:
    errors = _errors(tmp_path, config(jobNamespace=""), node_group("gpu1"), cache("c", URI, ["gpu1"]))
    assert any(
        "ConfigMap/inferenceservice-config: data.localModel: localModel.jobNamespace is empty" in e for e in errors
    )


def test_defined_twice_and_nameless(tmp_path: Path) -> None:
    nameless = node("x", "gpu1")
    nameless["metadata"].pop("name")
    errors = _errors(tmp_path, config(), node_group("gpu1"), node_group("gpu1"), nameless)
    assert any(
        "LocalModelNodeGroup/gpu1: metadata.name: LocalModelNodeGroup gpu1 is defined twice" in e for e in errors
    )
    assert any(e.endswith(":1: Node: metadata.name: metadata.name is required") for e in errors), errors


def test_enabled_false_warns_and_isvcs_keep_downloading(tmp_path: Path) -> None:
    result = render(tmp_path, config(enabled=False), node_group("gpu1"), cache("c", URI, ["gpu1"]), isvc("foo", URI))
    assert any("localModel.enabled is false" in w.message for w in result.warnings)
    dep = next(o for o in result.objects if o["kind"] == "Deployment")
    assert dep["spec"]["template"]["spec"]["initContainers"][0]["name"] == "storage-initializer"


def test_cli_exits_non_zero_without_partial_output(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump_all([config(), node_group("gpu1"), cache("c", URI, ["nope"]), isvc("foo", URI)]))
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "render", str(path), "-o", "yaml"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and result.stdout == ""
    assert (
        f"{path}:" in result.stderr
        and 'LocalModelCache/c: spec.nodeGroups[0]: localmodelnodegroups.serving.kserve.io "nope" not found'
        in result.stderr
    )
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_validate_checks_inputs_against_the_schemas(tmp_path: Path) -> None:
    bad = node_group("gpu1")
    bad["spec"]["persistentVolumeClaimSpec"]["accessMode"] = ["ReadWriteOnce"]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([config(), bad, cache("c", URI, ["gpu1"])]))
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "validate", str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert (
        'LocalModelNodeGroup/gpu1: spec.persistentVolumeClaimSpec.accessMode: unknown field "accessMode"; did you mean "accessModes"?'
        in result.stdout + result.stderr
    )
