"""The three images, built and run: read-only root, the image's non-root user, host network, 127.0.0.1 only.

server: V2 health and an infer on a small ONNX model (tests/server/server_models.py) match ONNX Runtime here.
router: a two-step Sequence over two stubs (tests/router/router_stubs.py) passes step 1's answer to step 2.
daemon: renders as the checkout does, and reconciles an InferenceService against the real kube-apiserver
(apiserver.py): the Deployment appears, owned by the isvc, and the isvc's status is written.
Each records its image size and its start-to-ready time (printed at the end of the session).
Skips, saying why, only where no Docker engine can be started (docker_engine.py).
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson
import pytest
import yaml
from apiserver import ROOT, ApiServer
from docker_engine import FIGURES, TAGS, Engine, http

sys.path.insert(0, str(ROOT / "tests" / "server"))
sys.path.insert(0, str(ROOT / "tests" / "router"))

import router_stubs  # noqa: E402
import server_models  # noqa: E402

USERS = {"daemon": 65532, "server": 1000, "router": 65532}
ISVC = ROOT / "examples" / "sklearn-iris.yaml"
CONFIG = ROOT / "deploy" / "overlays" / "standalone" / "inferenceservice-config.yaml"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("name", sorted(TAGS))
def test_image_runs_as_its_numeric_user_without_build_tools(engine: Engine, name: str) -> None:
    tag = engine.image(name)
    config = engine.image_config(tag)
    assert config["User"] == f"{USERS[name]}:{USERS[name]}"
    probe = "import shutil, os; print(shutil.which('gcc'), shutil.which('cc'), os.path.exists('/opt/venv/bin/pip'))"
    out = engine.docker("run", "--rm", "--read-only", "--entrypoint", "python3", tag, "-c", probe).stdout.split()
    assert out == ["None", "None", "False"], out  # no compiler; no pip in the venv (the base's own pip stays)


def test_server_image_answers_v2_health_and_infer(engine: Engine, tmp_path: Path) -> None:
    import onnxruntime as ort

    tag = engine.image("server")
    model = server_models.mlp(tmp_path / "models" / "model.onnx")
    http_port, grpc_port = free_port(), free_port()
    args = ["--model_name=mlp", "--model_dir=/mnt/models", f"--http_port={http_port}", f"--grpc_port={grpc_port}"]
    container = engine.run(tag, *args, "--bind_address=127.0.0.1", mounts={str(model.parent): "/mnt/models"})
    try:
        base = f"http://127.0.0.1:{http_port}"
        ready = container.wait_until(lambda: http(f"{base}/v2/health/ready")[0] == 200, 120, "/v2/health/ready")
        FIGURES.append((engine.tag_of(tag), "start to ready (/v2/health/ready)", f"{ready:.2f} s"))
        assert container.process_uid() == USERS["server"]
        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        request = {"inputs": [{"name": "x", "shape": [2, 4], "datatype": "FP32", "data": x.ravel().tolist()}]}
        status, body = http(f"{base}/v2/models/mlp/infer", orjson.dumps(request))
        assert status == 200, body
        outputs = {o["name"]: o for o in orjson.loads(body)["outputs"]}
        label, scores = ort.InferenceSession(str(model)).run(["label", "scores"], {"x": x})
        assert outputs["label"]["data"] == label.tolist()
        np.testing.assert_allclose(outputs["scores"]["data"], scores.ravel(), rtol=1e-6)
    finally:
        container.remove()


def test_router_image_routes_a_two_step_sequence(engine: Engine) -> None:
    tag = engine.image("router")

    def echo(body: bytes, headers: dict[str, list[str]]) -> tuple[int, bytes]:
        return 200, orjson.dumps({"step2 got": orjson.loads(body)})

    async def case() -> None:
        async with router_stubs.stubs(router_stubs.json_answer({"predictions": [1, 2]}), echo) as (one, two):
            graph = {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [{"serviceUrl": one.url}, {"serviceUrl": two.url, "data": "$response"}],
                    }
                }
            }
            port = free_port()
            args = [f"--graph-json={json.dumps(graph)}", f"--port={port}", "--host=127.0.0.1"]
            container = await asyncio.to_thread(engine.run, tag, *args)
            try:
                base = f"http://127.0.0.1:{port}"
                wait = container.wait_until
                ready = await asyncio.to_thread(wait, lambda: http(f"{base}/readyz")[0] == 200, 60, "/readyz")
                FIGURES.append((engine.tag_of(tag), "start to ready (/readyz)", f"{ready:.2f} s"))
                status, body = await asyncio.to_thread(http, f"{base}/", b'{"instances": [[1, 2, 3, 4]]}')
                assert (status, orjson.loads(body)) == (200, {"step2 got": {"predictions": [1, 2]}})
                assert [orjson.loads(b) for b in one.bodies] == [{"instances": [[1, 2, 3, 4]]}]
                assert container.process_uid() == USERS["router"]
            finally:
                await asyncio.to_thread(container.remove)

    asyncio.run(case())


def test_daemon_image_renders_what_the_checkout_renders(engine: Engine) -> None:
    tag = engine.image("daemon")
    argv = ["run", "--rm", "--read-only", "--network", "none", "-v", f"{ISVC.parent}:/in:ro", tag]
    inside = engine.docker(*argv, "render", f"/in/{ISVC.name}").stdout
    here = subprocess.run(
        [Path(sys.executable).with_name("kserve-compile"), "render", str(ISVC)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert inside == here and "kind: Deployment" in inside
    valid = engine.docker(*argv, "validate", f"/in/{ISVC.name}")  # the bundled strict schemas are in the image
    assert "valid: 1 input documents" in valid.stdout
    walks = "import kserve_compile.emit._yaml_c, kserve_compile._datacopy_c"  # the C walks were built
    engine.docker("run", "--rm", "--read-only", "--entrypoint", "python3", tag, "-c", walks)


def kubeconfig_dir(apiserver: ApiServer, tmp_path: Path) -> Path:
    """A directory to mount at /kube: the kubeconfig (token auth) and the apiserver's CA, readable by any user."""
    kube = tmp_path / "kube"
    kube.mkdir(mode=0o755)
    (kube / "ca.crt").write_bytes(apiserver.ca_file.read_bytes())
    (kube / "config").write_text(apiserver.kubeconfig_for(apiserver.server, "/kube/ca.crt"))
    for path in (kube / "ca.crt", kube / "config"):
        path.chmod(0o644)
    return kube


