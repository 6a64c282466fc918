"""``kserve-compile apply`` and ``diff --cluster`` against a real kube-apiserver: server-side dry run, ApplySet
prune (added, changed, removed, foreign objects kept), conflicts with another field manager, and kubectl's exits."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from apiserver import ApiServer
from cluster_helpers import cli, install_config, isvc

from kserve_compile.apply.objects import applyset_id


@pytest.fixture
def ns(apiserver: ApiServer, crds: list, kube_namespace: str) -> str:
    install_config(apiserver)
    return kube_namespace


def write(path: Path, objects: list[dict]) -> str:
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return str(path)


def configmap(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def names(server: ApiServer, kind: str, namespace: str) -> list[str]:
    api = {"ConfigMap": "v1", "Deployment": "apps/v1", "Service": "v1", "Ingress": "networking.k8s.io/v1"}[kind]
    _, listing = server.request("GET", server.resource_path(api, kind, namespace))
    return sorted(o["metadata"]["name"] for o in listing["items"])


def test_dry_run_server_with_prune_and_wait_writes_nothing(apiserver: ApiServer, ns: str, tmp_path: Path) -> None:
    files = write(tmp_path / "isvc.yaml", [isvc("m", ns)])
    args = ["apply", files, "--kubeconfig", apiserver.kubeconfig, "-n", ns, "--prune", "--wait", "--dry-run", "server"]
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"Service/{ns}/m-predictor created (server dry run)",
        f"Deployment.apps/{ns}/m-predictor created (server dry run)",
        f"Ingress.networking.k8s.io/{ns}/m created (server dry run)",
        "apply: 3 created",
    ]
    assert names(apiserver, "Deployment", ns) == []
    assert set(names(apiserver, "ConfigMap", ns)) <= {"kube-root-ca.crt"}  # not even the ApplySet parent


def test_applyset_prune_adds_changes_removes_and_keeps_foreign_objects(
    apiserver: ApiServer, ns: str, tmp_path: Path
) -> None:
    base = ["--rendered", "--kubeconfig", apiserver.kubeconfig, "-n", ns, "--applyset", "configmaps/app", "--prune"]
    first = write(tmp_path / "one.yaml", [configmap("a", v="1"), configmap("b", v="1"), configmap("c", v="1")])
    result = cli("apply", first, *base)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "apply: 3 created"
    set_id = applyset_id("app", ns)
    parent = apiserver.get("v1", "ConfigMap", "app", ns)
    assert parent["metadata"]["labels"] == {"applyset.kubernetes.io/id": set_id}
    assert parent["metadata"]["annotations"]["applyset.kubernetes.io/contains-group-kinds"] == "ConfigMap"
    # someone else's object carrying our set's label: not ours to prune
    foreign = configmap("foreign", v="x")
    foreign["metadata"]["labels"] = {"applyset.kubernetes.io/part-of": set_id}
    apiserver.apply(foreign | {"metadata": {**foreign["metadata"], "namespace": ns}}, field_manager="kubectl")

    second = write(tmp_path / "two.yaml", [configmap("a", v="2"), configmap("c", v="1"), configmap("d", v="1")])
    result = cli("apply", second, *base)
    assert result.returncode == 0, result.stderr
    assert f"ConfigMap/{ns}/c unchanged" in result.stdout
    assert f"ConfigMap/{ns}/foreign kept (field manager 'kserve-compile' does not manage it)" in result.stdout
    assert result.stdout.strip().endswith("apply: 1 created, 1 configured, 1 unchanged, 1 pruned, 1 kept")
    assert [f"ConfigMap/{ns}/{n} {a}" for n, a in (("a", "configured"), ("d", "created"), ("b", "pruned"))] == [
        line for line in result.stderr.splitlines() if line.startswith("ConfigMap/")
    ]
    assert sorted(set(names(apiserver, "ConfigMap", ns)) - {"kube-root-ca.crt"}) == ["a", "app", "c", "d", "foreign"]
    assert apiserver.get("v1", "ConfigMap", "a", ns)["data"] == {"v": "2"}


def test_conflicts_with_another_manager_are_reported_as_kubectl_reports_them(
    apiserver: ApiServer, ns: str, tmp_path: Path
) -> None:
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}},
        },
    }
    files = write(tmp_path / "d.yaml", [dep])
    base = ["--rendered", "--kubeconfig", apiserver.kubeconfig, "-n", ns]
    assert cli("apply", files, *base).returncode == 0
    theirs = {**dep, "metadata": {"name": "d", "namespace": ns}, "spec": {**dep["spec"], "replicas": 3}}
    apiserver.apply(theirs, field_manager="other-tool")  # takes spec.replicas over (forced)
    refused = cli("apply", files, *base, "--no-force-conflicts")
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        f'error: Deployment.apps/{ns}/d: Apply failed with 1 conflict: conflict with "other-tool": .spec.replicas\n'
        "rerun with --force-conflicts"
    )
    assert apiserver.get("apps/v1", "Deployment", "d", ns)["spec"]["replicas"] == 3
    forced = cli("apply", files, *base, "--force-conflicts")
    assert forced.returncode == 0, forced.stderr
    live = apiserver.get("apps/v1", "Deployment", "d", ns)
    assert live["spec"]["replicas"] == 2
    owners = {m["manager"] for m in live["metadata"]["managedFields"] if "f:replicas" in str(m.get("fieldsV1"))}
    assert owners == {"kserve-compile"}


def test_cluster_diff_exit_codes_are_kubectls(apiserver: ApiServer, ns: str, tmp_path: Path) -> None:
    base = ["--rendered", "--kubeconfig", apiserver.kubeconfig, "-n", ns]
    files = write(tmp_path / "a.yaml", [configmap("a", v="1")])
    assert cli("apply", files, *base).returncode == 0
    same = cli("diff", "--cluster", files, *base)
    assert (same.returncode, same.stdout) == (0, "")
    changed = cli("diff", "--cluster", write(tmp_path / "b.yaml", [configmap("a", v="2")]), *base)
    assert changed.returncode == 1
    assert changed.stdout.startswith(f"--- live/ConfigMap/{ns}/a\n+++ merged/ConfigMap/{ns}/a\n")
    assert '-  v: "1"\n+  v: "2"\n' in changed.stdout
    bad = configmap("bad")
    bad["data"] = {"v": 1}  # the server's schema wants a string: refused, so the diff failed
    refused = cli("diff", "--cluster", write(tmp_path / "bad.yaml", [bad]), *base)
    assert refused.returncode == 2 and "the API server cannot take this object" in refused.stderr
    invalid = cli("diff", "--cluster", write(tmp_path / "c.yaml", [{"kind": "ConfigMap"}]), *base)
    assert invalid.returncode == 2 and "apiVersion, metadata.name required" in invalid.stderr
    unreachable = cli("diff", "--cluster", files, "--rendered", "--server", "http://127.0.0.1:9", "-n", ns)
    assert unreachable.returncode == 2 and "cannot reach the API server" in unreachable.stderr
    assert apiserver.get("v1", "ConfigMap", "a", ns)["data"] == {"v": "1"}  # a diff writes nothing


def test_wait_until_ready_and_timeout(apiserver: ApiServer, ns: str, tmp_path: Path) -> None:
    base = ["--rendered", "--kubeconfig", apiserver.kubeconfig, "-n", ns, "--wait", "--timeout", "20s"]
    ready = cli("apply", write(tmp_path / "cm.yaml", [configmap("a", v="1")]), *base)
    assert ready.returncode == 0 and "all 1 objects are ready" in ready.stderr
    files = write(tmp_path / "isvc.yaml", [isvc("m", ns)])
    never = cli("apply", files, "--kubeconfig", apiserver.kubeconfig, "-n", ns, "--wait", "--timeout", "2s")
    assert never.returncode == 4  # no pods without a scheduler and nodes: the Deployment never becomes ready
    assert f"timed out waiting for: Deployment.apps/{ns}/m-predictor: InProgress" in never.stderr
