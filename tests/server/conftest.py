"""Model server fixtures: models built at test time, servers started as subprocesses on free ports.

The server runs in its own process: that is how it ships, and it keeps its gRPC messages away from
tritonclient's in this interpreter.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import server_models

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RunningServer:
    http: str
    grpc: str
    http_port: int
    grpc_port: int
    process: subprocess.Popen
    log: Path

    def output(self) -> str:
        return self.log.read_text()


def start_server(
    model_dir: Path, log: Path, *extra: str, model_name: str = "model", nofile: int | None = None
) -> RunningServer:
    http_port, grpc_port = free_port(), free_port()
    # nofile: run the server under that open-file limit (soft and hard)
    launcher = ["prlimit", f"--nofile={nofile}:{nofile}", sys.executable] if nofile else [sys.executable]
    args = [
        *launcher,
        "-m",
        "server",
        "--model_dir",
        str(model_dir),
        "--model_name",
        model_name,
        "--http_port",
        str(http_port),
        "--grpc-port",
        str(grpc_port),  # dashes are accepted too
        "--bind_address",
        "127.0.0.1",
        *extra,
    ]
    handle = log.open("w")
    process = subprocess.Popen(
        args, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    running = RunningServer(
        f"http://127.0.0.1:{http_port}", f"127.0.0.1:{grpc_port}", http_port, grpc_port, process, log
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{running.output()}")
        try:
            if httpx.get(running.http + "/v2/health/ready", timeout=1).status_code == 200:
                return running
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    stop_server(running)
    raise RuntimeError(f"server did not become ready:\n{running.output()}")


def stop_server(running: RunningServer) -> None:
    running.process.terminate()
    try:
        running.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        running.process.kill()
        running.process.wait()


@pytest.fixture(scope="session")
def repository_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repository")
    server_models.mlp(root / "mlp" / "model.onnx")
    server_models.identity_all_types(root / "types" / "3" / "model.onnx")
    server_models.mlp(root / "types" / "1" / "model.onnx")  # an older version, not served
    server_models.two_inputs(root / "add" / "model.onnx")
    server_models.failing(root / "failing" / "model.onnx")
    server_models.iris_classifier(root / "iris" / "model.onnx")
    return root


@pytest.fixture(scope="session")
def iris_x(repository_dir: Path) -> np.ndarray:
    from sklearn.datasets import load_iris

    return load_iris(return_X_y=True)[0].astype(np.float32)


@pytest.fixture(scope="session")
def server(repository_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    log = tmp_path_factory.mktemp("logs") / "repository-server.log"
    running = start_server(repository_dir, log, "--max_request_size", str(1 << 20))
    yield running
    stop_server(running)


@pytest.fixture(scope="session")
def http(server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.http, timeout=30) as client:
        yield client


def reference(model_path: Path, feeds: dict[str, np.ndarray], outputs: list[str] | None = None) -> list[np.ndarray]:
    """ONNX Runtime in this process: the expected outputs."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    return session.run(outputs, feeds)