def test_daemon_image_reconciles_an_isvc_against_a_real_apiserver(
    engine: Engine, controllers: ApiServer, crds: list[dict], tmp_path: Path
) -> None:
    tag = engine.image("daemon")
    controllers.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kserve"}})
    controllers.apply_file(CONFIG)
    ns = controllers.create_namespace("images")
    isvc = yaml.safe_load(ISVC.read_text())
    isvc["metadata"]["namespace"] = ns
    # no HorizontalPodAutoscaler: Kubernetes 1.20 serves autoscaling/v2beta2, not the autoscaling/v2 KServe writes
    isvc["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] = "external"
    uid = controllers.apply(isvc)["metadata"]["uid"]
    health, metrics = free_port(), free_port()
    args = ["daemon", "--kubeconfig=/kube/config", "--no-leader-elect", f"--namespaces={ns}"]
    args += [f"--health-addr=127.0.0.1:{health}", f"--metrics-addr=127.0.0.1:{metrics}"]
    container = engine.run(tag, *args, mounts={str(kubeconfig_dir(controllers, tmp_path)): "/kube"})
    try:
        ready = container.wait_until(lambda: http(f"http://127.0.0.1:{health}/readyz")[0] == 200, 120, "/readyz")
        FIGURES.append((engine.tag_of(tag), "start to ready (/readyz)", f"{ready:.2f} s"))
        assert container.process_uid() == USERS["daemon"]

        def deployment() -> dict | None:
            return controllers.get("apps/v1", "Deployment", "sklearn-iris-predictor", ns)

        def status() -> dict:
            found = controllers.get("serving.kserve.io/v1beta1", "InferenceService", "sklearn-iris", ns) or {}
            return dict(found.get("status") or {})

        container.wait_until(lambda: deployment() is not None, 60, "the predictor Deployment")
        owners = deployment()["metadata"]["ownerReferences"]  # type: ignore[index]
        assert [(o["kind"], o["uid"], o.get("controller")) for o in owners] == [("InferenceService", uid, True)]
        container.wait_until(lambda: status().get("observedGeneration") == 1, 60, "the isvc status")
        conditions = {c["type"]: c for c in status()["conditions"]}
        assert {"PredictorReady", "Ready"} <= set(conditions), conditions
        assert "ApplyFailed" not in {c.get("reason") for c in conditions.values()}, conditions

        # deleting the isvc: the garbage collector removes what the daemon created (owner references are right)
        assert controllers.delete("serving.kserve.io/v1beta1", "InferenceService", "sklearn-iris", ns) == 200
        controllers.wait_for(lambda: deployment() is None, 60, "the GC to delete the Deployment")
    finally:
        container.remove()
