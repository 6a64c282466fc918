"""The diff/apply commands through typer, against the fake API server: exit codes and output."""

from __future__ import annotations

import json
import pathlib

import typer
import yaml
from kc_manifests import deployment, isvc_set
from typer.testing import CliRunner

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
    as_json = runner.invoke(app(), ["diff", "--cluster", changed, *args, "-o", "json"])
    assert as_json.exit_code == 1
    assert [(e["action"], e["kind"], e["name"]) for e in json.loads(as_json.stdout)] == [
        ("added", "Deployment", "m-extra")
    ]
    assert fake.writes() == []


def test_apply_error_exits_1_and_names_the_object(fake, tmp_path):
    files = write(tmp_path / "r.yaml", [deployment("d")])
    fake.fail("PATCH", r"/deployments/d$", status=403, reason="Forbidden", message="denied by policy", times=5)
    result = runner.invoke(app(), ["apply", files, "--rendered", "--server", fake.url, "-n", "ns"])
    assert result.exit_code == 1
    assert "error: Deployment.apps/ns/d: 403 Forbidden: denied by policy" in result.stderr


def test_apply_wait_times_out_with_exit_4(fake, tmp_path, monkeypatch):
    files = write(tmp_path / "r.yaml", [deployment("d")])
    result = runner.invoke(
        app(), ["apply", files, "--rendered", "--server", fake.url, "-n", "ns", "--wait", "--timeout", "0"]
    )
    assert result.exit_code == 4
    assert "timed out waiting for: Deployment.apps/ns/d: InProgress replicas: 0/1" in result.stderr


def test_cli_module_imports_no_kubernetes():
    import subprocess
    import sys

    code = (
        "import sys, kserve_compile.apply.cli; "
        "bad = [m for m in ('kubernetes', 'yaml', 'urllib3') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=pathlib.Path(__file__).resolve().parents[2],
    )
    assert out.stdout.strip() == "[]"


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_is_a_clear_error_naming_server_and_context(tmp_path):
    files = write(tmp_path / "r.yaml", [deployment("d")])
    port = _closed_port()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "lab",
                "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "lab", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    result = runner.invoke(app(), ["apply", files, "--rendered", "--kubeconfig", str(kubeconfig), "-n", "ns"])
    assert result.exit_code == 1  # as kubectl: "The connection to the server ... was refused" exits 1
    assert f"cannot reach the API server at http://127.0.0.1:{port} (kubeconfig context 'lab')" in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.count("cannot reach") == 1  # one line, not one per object


def test_daemon_against_an_unreachable_server_exits_1_naming_it():
    port = _closed_port()
    result = runner.invoke(
        app(),
        [
            "daemon",
            "--server",
            f"http://127.0.0.1:{port}",
            "--no-leader-elect",
            "--health-addr",
            "127.0.0.1:0",
            "--metrics-addr",
            "127.0.0.1:0",
        ],
    )
    assert result.exit_code == 1
    assert f"cannot reach the API server at http://127.0.0.1:{port}" in result.stderr
    assert "internal error" not in result.stderr


def test_time_flags_take_durations(fake, tmp_path):
    files = write(tmp_path / "r.yaml", [deployment("d")])
    bad = runner.invoke(app(), ["apply", files, "--rendered", "--server", fake.url, "--wait", "--timeout", "5x"])
    assert bad.exit_code == 2 and "--timeout: invalid duration '5x'" in bad.stderr
    assert fake.writes() == []  # refused before anything was sent
    resync = runner.invoke(app(), ["daemon", "--server", fake.url, "--resync", "ten minutes"])
    assert resync.exit_code == 2 and "--resync: invalid duration 'ten minutes'" in resync.stderr
    ok = runner.invoke(
        app(), ["apply", files, "--rendered", "--server", fake.url, "-n", "ns", "--wait", "--timeout", "0s"]
    )
    assert ok.exit_code == 4  # parsed: a zero wait times out at once


def test_failures_map_to_exit_codes_by_class_not_by_name(capsys, monkeypatch):
    from kserve_compile.apply.cli import _register_exits
    from kserve_compile.apply.kube import ApiError, ClusterUnreachable
    from kserve_compile.cli.exits import EXIT_INTERNAL, EXIT_INVALID, EXIT_USAGE, ErrorFormat, _exit_for
    from kserve_compile.errors import UsageError

    class UsageErrorLookalike(Exception):  # the old code matched this by its class name
        pass

    monkeypatch.delenv("KSERVE_COMPILE_DEBUG", raising=False)
    UsageErrorLookalike.__name__ = "UsageError"
    _register_exits()
    assert _exit_for(UsageError("bad flag"), ErrorFormat.text) == EXIT_USAGE
    assert _exit_for(UsageErrorLookalike("x"), ErrorFormat.text) == EXIT_INTERNAL
    capsys.readouterr()
    assert _exit_for(ClusterUnreachable("https://k:6443", "prod", "refused"), ErrorFormat.text) == EXIT_INVALID
    assert capsys.readouterr().err == (
        "error: cannot reach the API server at https://k:6443 (kubeconfig context 'prod'): refused\n"
    )
    assert _exit_for(ApiError(403, "Forbidden", "no"), ErrorFormat.text) == EXIT_INVALID


def test_refusing_server_names_itself_and_diff_exits_2(fake, tmp_path):
    files = write(tmp_path / "r.yaml", [deployment("d")])
    fake.fail("GET", r"^/apis/apps/v1$", status=401, reason="Unauthorized", message="token expired", times=10)
    applied = runner.invoke(app(), ["apply", files, "--rendered", "--server", fake.url, "-n", "ns"])
    assert applied.exit_code == 1
    assert f"error: the API server at {fake.url} refused the request: 401 Unauthorized: token expired" in applied.stderr
    diffed = runner.invoke(app(), ["diff", "--cluster", files, "--rendered", "--server", fake.url, "-n", "ns"])
    assert diffed.exit_code == 2  # kubectl diff: above 1 means the diff itself failed, not "changes found"
    assert "refused the request: 401" in diffed.stderr and "internal error" not in diffed.stderr


def test_apply_renders_into_the_namespace_it_is_given(fake, tmp_path):
    isvc = {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "m", "annotations": {"serving.kserve.io/deploymentMode": "Standard"}},
        "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://b/m"}}},
    }
    files = write(tmp_path / "isvc.yaml", [isvc])
    result = runner.invoke(app(), ["apply", files, "--server", fake.url, "-n", "prod", "--applyset", "m"])
    assert result.exit_code == 0, result.output
    assert fake.names("apps", "deployments", "prod") == ["m-predictor"]  # as `render -n prod`, not in default
    assert fake.names("apps", "deployments", "default") == []
    isvc["metadata"]["namespace"] = "default"
    files = write(tmp_path / "isvc.yaml", [isvc])
    mismatch = runner.invoke(app(), ["apply", files, "--server", fake.url, "-n", "prod"])
    assert mismatch.exit_code == 1 and "does not match --namespace prod" in mismatch.stderr
