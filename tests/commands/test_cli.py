"""The command line as a user drives it: exit codes, located errors, output formats, no partial output."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sklearn-iris.yaml"


def run(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=120,
    )


def test_render_example_prints_the_standard_mode_objects():
    result = run("render", str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    objects = list(yaml.safe_load_all(result.stdout))
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objects]
    assert kinds == [
        ("Service", "sklearn-iris-predictor"),
        ("Deployment", "sklearn-iris-predictor"),
        ("HorizontalPodAutoscaler", "sklearn-iris-predictor"),
        ("Ingress", "sklearn-iris"),
    ]
    pod = objects[1]["spec"]["template"]["spec"]
    assert pod["initContainers"][0]["name"] == "storage-initializer"
    assert pod["containers"][0]["image"] == "kserve/sklearnserver:latest"


def test_json_output_is_a_list_of_the_same_objects():
    as_yaml = list(yaml.safe_load_all(run("render", str(EXAMPLE)).stdout))
    result = run("render", str(EXAMPLE), "-o", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["kind"] == "List" and doc["items"] == as_yaml


def test_stdin_renders_like_a_file():
    assert run("render", "-", stdin=EXAMPLE.read_text()).stdout == run("render", str(EXAMPLE)).stdout


def test_document_order_does_not_change_the_bytes(tmp_path: Path):
    second = EXAMPLE.read_text().replace("sklearn-iris", "other-model")
    (tmp_path / "a.yaml").write_text(EXAMPLE.read_text() + "\n---\n" + second)
    (tmp_path / "b.yaml").write_text(second + "\n---\n" + EXAMPLE.read_text())
    first = run("render", str(tmp_path / "a.yaml"))
    other = run("render", str(tmp_path / "b.yaml"))
    assert first.returncode == 0, first.stderr
    assert first.stdout == other.stdout


def test_invalid_input_names_file_line_object_and_field(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("name: sklearn\n", "name: nosuchformat\n"))
    result = run("render", str(bad))
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"{bad}:" in result.stderr
    assert "InferenceService/sklearn-iris: spec.predictor.model.modelFormat" in result.stderr
    assert "no runtime found to support predictor with model type: {nosuchformat <nil>}" in result.stderr
    assert "Traceback" not in result.stderr


def test_every_bad_isvc_is_reported_and_nothing_is_printed(tmp_path: Path):
    good = EXAMPLE.read_text()
    bad1 = good.replace("sklearn-iris", "Bad_Name")
    bad2 = good.replace("sklearn-iris", "second").replace("gs://", "ftp://")
    (tmp_path / "all.yaml").write_text("\n---\n".join([good, bad1, bad2]))
    result = run("render", str(tmp_path / "all.yaml"))
    assert result.returncode == 1
    assert result.stdout == ""
    assert 'the InferenceService "Bad_Name" is invalid' in result.stderr
    assert "StorageURI not supported" in result.stderr


def test_yaml_syntax_error_has_line_and_column(tmp_path: Path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("apiVersion: v1\nkind: [unclosed\n")
    result = run("render", str(bad))
    assert result.returncode == 1
    assert f"{bad}:3:1: invalid YAML" in result.stderr or f"{bad}:2:" in result.stderr


def test_missing_file_is_a_usage_error():
    result = run("render", "does-not-exist.yaml")
    assert result.returncode == 2
    assert "does-not-exist.yaml: no such file or directory" in result.stderr


def test_github_error_format_emits_annotations(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("gs://", "ftp://"))
    result = run("render", str(bad), "--error-format", "github")
    assert result.returncode == 1
    assert result.stderr.startswith(f"::error file={bad},line=")


def test_the_shipped_default_mode_renders_knative_objects_not_standard(tmp_path: Path):
    isvc = tmp_path / "knative.yaml"
    isvc.write_text(EXAMPLE.read_text().replace("    serving.kserve.io/deploymentMode: Standard\n", ""))
    result = run("render", str(isvc))
    assert result.returncode == 0, result.stderr
    kinds = sorted(o["kind"] for o in yaml.safe_load_all(result.stdout))
    assert kinds == ["Service", "Service", "VirtualService"]
    ksvc = [o for o in yaml.safe_load_all(result.stdout) if o["apiVersion"] == "serving.knative.dev/v1"]
    assert ksvc[0]["metadata"]["name"] == "sklearn-iris-predictor"


def test_modelmesh_mode_is_refused(tmp_path: Path):
    isvc = tmp_path / "mm.yaml"
    isvc.write_text(EXAMPLE.read_text().replace("deploymentMode: Standard", "deploymentMode: ModelMesh"))
    result = run("render", str(isvc))
    assert result.returncode == 1
    assert "ModelMesh is not supported" in result.stderr


def test_legacy_mode_names_render_with_a_deprecation_warning(tmp_path: Path):
    isvc = tmp_path / "raw.yaml"
    isvc.write_text(EXAMPLE.read_text().replace("deploymentMode: Standard", "deploymentMode: RawDeployment"))
    result = run("render", str(isvc))
    assert result.returncode == 0, result.stderr
    assert 'deployment mode "RawDeployment" is deprecated; use "Standard"' in result.stderr
    assert [o["kind"] for o in yaml.safe_load_all(result.stdout)][:2] == ["Service", "Deployment"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_output_dir_rebuilds_the_same_objects_with_kubectl_kustomize(tmp_path: Path):
    out = tmp_path / "out"
    result = run("render", str(EXAMPLE), "--output-dir", str(out))
    assert result.returncode == 0, result.stderr
    assert (out / "kustomization.yaml").exists()
    built = subprocess.run(["kubectl", "kustomize", str(out)], capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
    rendered = sorted(yaml.safe_load_all(run("render", str(EXAMPLE)).stdout), key=key)
    assert sorted(yaml.safe_load_all(built.stdout), key=key) == rendered


def test_render_does_not_import_the_kubernetes_client_or_onnxruntime():
    # -X importtime lists every module the process imports (the command ends with os._exit: nothing runs after it)
    result = subprocess.run(
        [sys.executable, "-X", "importtime", str(ROOT / "cli.py"), "render", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    imported = {
        line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    }
    assert "kserve_compile.driver" in imported  # the listing is real
    assert not {m.split(".")[0] for m in imported} & {"kubernetes", "onnxruntime"}


def test_status_reports_standard_mode_urls():
    result = run("status", str(EXAMPLE), "-o", "json")
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row["url"] == "http://sklearn-iris-default.example.com"
    assert row["address"]["url"] == "http://sklearn-iris-predictor.default.svc.cluster.local"


def test_validate_accepts_the_example_and_checks_rendered_objects():
    result = run("validate", str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    assert "valid: 1 input documents, 4 rendered objects" in result.stdout


def test_validate_rejects_a_wrong_type_with_its_location(tmp_path: Path):
    bad = tmp_path / "ports.yaml"
    bad.write_text(
        EXAMPLE.read_text().replace(
            "      storageUri: gs://kfserving-examples/models/sklearn/1.0/model\n",
            "      storageUri: gs://kfserving-examples/models/sklearn/1.0/model\n      ports: 8080\n",
        )
    )
    result = run("validate", str(bad))
    assert result.returncode == 1
    assert f"{bad}:15:7: InferenceService/sklearn-iris: spec.predictor.model.ports:" in result.stderr


def test_validate_unknown_kube_version_is_a_usage_error():
    result = run("validate", str(EXAMPLE), "--kube-version", "0.1")
    assert result.returncode == 2


def test_status_of_a_knative_isvc_uses_the_knative_urls(tmp_path: Path):
    isvc = tmp_path / "kn.yaml"
    isvc.write_text(EXAMPLE.read_text().replace("    serving.kserve.io/deploymentMode: Standard\n", ""))
    result = run("status", str(isvc), "-o", "json")
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row["deploymentMode"] == "Knative"
    assert row["address"]["url"] == "http://sklearn-iris.default.svc.cluster.local"


def test_output_dir_is_not_created_when_the_input_is_invalid(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("gs://", "ftp://"))
    out = tmp_path / "out"
    result = run("render", str(bad), "--output-dir", str(out))
    assert result.returncode == 1
    assert not out.exists()


def test_output_dir_keeps_the_previous_render_when_the_new_one_fails(tmp_path: Path):
    out = tmp_path / "out"
    assert run("render", str(EXAMPLE), "--output-dir", str(out)).returncode == 0
    before = {p.name: p.read_text() for p in out.iterdir()}
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("name: sklearn\n", "name: nosuchformat\n"))
    assert run("render", str(bad), "--output-dir", str(out)).returncode == 1
    assert {p.name: p.read_text() for p in out.iterdir()} == before


def test_json_error_format_is_one_object_per_problem(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("gs://", "ftp://"))
    result = run("render", str(bad), "--error-format", "json")
    assert result.returncode == 1
    problems = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    assert problems and problems[0]["kind"] == "InferenceService" and problems[0]["name"] == "sklearn-iris"
    assert problems[0]["path"] == "spec.predictor.model.storageUri"
    assert problems[0]["line"] > 0 and problems[0]["severity"] == "error"


def test_quiet_drops_warnings_but_not_output():
    loud = run("render", str(EXAMPLE))
    quiet = run("render", str(EXAMPLE), "--quiet")
    assert "note: ServiceAccount default/default not in the inputs" in loud.stderr
    assert quiet.stderr == "" and quiet.stdout == loud.stdout


PIPED_COMMANDS = {
    "render": ["render", "{many}"],
    "render -o json": ["render", "{many}", "-o", "json"],
    "status": ["status", "{many}", "-o", "json"],
    "explain": ["explain", "{many}"],
    "diff": ["diff", "{empty}", "{many}"],
    "fn": ["fn"],
    "migrate --dry-run": ["migrate", "--dry-run", "{legacy}"],
}


@pytest.mark.parametrize("command", sorted(PIPED_COMMANDS))
def test_a_pipe_closed_early_ends_every_command_quietly(tmp_path: Path, command: str):
    # as `kserve-compile render many.yaml | head -1`: far more output than a pipe holds (64 KiB), the reader gone
    # after one line: the command ends as coreutils do, killed by SIGPIPE (141 in a shell), with nothing on stderr
    text = EXAMPLE.read_text()
    many = tmp_path / "many.yaml"
    many.write_text("\n---\n".join(text.replace("sklearn-iris", f"iris-{i}") for i in range(300)))
    legacy = tmp_path / "legacy.yaml"
    legacy.write_text(
        "\n---\n".join(
            f"apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {{name: m{i}}}\n"
            f"spec: {{predictor: {{sklearn: {{storageUri: 'gs://b/{'x' * 200}'}}}}}}\n"
            for i in range(300)
        )
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "one.yaml").write_text(text.replace("sklearn-iris", "other"))
    args = [a.format(many=many, empty=empty, legacy=legacy) for a in PIPED_COMMANDS[command]]
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "cli.py"), *args, "-q"],
        stdin=subprocess.PIPE if command == "fn" else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    if command == "fn":
        assert proc.stdin is not None
        proc.stdin.write(many.read_bytes())
        proc.stdin.close()
    assert proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == -signal.SIGPIPE, err
    assert err == ""


def test_command_table_names_the_commands_each_module_registers():
    # a run registers only the module of the command it names: the table must say which module holds which command
    from importlib import import_module

    import typer

    from kserve_compile.cli.app import COMMAND_MODULES

    for module in set(COMMAND_MODULES.values()):
        probe = typer.Typer()
        import_module(module, "kserve_compile.cli").register(probe)
        names = {c.name or c.callback.__name__ for c in probe.registered_commands if c.callback}
        names |= {g.name for g in probe.registered_groups if g.name}
        assert names == {name for name, owner in COMMAND_MODULES.items() if owner == module}, module


def test_every_command_is_listed_and_each_runs_alone():
    listing = run("--help").stdout
    from kserve_compile.cli.app import COMMAND_MODULES

    assert all(f" {name} " in listing for name in COMMAND_MODULES)
    assert run("status", str(EXAMPLE)).returncode == 0
    assert "Run or draw an InferenceGraph" in run("graph", "--help").stdout


def test_short_lived_commands_are_commands():
    # main() reads this set before the app is imported (to switch the collector off and end with os._exit)
    from kserve_compile.cli import _SHORT_LIVED
    from kserve_compile.cli.app import COMMAND_MODULES

    assert _SHORT_LIVED <= set(COMMAND_MODULES)
    assert not _SHORT_LIVED & {"apply", "daemon", "graph"}  # long-running: they keep the collector and teardown
