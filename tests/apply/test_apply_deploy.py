"""deploy/: a kustomize base plus overlays; RBAC generated from one table; the image is non-root and compiler-free."""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import tomllib

import pytest
import yaml

from kserve_compile import constants as C
from kserve_compile.apply import crds, rbac
from kserve_compile.apply.daemon import PERMISSIONS, Daemon, DaemonConfig

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def docs(path: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((DEPLOY / path).read_text()) if d]


def base_docs() -> list[dict]:
    return docs("base/rbac.yaml") + docs("base/deployment.yaml")


def granted(objs: list[dict], kind: str) -> dict[tuple[str, str], set[str]]:
    out: dict[tuple[str, str], set[str]] = {}
    for d in objs:
        if d["kind"] == kind:
            for rule in d["rules"]:
                for g in rule["apiGroups"]:
                    for r in rule["resources"]:
                        out.setdefault((g, r), set()).update(rule["verbs"])
    return out


def test_rbac_file_is_generated_from_the_table():
    assert (DEPLOY / "base" / "rbac.yaml").read_text() == rbac.render(), (
        "deploy/base/rbac.yaml is stale: python -m kserve_compile.apply.rbac > deploy/base/rbac.yaml"
    )


def test_rbac_grants_exactly_the_table_and_nothing_wider():
    objs = docs("base/rbac.yaml")
    rules = granted(objs, "ClusterRole")
    for key, verbs in granted(objs, "Role").items():
        rules.setdefault(key, set()).update(verbs)
    assert rules == {(g, r): set(v) for g, r, v in PERMISSIONS}
    assert all("*" not in v for v in rules.values())
    assert ("coordination.k8s.io", "leases") not in granted(objs, "ClusterRole")  # only in its own namespace
    assert rules[("opentelemetry.io", "opentelemetrycollectors")] >= {"create", "patch", "delete"}  # rendered
    # read for credentials; written only as LLMInferenceService's rendered scheduler/sidecar ServiceAccounts
    assert rules[("", "serviceaccounts")] == {"get", "list", "watch", "create", "patch", "delete"}
    assert rules[("", "secrets")] == {"get", "list", "watch"}


def test_every_informer_the_daemon_runs_is_granted(fake, kube):
    table = {(g, r): set(v) for g, r, v in PERMISSIONS}
    daemon = Daemon(kube, DaemonConfig(leader_elect=False))
    named = [daemon.sources.named("Secret", "ns", "s"), daemon.sources.named("ServiceAccount", "ns", "a")]
    for informer in daemon.sources.fixed + named:
        assert {"list", "watch"} <= table[(informer.res.group, informer.res.plural)], informer.name
    for api_version, kind in rbac.CHILD_KINDS:
        use = next(u for u in rbac.USES if (u.api_version, u.kind) == (api_version, kind))
        assert set(use.verbs) >= {"get", "list", "watch", "create", "patch", "delete"}
    assert table[("serving.kserve.io", "inferenceservices/status")] >= {"patch"}
    assert table[("", "events")] >= {"create"}
    assert table[("coordination.k8s.io", "leases")] == {"get", "create", "update"}


def test_bindings_and_deployment_reference_the_service_account():
    objs = base_docs()
    sa = next(d for d in objs if d["kind"] == "ServiceAccount")
    for binding in (d for d in objs if d["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": sa["metadata"]["namespace"]}
        ]
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
    assert args[args.index("--resync") + 1] == "10m"
    assert ports == {"health": C.DAEMON_HEALTH_PORT, "metrics": C.DAEMON_METRICS_PORT}  # the CLI's defaults
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert dep["spec"]["selector"]["matchLabels"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]


def test_crd_file_is_generated_from_the_table():
    assert (DEPLOY / "crds" / "crds.yaml").read_text() == crds.render(), (
        "deploy/crds/crds.yaml is stale: python -m kserve_compile.apply.crds > deploy/crds/crds.yaml"
    )


def test_crds_cover_every_kserve_kind_the_daemon_reads_or_a_user_creates():
    served = {d["spec"]["names"]["kind"]: d for d in docs("crds/crds.yaml")}
    read = {u.kind for u in rbac.USES if u.group == "serving.kserve.io"}
    assert read <= set(served), f"no CRD for {read - set(served)}"
    assert set(served) == read | {"TrainedModel", "LocalModelNode"}
    read_at = {u.kind: u.api_version for u in rbac.USES}  # the version the daemon reads each kind at
    for kind, crd in served.items():
        assert crd["metadata"]["name"] == f"{crd['spec']['names']['plural']}.serving.kserve.io"
        (version,) = crd["spec"]["versions"]  # one served version: no conversion webhook in this install
        assert f"serving.kserve.io/{version['name']}" == read_at.get(kind, "serving.kserve.io/v1alpha1"), kind


