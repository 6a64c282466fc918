"""``kserve-compile fn``: a KRM function for kustomize and kpt (ResourceList in/out), a Helm post-renderer (stream
in/out). Fixtures are ResourceLists as the orchestrators send them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.commands.test_cli import EXAMPLE, ROOT, run

FIXTURES = Path(__file__).parent / "fixtures"
GITOPS = ROOT / "examples" / "gitops"
ORCHESTRATOR = ("config.kubernetes.io/", "internal.config.kubernetes.io/", "config.k8s.io/")


def fn(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run("fn", *args, stdin=stdin)


def rendered_repo() -> list[dict]:
    result = run(
        "render",
        str(GITOPS / "models"),
        "--config",
        str(GITOPS / "config" / "inferenceservice-config.yaml"),
        "-n",
        "ml-prod",
    )
    assert result.returncode == 0, result.stderr
    return list(yaml.safe_load_all(result.stdout))


def strip_orchestrator(obj: dict) -> dict:
    annotations = {k: v for k, v in obj["metadata"].get("annotations", {}).items() if not k.startswith(ORCHESTRATOR)}
    meta = {k: v for k, v in obj["metadata"].items() if k != "annotations"}
    return {**obj, "metadata": {**meta, **({"annotations": annotations} if annotations else {})}}


def test_kustomize_resource_list_gets_the_rendered_objects_back() -> None:
    result = fn((FIXTURES / "kustomize-resourcelist.yaml").read_text())
    assert result.returncode == 0, result.stderr
    out = yaml.safe_load(result.stdout)
    assert out["apiVersion"] == "config.kubernetes.io/v1" and out["kind"] == "ResourceList"
    items = out["items"]
    # KServe inputs (isvcs, runtime, graph, the config) replaced; the NetworkPolicy kept with kustomize's annotations
    assert not any(i["apiVersion"].startswith("serving.kserve.io/") for i in items)
    policy = next(i for i in items if i["kind"] == "NetworkPolicy")
    assert policy["metadata"]["annotations"]["config.k8s.io/id"] == "6"
    assert policy["metadata"]["namespace"] == "ml-prod"  # functionConfig.data.namespace, as -n
    # the same objects as `render` of the repository, and no orchestrator annotation leaked into rendered ones
    assert [strip_orchestrator(i) for i in items] == rendered_repo()
    for item in items:
        if item["kind"] != "NetworkPolicy":
            assert not any(k.startswith(ORCHESTRATOR) for k in item["metadata"].get("annotations", {}))
    # the ServiceAccount the run lacks: one note for the run, an "info" result naming how many objects it concerns
    [note] = out["results"]
    assert note["severity"] == "info" and note["resourceRef"]["kind"] == "InferenceService"
    assert "ServiceAccount ml-prod/default not in the inputs" in note["message"]
    assert "(and for 2 more objects of the run)" in note["message"]


def test_problems_become_error_results_and_the_items_come_back_unchanged() -> None:
    resource_list = yaml.safe_load((FIXTURES / "kustomize-resourcelist.yaml").read_text())
    iris = resource_list["items"][0]
    iris["spec"]["predictor"]["model"]["storageUri"] = "ftp://nowhere/model"
    iris["spec"]["predictor"]["model"]["imagePullPolicy"] = "Sometimes"
    result = fn(yaml.safe_dump(resource_list))
    assert result.returncode == 1
    out = yaml.safe_load(result.stdout)
    assert out["items"] == resource_list["items"]
    errors = [r for r in out["results"] if r["severity"] == "error"]
    assert {(r["field"]["path"], r["file"]["path"]) for r in errors} >= {
        ("spec.predictor.model.storageUri", "isvcs/iris.yaml"),
        ("spec.predictor.model.imagePullPolicy", "isvcs/iris.yaml"),
    }
    assert {r["resourceRef"]["name"] for r in errors} == {"iris", "chain"}  # the graph's step names the broken isvc
    iris_ref = next(r["resourceRef"] for r in errors if r["resourceRef"]["name"] == "iris")
    assert iris_ref == {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService", "name": "iris"}
    assert (
        "isvcs/iris.yaml: InferenceService/iris: spec.predictor.model.imagePullPolicy: unsupported value"
        in result.stderr
    )


def test_kpt_style_function_config_and_strict() -> None:
    items = [
        yaml.safe_load(EXAMPLE.read_text().replace("  namespace: default\n", "")),
        {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "tls"}, "spec": {}},
    ]
    rl = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": items,
        "functionConfig": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "fn"},
            "data": {"namespace": "kpt-ns"},
        },
    }
    out = yaml.safe_load(fn(yaml.safe_dump(rl)).stdout)
    assert {i["metadata"]["namespace"] for i in out["items"]} == {"kpt-ns"}
    rl["functionConfig"]["data"]["strict"] = "true"
    strict = fn(yaml.safe_dump(rl))
    assert strict.returncode == 1
    [error] = [r for r in yaml.safe_load(strict.stdout)["results"] if r["severity"] == "error"]
    assert "--strict refuses to pass it through" in error["message"]
    rl["functionConfig"]["data"]["strict"] = "maybe"
    assert fn(yaml.safe_dump(rl)).returncode == 1
    del rl["functionConfig"]  # flags apply when there is no functionConfig
    assert {
        i["metadata"]["namespace"] for i in yaml.safe_load(fn(yaml.safe_dump(rl), "-n", "flag-ns").stdout)["items"]
    } == {"flag-ns"}


def test_helm_post_renderer_stream_in_stream_out(tmp_path: Path) -> None:
    chart_output = (
        EXAMPLE.read_text()
        + "---\n# Source: chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {a: b}\n"
    )
    result = fn(chart_output)
    assert result.returncode == 0, result.stderr
    assert result.stdout == run("render", "-", stdin=chart_output).stdout
    kinds = [o["kind"] for o in yaml.safe_load_all(result.stdout)]
    assert "ConfigMap" in kinds and "Deployment" in kinds and "InferenceService" not in kinds
    script = GITOPS / "helm" / "post-renderer.sh"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    via_script = subprocess.run(
        [str(script)], input=chart_output, capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert via_script.returncode == 0, via_script.stderr
    assert via_script.stdout == result.stdout and via_script.stderr == ""
    bad = fn(chart_output.replace("gs://", "ftp://"))
    assert bad.returncode == 1 and bad.stdout == "" and "StorageURI not supported" in bad.stderr
