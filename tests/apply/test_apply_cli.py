"""The diff/apply commands through typer, against the fake API server: exit codes and output."""

from __future__ import annotations

import pathlib

import typer
import yaml
from typer.testing import CliRunner

from kc_manifests import deployment, isvc_set
from kserve_compile.apply.cli import register

runner = CliRunner()


def app() -> typer.Typer:
    a = typer.Typer(add_completion=False)

    @a.callback()
    def main() -> None:  # a group, so the commands keep their names
        pass

    register(a)
    return a


def write(path: pathlib.Path, objs) -> str:
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return str(path)


def test_offline_diff_exit_codes(tmp_path):
    a = write(tmp_path / "a.yaml", [deployment("d"), deployment("e")])
    b = write(tmp_path / "b.yaml", [deployment("d", image="img:2"), deployment("e")])
    same = runner.invoke(app(), ["diff", a, a])
    assert same.exit_code == 0 and same.stdout == ""
    changed = runner.invoke(app(), ["diff", a, b])
    assert changed.exit_code == 1
    assert "--- a/Deployment.apps/ns/d" in changed.stdout and "-      - image: img:1" in changed.stdout
    assert "+      - image: img:2" in changed.stdout and "Deployment.apps/ns/e" not in changed.stdout


def test_offline_diff_of_directories(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    write(tmp_path / "x" / "one.yaml", [deployment("d")])
    write(tmp_path / "y" / "one.yaml", [deployment("d")])
    write(tmp_path / "y" / "two.yaml", [deployment("new")])
    result = runner.invoke(app(), ["diff", str(tmp_path / "x"), str(tmp_path / "y")])
    assert result.exit_code == 1 and "--- /dev/null\n+++ b/Deployment.apps/ns/new" in result.stdout


def test_usage_errors_exit_2_without_traceback(tmp_path):
    result = runner.invoke(app(), ["diff", str(tmp_path / "missing.yaml"), str(tmp_path / "other.yaml")])
    assert result.exit_code == 2 and "no such file or directory" in result.stderr
    assert "Traceback" not in result.output
    result = runner.invoke(app(), ["apply", "--rendered", "--dry-run", "client", str(tmp_path)])
    assert result.exit_code == 2 and "--dry-run must be none or server" in result.stderr


def test_invalid_yaml_exits_2_as_kubectl_diff(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    result = runner.invoke(app(), ["diff", str(bad), str(bad)])
    assert result.exit_code == 2 and "invalid YAML" in result.stderr and "Traceback" not in result.output


def test_apply_then_cluster_diff(fake, tmp_path):
    files = write(tmp_path / "r.yaml", isvc_set())
    args = ["--rendered", "--server", fake.url, "-n", "ns", "--applyset", "configmaps/m.kserve-compile"]
    result = runner.invoke(app(), ["apply", files, *args, "--prune"])
    assert result.exit_code == 0, result.output
    assert "apply: 4 created" in result.stdout
    assert fake.names("apps", "deployments", "ns") == ["m-predictor"]
    result = runner.invoke(app(), ["diff", "--cluster", files, *args])
    assert result.exit_code == 0 and result.stdout == ""
    changed = write(tmp_path / "c.yaml", [dict(o) for o in isvc_set()[:-1]] + [deployment("m-extra")])
    fake.clear_log()
    result = runner.invoke(app(), ["diff", "--cluster", changed, *args])
    assert result.exit_code == 1 and "+++ merged/Deployment.apps/ns/m-extra" in result.stdout
    assert fake.writes() == []


def test_apply_error_exits_1_and_names_the_object(fake, tmp_path):
    files = write(tmp_path / "r.yaml", [deployment("d")])
    fake.fail("PATCH", r"/deployments/d$", status=403, reason="Forbidden", message="denied by policy", times=5)
    result = runner.invoke(app(), ["apply", files, "--rendered", "--server", fake.url, "-n", "ns"])
    assert result.exit_code == 1
    assert "error: Deployment.apps/ns/d: 403 Forbidden: denied by policy" in result.stderr


def test_apply_wait_times_out_with_exit_4(fake, tmp_path, monkeypatch):
    files = write(tmp_path / "r.yaml", [deployment("d")])
    result = runner.invoke(app(), ["apply", files, "--rendered", "--server", fake.url, "-n", "ns", "--wait",
                                   "--timeout", "0"])
    assert result.exit_code == 4
    assert "timed out waiting for: Deployment.apps/ns/d: InProgress replicas: 0/1" in result.stderr


def test_cli_module_imports_no_kubernetes():
    import subprocess
    import sys

    code = ("import sys, kserve_compile.apply.cli; "
            "bad = [m for m in ('kubernetes', 'yaml', 'urllib3') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=pathlib.Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "[]"
