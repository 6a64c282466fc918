"""The offline ``diff``: both sides rendered (files, directories, a Git revision), per-object diffs, kubectl's exits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from kserve_compile.emit.diff import diff_objects
from tests.commands.test_cli import EXAMPLE, run

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_CONFIG = ROOT / "kserve_compile" / "data" / "inferenceservice-config.yaml"


def test_diff_of_objects_matches_by_group_kind_namespace_name() -> None:
    a = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "m", "namespace": "n"}, "spec": {"x": 1}}
    knative = {**a, "apiVersion": "serving.knative.dev/v1"}
    b = {**a, "spec": {"x": 2}}
    diffs = diff_objects([a, knative], [b])
    assert [(d.action, d.ref) for d in diffs] == [
        ("changed", "Service/n/m"),
        ("removed", "Service.serving.knative.dev/n/m"),
    ]
    assert "-  x: 1\n+  x: 2\n" in diffs[0].text
    assert diffs[1].text.startswith("--- a/Service.serving.knative.dev/n/m\n+++ /dev/null\n")
    assert diff_objects([a], [dict(a)]) == []


def test_two_isvc_files_diff_their_rendered_objects(tmp_path: Path) -> None:
    new = tmp_path / "new.yaml"
    new.write_text(EXAMPLE.read_text().replace("1.0/model", "2.0/model"))
    result = run("diff", str(EXAMPLE), str(new))
    assert result.returncode == 1, result.stderr
    assert "--- a/Deployment.apps/default/sklearn-iris-predictor" in result.stdout
    assert "-        - gs://kfserving-examples/models/sklearn/1.0/model\n" in result.stdout
    assert "+        - gs://kfserving-examples/models/sklearn/2.0/model\n" in result.stdout
    same = run("diff", str(EXAMPLE), str(EXAMPLE))
    assert same.returncode == 0 and same.stdout == ""


def test_config_is_honoured_on_both_sides(tmp_path: Path) -> None:
    knative = tmp_path / "kn.yaml"
    knative.write_text(EXAMPLE.read_text().replace("    serving.kserve.io/deploymentMode: Standard\n", ""))
    assert run("diff", str(EXAMPLE), str(knative)).returncode == 1  # shipped config: Knative
    config = tmp_path / "config.yaml"
    config.write_text(
        SHIPPED_CONFIG.read_text().replace(
            '"defaultDeploymentMode": "Serverless"', '"defaultDeploymentMode": "Standard"'
        )
    )
    result = run("diff", str(EXAMPLE), str(knative), "--config", str(config))
    assert result.returncode == 0, result.stdout  # with the config's Standard default both sides render the same


def test_json_output_and_invalid_input_is_exit_2(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(EXAMPLE.read_text().replace("sklearn-iris", "other"))
    result = run("diff", str(EXAMPLE), str(other), "-o", "json")
    assert result.returncode == 1
    entries = json.loads(result.stdout)
    assert {(e["action"], e["kind"], e["name"]) for e in entries} >= {
        ("added", "Deployment", "other-predictor"),
        ("removed", "Ingress", "sklearn-iris"),
    }
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("gs://", "ftp://"))
    invalid = run("diff", str(EXAMPLE), str(bad))
    assert invalid.returncode == 2 and invalid.stdout == ""
    assert f"{bad}:" in invalid.stderr and "StorageURI not supported" in invalid.stderr
    assert run("diff", str(EXAMPLE)).returncode == 2


def test_a_git_revision_of_a_directory_against_the_working_tree(tmp_path: Path) -> None:
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True)
    models = tmp_path / "models"
    models.mkdir()
    (models / "iris.yaml").write_text(EXAMPLE.read_text())
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=tmp_path, check=True)
    (models / "second.yaml").write_text(EXAMPLE.read_text().replace("sklearn-iris", "second"))
    result = run("diff", "HEAD:models", "models", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    changed = {line for line in result.stdout.splitlines() if line.startswith(("+++", "---"))}
    assert "+++ b/Deployment.apps/default/second-predictor" in changed
    assert not any("sklearn-iris" in line for line in changed)
    assert run("diff", "HEAD:models", "models", cwd=models.parent).returncode == 1
    (models / "second.yaml").unlink()
    assert run("diff", "HEAD:models/iris.yaml", "models/iris.yaml", cwd=tmp_path).returncode == 0
    missing = run("diff", "HEAD:nope", "models", cwd=tmp_path)
    assert missing.returncode == 2 and "git " in missing.stderr


def test_rendered_output_directories_still_compare(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert run("render", str(EXAMPLE), "--output-dir", str(a)).returncode == 0
    assert run("render", str(EXAMPLE), "--output-dir", str(b), "-n", "default").returncode == 0
    result = run("diff", str(a), str(b))
    assert result.returncode == 0, result.stdout + result.stderr


def test_json_renders_compare_with_yaml_renders(tmp_path: Path) -> None:
    as_json = tmp_path / "a.json"
    as_json.write_text(run("render", str(EXAMPLE), "-o", "json").stdout)
    as_yaml = tmp_path / "b.yaml"
    as_yaml.write_text(run("render", str(EXAMPLE)).stdout)
    result = run("diff", str(as_json), str(as_yaml))
    assert result.returncode == 0, result.stdout + result.stderr  # a v1 List is read as its items, as kubectl does