def test_crds_have_kserves_scope_and_status_subresource():
    served = {d["spec"]["names"]["kind"]: d for d in docs("crds/crds.yaml")}
    cluster = {k for k, d in served.items() if d["spec"]["scope"] == "Cluster"}
    assert cluster == {
        "ClusterServingRuntime",
        "ClusterStorageContainer",
        "LocalModelCache",
        "LocalModelNodeGroup",
        "LocalModelNode",
    }
    with_status = {k for k, d in served.items() if d["spec"]["versions"][0].get("subresources") == {"status": {}}}
    assert with_status == {
        "InferenceService",
        "InferenceGraph",
        "TrainedModel",
        "LLMInferenceService",
        "LLMInferenceServiceConfig",
        "LocalModelCache",
        "LocalModelNamespaceCache",
        "LocalModelNode",
    }
    isvc = served["InferenceService"]["spec"]["versions"][0]
    conditions = isvc["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map" and conditions["x-kubernetes-list-map-keys"] == ["type"]
    csc = served["ClusterStorageContainer"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    assert csc["disabled"] == {"type": "boolean"}  # beside spec, as KServe's: the API server would prune it


def test_builtin_kinds_validate_against_kubernetes_schemas():
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (the validate extra) is not installed")
    for d in base_docs() + docs("crds/crds.yaml"):
        kv.validate(d, "1.32", strict=True)


def test_kustomizations_list_every_file_of_their_folder():
    for kust in DEPLOY.rglob("kustomization.yaml"):
        listed = {r for r in yaml.safe_load(kust.read_text())["resources"] if not r.startswith("..")}
        present = {p.name for p in kust.parent.glob("*.yaml") if p.name != "kustomization.yaml"}
        assert listed == present, kust


def test_standalone_configmap_is_the_shipped_one():
    shipped = ROOT / "kserve_compile" / "data" / "inferenceservice-config.yaml"
    assert (DEPLOY / "overlays" / "standalone" / "inferenceservice-config.yaml").read_text() == shipped.read_text()


def _kustomize(overlay: str) -> list[dict]:
    if not shutil.which("kubectl"):
        pytest.skip("kubectl is not installed: `kubectl kustomize` cannot build the overlays")
    out = subprocess.run(
        ["kubectl", "kustomize", str(DEPLOY / "overlays" / overlay)], capture_output=True, text=True, check=True
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def test_overlay_standalone_installs_crds_namespace_and_config():
    kinds = sorted(d["kind"] for d in _kustomize("standalone"))
    assert kinds.count("CustomResourceDefinition") == len(crds.TABLE)
    assert {"Namespace", "ConfigMap", "Deployment", "ClusterRole", "Role"} <= set(kinds)


def test_overlay_alongside_kserve_leaves_kserve_crds_and_config_alone():
    objs = _kustomize("alongside-kserve")
    kinds = {d["kind"] for d in objs}
    assert "CustomResourceDefinition" not in kinds and "ConfigMap" not in kinds and "Namespace" not in kinds
    args = next(d for d in objs if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--selector=kserve-compile.io/managed=true" in args


# --- the image ------------------------------------------------------------------------------------
def _stages() -> list[list[str]]:
    """Dockerfile instructions per stage (continuation lines joined, comments dropped)."""
    text = re.sub(r"\\\n\s*", " ", (DEPLOY / "Dockerfile").read_text())
    stages: list[list[str]] = []
    for line in (ln.strip() for ln in text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append([])
        stages[-1].append(line)
    return stages


def test_dockerfile_final_stage_is_non_root_venv_only_and_compiler_free():
    # tests/integration/test_images.py builds and runs the image; this reads the Dockerfile where no engine runs
    build, final = _stages()
    assert build[0].endswith(" AS build") and any("pip install ." in i for i in build)
    assert final[0].startswith("FROM python:3.11-slim") and " AS " not in final[0]
    user = next(i for i in final if i.startswith("USER "))
    assert re.fullmatch(r"USER [1-9]\d*:[1-9]\d*", user)  # numeric: runAsNonRoot can verify it
    copies = [i for i in final if i.startswith("COPY")]
    assert copies == ["COPY --from=build /opt/venv /opt/venv"]  # the installed venv only: no source tree, no wheels
    final_text = " ".join(final)
    for tool in ("gcc", "build-essential", "apt-get install", "g++", "make ", "pip "):
        assert tool not in final_text
    assert 'ENTRYPOINT ["kserve-compile"]' in final


def test_deployment_runs_the_image_the_dockerfile_documents():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    image = docs("base/deployment.yaml")[0]["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == f"kserve-compile:{version}"
    assert f"-t {image} ." in (DEPLOY / "Dockerfile").read_text()
    user = next(i for i in _stages()[1] if i.startswith("USER "))
    pod = docs("base/deployment.yaml")[0]["spec"]["template"]["spec"]
    assert user == f"USER {pod['securityContext']['runAsUser']}:{pod['securityContext']['runAsGroup']}"
