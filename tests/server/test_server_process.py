"""The server as shipped: single-model layout, command-line errors, access log, runtime and image files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import server_models
import yaml
from conftest import ROOT, start_server, stop_server

from server.config import parse_options


def test_single_model_dir_access_log_and_no_grpc(tmp_path: Path) -> None:
    server_models.mlp(tmp_path / "models" / "model.onnx")
    running = start_server(
        tmp_path / "models",
        tmp_path / "log",
        "--enable_grpc",
        "false",
        "--access_log_format",
        "%(m)s %(U)s %(s)s",
        "--inline_inference_us",
        "0",  # every run through the inference threads
        model_name="fraud",
    )
    try:
        assert httpx.get(running.http + "/v1/models").json() == {"models": ["fraud"]}
        body = {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
        assert httpx.post(running.http + "/v2/models/fraud/infer", json=body).status_code == 200
    finally:
        stop_server(running)
    log = running.output()
    assert "POST /v2/models/fraud/infer 200" in log
    assert "gRPC listening" not in log


def test_bad_model_dir_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server", "--model_dir", str(tmp_path / "absent"), "--http_port", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "no such directory" in done.stderr and "Traceback" not in done.stderr


def test_runtime_renders_onto_this_server() -> None:
    runtime = yaml.safe_load((ROOT / "runtimes" / "kserve-onnxserver.yaml").read_text())
    assert runtime["kind"] == "ClusterServingRuntime" and runtime["metadata"]["name"] == "kserve-onnxserver"
    assert runtime["metadata"]["annotations"]["serving.kserve.io/server-type"] == "onnxserver"
    assert runtime["spec"]["supportedModelFormats"] == [
        {"name": "onnx", "version": "1", "autoSelect": True, "priority": 2}
    ]
    assert runtime["spec"]["protocolVersions"] == ["v1", "v2", "grpc-v2"]
    (container,) = runtime["spec"]["containers"]
    assert container["image"] == "ghcr.io/kserve-compile/onnxserver:latest" and "ports" not in container
    args = [a.replace("{{.Name}}", "my-isvc") for a in container["args"]]
    options = parse_options(args)
    assert (options.model_name, options.model_dir, options.http_port) == ("my-isvc", "/mnt/models", 8080)
    dockerfile = (ROOT / "server" / "Dockerfile").read_text()
    assert "onnxruntime-gpu" in dockerfile and container["image"] in dockerfile
    assert 'ENTRYPOINT ["python3", "-m", "server"]' in dockerfile
