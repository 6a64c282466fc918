"""deploy/: the daemon's manifests are valid, least-privilege, and match what the code uses."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from kserve_compile.apply.daemon import PERMISSIONS

DEPLOY = pathlib.Path(__file__).resolve().parents[2] / "deploy"


def docs(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def all_docs() -> list[dict]:
    return [d for f in ("crds.yaml", "rbac.yaml", "deployment.yaml") for d in docs(f)]


def granted(kind: str) -> dict[tuple[str, str], set[str]]:
    out: dict[tuple[str, str], set[str]] = {}
    for d in all_docs():
        if d["kind"] == kind:
            for rule in d["rules"]:
                for g in rule["apiGroups"]:
                    for r in rule["resources"]:
                        out.setdefault((g, r), set()).update(rule["verbs"])
    return out


def test_rbac_grants_exactly_what_the_daemon_uses():
    rules = granted("ClusterRole")
    for key, verbs in granted("Role").items():
        rules.setdefault(key, set()).update(verbs)
    needed = {(g, r): set(v) for g, r, v in PERMISSIONS}
    assert rules == needed
    assert all("*" not in v for v in rules.values())
    # leases only through the namespaced Role
    assert ("coordination.k8s.io", "leases") not in granted("ClusterRole")


def test_bindings_and_deployment_reference_the_service_account():
    objs = all_docs()
    sa = next(d for d in objs if d["kind"] == "ServiceAccount")
    for binding in (d for d in objs if d["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                                        "namespace": sa["metadata"]["namespace"]}]
        role_kinds = {d["metadata"]["name"]: d["kind"] for d in objs if d["kind"] in ("ClusterRole", "Role")}
        assert role_kinds[binding["roleRef"]["name"]] == binding["roleRef"]["kind"]
    dep = next(d for d in objs if d["kind"] == "Deployment")
    pod = dep["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == sa["metadata"]["name"]
    container = pod["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    args = container["args"]
    assert args[0] == "daemon" and "--leader-elect" in args
    assert args[args.index("--health-addr") + 1] == f":{ports['health']}"
    assert args[args.index("--metrics-addr") + 1] == f":{ports['metrics']}"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert dep["spec"]["selector"]["matchLabels"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()


def test_crds_cover_the_watched_kinds_with_status_subresource():
    crds = {d["spec"]["names"]["kind"]: d for d in docs("crds.yaml")}
    assert set(crds) == {"InferenceService", "InferenceGraph", "ServingRuntime", "ClusterServingRuntime"}
    isvc = crds["InferenceService"]["spec"]["versions"][0]
    assert isvc["name"] == "v1beta1" and isvc["subresources"] == {"status": {}}
    conditions = isvc["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map" and conditions["x-kubernetes-list-map-keys"] == ["type"]
    assert crds["ClusterServingRuntime"]["spec"]["scope"] == "Cluster"
    for name, crd in crds.items():
        assert crd["metadata"]["name"] == f"{crd['spec']['names']['plural']}.serving.kserve.io"


def test_builtin_kinds_validate_against_kubernetes_schemas():
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (the validate extra) is not installed")
    for d in all_docs():
        kv.validate(d, "1.32", strict=True)


def test_kustomization_lists_every_file():
    kust = docs("kustomization.yaml")[0]
    assert sorted(kust["resources"]) == sorted(p.name for p in DEPLOY.glob("*.yaml") if p.name != "kustomization.yaml")
