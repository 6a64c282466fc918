"""render/status/validate as CI and GitOps pipelines drive them: --check, -n, pass-through, --strict, conventions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from .test_cli import EXAMPLE, ROOT, run

NO_NS = EXAMPLE.read_text().replace("  namespace: default\n", "")
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-settings}\ndata: {a: '1'}\n"
CERT = (
    "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: tls, namespace: default}\n"
    "spec: {secretName: tls, issuerRef: {name: ca, kind: ClusterIssuer}}\n"
)
# a kind of another API group whose schema kserve-compile does not carry
MONITOR = (
    "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m, namespace: default}\n"
    "spec: {selector: {}}\n"
)


def repo(tmp_path: Path, **files: str) -> Path:
    root = tmp_path / "repo"
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name.replace("__", ".")).write_text(text)
    return root


# --- --output-dir --check ----------------------------------------------------------------------------------------


def test_check_exits_0_when_current_1_with_the_stale_list_and_2_on_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("render", str(EXAMPLE), "--output-dir", str(out)).returncode == 0
    current = run("render", str(EXAMPLE), "--output-dir", str(out), "--check")
    assert current.returncode == 0, current.stderr
    assert current.stdout == ""
    two = repo(tmp_path, a__yaml=EXAMPLE.read_text(), b__yaml=EXAMPLE.read_text().replace("sklearn-iris", "aaa"))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    stale = run("render", str(two), "--output-dir", str(out), "--check")
    assert stale.returncode == 1
    assert stale.stdout.splitlines() == [
        "added: deployment.apps_default_aaa-predictor.yaml",
        "added: horizontalpodautoscaler.autoscaling_default_aaa-predictor.yaml",
        "added: ingress.networking.k8s.io_default_aaa.yaml",
        "added: service_default_aaa-predictor.yaml",
        "changed: kustomization.yaml",
    ]
    assert "is stale (4 added, 1 changed, 0 removed)" in stale.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # --check writes nothing
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("gs://", "ftp://"))
    invalid = run("render", str(bad), "--output-dir", str(out), "--check")
    assert invalid.returncode == 2 and "StorageURI not supported" in invalid.stderr  # an error, as kubectl diff
    assert run("render", str(EXAMPLE), "--check").returncode == 2  # --check without --output-dir


def test_adding_one_model_adds_only_its_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    models = repo(tmp_path, m__yaml=EXAMPLE.read_text())
    assert run("render", str(models), "--output-dir", str(out)).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    (models / "a.yaml").write_text(EXAMPLE.read_text().replace("sklearn-iris", "aaa-first"))
    result = run("render", str(models), "--output-dir", str(out))
    assert "(4 added, 1 changed, 0 removed)" in result.stderr
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {n for n in before if before[n] != after.get(n)} == {"kustomization.yaml"}
    (models / "m.yaml").unlink()
    result = run("render", str(models), "--output-dir", str(out))
    assert "(0 added, 1 changed, 4 removed)" in result.stderr
    assert not any("sklearn-iris" in n for n in os.listdir(out))


# --- -n/--namespace ------------------------------------------------------------------------------------------------


def test_namespace_flag_moves_every_object_and_host(tmp_path: Path) -> None:
    src = repo(tmp_path, isvc__yaml=NO_NS, cm__yaml=CM)
    result = run("render", str(src), "-n", "team-a")
    assert result.returncode == 0, result.stderr
    objects = list(yaml.safe_load_all(result.stdout))
    assert {o["metadata"]["namespace"] for o in objects} == {"team-a"}
    assert ".default." not in result.stdout and "-default" not in result.stdout.replace("default-scheduler", "")
    ingress = next(o for o in objects if o["kind"] == "Ingress")
    assert ingress["spec"]["rules"][0]["host"] == "sklearn-iris-team-a.example.com"
    status = run("status", str(src), "--namespace", "team-a", "-o", "json")
    assert json.loads(status.stdout)[0]["url"] == "http://sklearn-iris-team-a.example.com"
    assert run("validate", str(src), "-n", "team-a").returncode == 0


def test_without_namespace_flag_inputs_land_in_default_and_a_conflict_is_an_error(tmp_path: Path) -> None:
    assert run("render", "-", stdin=NO_NS).stdout == run("render", str(EXAMPLE)).stdout
    conflict = run("render", str(EXAMPLE), "-n", "other")
    assert conflict.returncode == 1
    assert (
        "metadata.namespace: the namespace of the object (default) does not match --namespace other" in conflict.stderr
    )
    assert run("render", str(EXAMPLE), "-n", "Not_A_Label").returncode == 2


# --- pass-through ------------------------------------------------------------------------------------------------


def test_other_objects_pass_through_and_kustomize_files_are_skipped_with_a_note(tmp_path: Path) -> None:
    src = repo(
        tmp_path,
        isvc__yaml=EXAMPLE.read_text(),
        cert__yaml=CERT,
        monitor__yaml=MONITOR,
        cm__yaml=CM,
        kustomization__yaml="resources: [isvc.yaml]\n",
        values__yaml="replicas: 3\nimage: {tag: v1}\n",
    )
    result = run("render", str(src))
    assert result.returncode == 0, result.stderr
    objects = list(yaml.safe_load_all(result.stdout))
    assert yaml.safe_load(CERT) in objects
    # passed through in the namespace the API server would put it in, as the KServe objects are
    assert {**yaml.safe_load(CM), "metadata": {"name": "app-settings", "namespace": "default"}} in objects
    assert (
        f"{src / 'kustomization.yaml'}:1:1: note: a kustomize file, not a Kubernetes object: skipped" in result.stderr
    )
    assert (
        f"{src / 'values.yaml'}:1:1: note: not a Kubernetes object (no apiVersion and kind): skipped" in result.stderr
    )
    strict = run("render", str(src), "--strict")
    assert strict.returncode == 1 and strict.stdout == ""
    assert "cert-manager.io/v1/Certificate is not a KServe input; --strict refuses to pass it through" in strict.stderr
    validated = run("validate", str(src))
    assert validated.returncode == 0, validated.stderr
    assert "no schema is known for apiVersion 'monitoring.coreos.com/v1' kind 'ServiceMonitor'" in validated.stderr
    assert "Certificate" not in validated.stderr  # checked against its schema, and valid


def test_service_accounts_and_secrets_are_read_not_emitted_and_say_so(tmp_path: Path) -> None:
    sa = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: default}\n"
    result = run("render", str(repo(tmp_path, isvc__yaml=EXAMPLE.read_text(), sa__yaml=sa)))
    assert result.returncode == 0, result.stderr
    assert "ServiceAccount" not in [o["kind"] for o in yaml.safe_load_all(result.stdout)]
    assert (
        "ServiceAccount/default: note: read for storage credentials, as KServe reads it from the cluster; not part of the output"
        in result.stderr
    )
    assert "not in the inputs" not in result.stderr  # the credentials warning is gone: the ServiceAccount was read


def test_passed_through_objects_are_checked_like_the_rest(tmp_path: Path) -> None:
    bad = CM.replace("{name: app-settings}", "{name: App_Settings, labels: {'a b': x}}")
    src = repo(tmp_path, isvc__yaml=EXAMPLE.read_text(), cm__yaml=bad)
    for command in ("render", "validate"):
        result = run(command, str(src))
        assert result.returncode == 1
        assert "ConfigMap/App_Settings: metadata.name: invalid value 'App_Settings'" in result.stderr
        assert "metadata.labels: invalid label key 'a b'" in result.stderr


def test_a_passed_object_clashing_with_a_rendered_one_is_an_error(tmp_path: Path) -> None:
    clash = "apiVersion: v1\nkind: Service\nmetadata: {name: sklearn-iris-predictor, namespace: default}\nspec: {}\n"
    result = run("render", str(repo(tmp_path, isvc__yaml=EXAMPLE.read_text(), svc__yaml=clash)))
    assert result.returncode == 1
    assert "Service default/sklearn-iris-predictor is defined twice" in result.stderr


# --- conventions -------------------------------------------------------------------------------------------------


def test_version_and_shell_completion() -> None:
    from kserve_compile import __version__

    version = run("--version")
    assert version.returncode == 0 and version.stdout == f"kserve-compile {__version__}\n"

    # what --install-completion installs for bash, and what that script asks the program for a partial word
    def complete(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(ROOT / "cli.py")],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, **env},
        )

    script = complete(_KSERVE_COMPILE_COMPLETE="source_bash")
    assert script.returncode == 0 and "_kserve_compile_completion()" in script.stdout
    words = complete(_KSERVE_COMPILE_COMPLETE="complete_bash", COMP_WORDS="kserve-compile ren", COMP_CWORD="1")
    assert words.stdout.split() == ["render"]
    options = complete(
        _KSERVE_COMPILE_COMPLETE="complete_bash", COMP_WORDS="kserve-compile render --outp", COMP_CWORD="2"
    )
    assert "--output-dir" in options.stdout.split()


def test_output_formats_are_validated_everywhere() -> None:
    for command, value in (("render", "foo"), ("status", "foo"), ("diff", "foo")):
        args = [command, str(EXAMPLE)] + ([str(EXAMPLE)] if command == "diff" else []) + ["-o", value]
        result = run(*args)
        assert result.returncode == 2, (command, result.stderr)
        assert "'foo' is not one of" in result.stderr or "-o/--output must be one of text, json" in result.stderr
    as_yaml = run("status", str(EXAMPLE), "-o", "yaml")
    assert yaml.safe_load(as_yaml.stdout)[0]["url"] == "http://sklearn-iris-default.example.com"


def test_repeated_warnings_are_printed_once_with_a_count(tmp_path: Path) -> None:
    mistyped = EXAMPLE.read_text().replace("deploymentMode: Standard", "deploymentMode: Standrd")
    many = "\n---\n".join(mistyped.replace("sklearn-iris", f"m{i}") for i in range(5))
    result = run("render", "-", stdin=many)
    assert result.returncode == 0
    lines = [line for line in result.stderr.splitlines() if "deploymentMode 'Standrd' is not one KServe knows" in line]
    assert len(lines) == 1 and lines[0].endswith("(and 4 more like it)")
    as_json = run("render", "-", "--error-format", "json", stdin=many)
    assert len([x for x in as_json.stderr.splitlines() if "Standrd" in x]) == 5  # machines get every one


def test_an_input_the_run_lacks_is_noted_once_per_run_with_its_count(tmp_path: Path) -> None:
    many = "\n---\n".join(EXAMPLE.read_text().replace("sklearn-iris", f"m{i}") for i in range(5))
    for fmt in ("text", "json"):
        result = run("render", "-", "--error-format", fmt, stdin=many)
        assert result.returncode == 0
        [line] = [x for x in result.stderr.splitlines() if "ServiceAccount default/default not in the inputs" in x]
        assert "(and for 4 more objects of the run); give it as an input" in line
    quiet = run("render", "-", "-q", stdin=many)
    assert quiet.stderr == ""


def test_quiet_is_quiet_on_failure_and_with_output_dir(tmp_path: Path) -> None:
    bad = EXAMPLE.read_text().replace("gs://", "ftp://") + "\n---\n" + EXAMPLE.read_text().replace("sklearn-iris", "ok")
    loud = run("render", "-", stdin=bad)
    quiet = run("render", "-", "-q", stdin=bad)
    assert "note:" in loud.stderr and loud.returncode == quiet.returncode == 1
    assert "note:" not in quiet.stderr and "StorageURI not supported" in quiet.stderr
    written = run("render", str(EXAMPLE), "-q", "--output-dir", str(tmp_path / "out"))
    assert written.returncode == 0 and written.stderr == ""


def test_no_color_is_honoured_in_help() -> None:
    env = {**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "1", "TERM": "xterm-256color"}
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "render", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0 and "--namespace" in result.stdout
    assert "\x1b[" not in result.stdout
