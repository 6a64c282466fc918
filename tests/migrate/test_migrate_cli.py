"""``kserve-compile migrate`` as a user runs it: in-place rewrite, ``--dry-run`` diff and exit codes (kubectl diff's:
0 nothing to do, 1 changes), ``-o json-patch``, located errors, and all-or-nothing writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonpatch
import pytest
import yaml

from kserve_compile.cli import migrate_command

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "migrate", *args],
        check=False,
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    for name in ("legacy-frameworks.yaml", "legacy-components.yaml", "config-standard.yaml"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    return tmp_path


def test_dry_run_prints_a_unified_diff_exits_1_and_writes_nothing(work: Path):
    original = (work / "legacy-frameworks.yaml").read_text()
    result = run("--dry-run", "legacy-frameworks.yaml", cwd=work)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("--- a/legacy-frameworks.yaml\n+++ b/legacy-frameworks.yaml\n@@ -7,11 +7,14 @@\n")
    assert '-    serving.kserve.io/deploymentMode: "RawDeployment"   # set by the platform team\n' in result.stdout
    assert "-    sklearn:\n+    model:\n+      modelFormat:\n+        name: sklearn\n" in result.stdout
    assert (work / "legacy-frameworks.yaml").read_text() == original


def test_dry_run_of_a_migrated_file_prints_nothing_and_exits_0(work: Path):
    shutil.copy(FIXTURES / "legacy-frameworks.migrated.yaml", work / "done.yaml")
    result = run("--dry-run", "done.yaml", cwd=work)
    assert (result.returncode, result.stdout) == (0, "")


def test_json_patch_output_applied_to_the_original_gives_the_migrated_objects(work: Path):
    result = run(
        "--dry-run", "-o", "json-patch", "--config", "config-standard.yaml", "legacy-components.yaml", cwd=work
    )
    assert result.returncode == 1, result.stderr
    entries = json.loads(result.stdout)
    before = list(yaml.safe_load_all((work / "legacy-components.yaml").read_text()))
    after = list(yaml.safe_load_all((FIXTURES / "legacy-components.migrated.yaml").read_text()))
    assert [(e["kind"], e["namespace"], e["name"], e["document"]) for e in entries] == [
        ("InferenceService", "default", "flowers", 0),
        ("InferenceService", "default", "art", 1),
    ]
    for entry in entries:
        assert jsonpatch.apply_patch(before[entry["document"]], entry["patch"]) == after[entry["document"]]


def test_migrate_rewrites_in_place_and_a_second_run_has_nothing_to_do(work: Path):
    result = run("legacy-frameworks.yaml", "legacy-components.yaml", "--config", "config-standard.yaml", cwd=work)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert [line.split(":")[1] for line in lines] == [
        " InferenceService/ml/iris",
        " InferenceService/ml/mnist-onnx",
        " InferenceService/ml/modern",
        " InferenceService/default/flowers",
        " InferenceService/default/art",
    ]
    # the already-stored-form isvc still gains what this config's webhook adds
    assert "legacy-frameworks.yaml: InferenceService/ml/modern: 1 change(s) (automount-service-account-token)" in lines
    assert (work / "legacy-components.yaml").read_text() == (FIXTURES / "legacy-components.migrated.yaml").read_text()
    again = run(
        "--dry-run", "legacy-frameworks.yaml", "legacy-components.yaml", "--config", "config-standard.yaml", cwd=work
    )
    assert (again.returncode, again.stdout) == (0, "")
    assert sorted(p.name for p in work.iterdir()) == [
        "config-standard.yaml",
        "legacy-components.yaml",
        "legacy-frameworks.yaml",
    ]


def test_a_directory_is_walked_and_only_changed_files_are_rewritten(work: Path):
    # already migrated objects of their own (in another namespace: the same isvc twice would not render)
    done = (FIXTURES / "legacy-frameworks.migrated.yaml").read_text().replace("namespace: ml\n", "namespace: ml-done\n")
    (work / "done.yaml").write_text(done)
    os.utime(work / "done.yaml", (1_000_000, 1_000_000))
    (work / "config-standard.yaml").unlink()
    result = run(".", cwd=work)
    assert result.returncode == 0, result.stderr
    assert (work / "legacy-frameworks.yaml").read_text() == (FIXTURES / "legacy-frameworks.migrated.yaml").read_text()
    assert os.stat(work / "done.yaml").st_mtime == 1_000_000  # not rewritten


def test_an_invalid_second_file_stops_everything_with_a_located_error(work: Path):
    (work / "bad.yaml").write_text(
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: broken\nspec:\n  predictor:\n"
        "    sklearn: {storageUri: a}\n    pytorch: {storageUri: b}\n"
    )
    original = (work / "legacy-frameworks.yaml").read_text()
    result = run("legacy-frameworks.yaml", "bad.yaml", cwd=work)
    assert result.returncode == 1
    assert result.stderr.startswith(
        "bad.yaml:6:3: InferenceService/broken: spec.predictor: sets 2 model frameworks (sklearn, pytorch)"
    )
    assert "Traceback" not in result.stderr
    assert (work / "legacy-frameworks.yaml").read_text() == original
    assert not [p for p in work.iterdir() if p.name.startswith(".")]


def test_broken_yaml_is_reported_with_the_project_s_parse_error(work: Path):
    (work / "bad.yaml").write_text("apiVersion: v1\nkind: [\n")
    result = run("legacy-frameworks.yaml", "bad.yaml", cwd=work)
    assert result.returncode == 1
    assert result.stderr.startswith("bad.yaml:3:1: invalid YAML:")
    assert (work / "legacy-frameworks.yaml").read_text() == (FIXTURES / "legacy-frameworks.yaml").read_text()


def test_stdin_is_diffed_but_never_rewritten(work: Path):
    text = (work / "legacy-frameworks.yaml").read_text()
    refused = run("-", cwd=work, stdin=text)
    assert refused.returncode == 2 and "use --dry-run" in refused.stderr
    diffed = run("--dry-run", "-", cwd=work, stdin=text)
    assert diffed.returncode == 1 and diffed.stdout.startswith("--- a/<stdin>\n+++ b/<stdin>\n")


def test_a_failed_rename_puts_back_the_files_already_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("old a\n")
    second.write_text("old b\n")
    real_replace, calls = os.replace, []

    def failing_replace(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(migrate_command.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        migrate_command.write_all([(str(first), "old a\n", "new a\n"), (str(second), "old b\n", "new b\n")])
    assert (first.read_text(), second.read_text()) == ("old a\n", "old b\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]


def test_written_files_keep_their_permissions(work: Path):
    path = work / "legacy-frameworks.yaml"
    path.chmod(0o640)
    assert run("legacy-frameworks.yaml", cwd=work).returncode == 0
    assert path.stat().st_mode & 0o777 == 0o640
