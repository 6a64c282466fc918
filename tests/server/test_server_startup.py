"""Startup: a repository serves every valid model and reports the bad ones; whatever stops the server is one
line naming it and a non-zero exit, never a traceback; no port is shared with another server."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import httpx
import server_models
from conftest import ROOT, RunningServer, free_port, start_server, stop_server


def run_server(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "server", "--bind_address", "127.0.0.1", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def assert_one_line_error(done: subprocess.CompletedProcess, *needles: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    errors = [line for line in done.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1, done.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]


def test_repository_serves_valid_models_and_reports_bad_ones(tmp_path: Path) -> None:
    root = tmp_path / "models"
    server_models.mlp(root / "good" / "model.onnx")
    (root / "corrupt").mkdir()
    (root / "corrupt" / "model.onnx").write_bytes(b"this is not onnx")
    server_models.mlp(tmp_path / "elsewhere" / "model.onnx")
    (root / "escape").mkdir()
    (root / "escape" / "model.onnx").symlink_to(tmp_path / "elsewhere" / "model.onnx")
    running = start_server(root, tmp_path / "log", "--enable_grpc", "false")
    try:
        index = {row["name"]: row for row in httpx.post(running.http + "/v2/repository/index").json()}
        infer = httpx.post(running.http + "/v2/models/corrupt/infer", json={"inputs": []})
        good = httpx.post(
            running.http + "/v2/models/good/infer",
            json={"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]},
        )
    finally:
        stop_server(running)
    assert good.status_code == 200
    assert index["good"]["state"] == "READY"
    assert index["corrupt"]["state"] == "UNAVAILABLE" and "corrupt/model.onnx" in index["corrupt"]["reason"]
    assert index["escape"]["state"] == "UNAVAILABLE" and "outside the model repository" in index["escape"]["reason"]
    assert infer.status_code == 503 and str(tmp_path) not in infer.text
    log = running.output()
    assert "Traceback" not in log
    assert sum("model corrupt: UNAVAILABLE" in line for line in log.splitlines()) == 1
    assert sum("model escape: UNAVAILABLE" in line for line in log.splitlines()) == 1
    summary = [line for line in log.splitlines() if "model good: version 1 READY on " in line]
    assert len(summary) == 1 and "ExecutionProvider; inputs x:FP32[-1,4]; outputs label:INT64[-1]" in summary[0]


def test_single_bad_model_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "corrupt").mkdir()
    (tmp_path / "corrupt" / "model.onnx").write_bytes(b"this is not onnx")
    done = run_server(
        "--model_dir", str(tmp_path / "corrupt"), "--http_port", str(free_port()), "--enable_grpc", "false"
    )
    assert_one_line_error(done, "model.onnx", "Protobuf parsing failed")
    server_models.mlp(tmp_path / "elsewhere.onnx")
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "model.onnx").symlink_to(tmp_path / "elsewhere.onnx")
    done = run_server(
        "--model_dir", str(tmp_path / "linked"), "--http_port", str(free_port()), "--enable_grpc", "false"
    )
    assert_one_line_error(done, "model.onnx is a link to a file outside the directory")
    done = run_server("--model_dir", str(tmp_path / "absent"), "--http_port", str(free_port()))
    assert_one_line_error(done, "absent: no such directory")
    # with worker processes too: checked once in the parent, not a traceback per worker
    done = run_server("--model_dir", str(tmp_path / "corrupt"), "--http_port", str(free_port()), "--workers", "2")
    assert_one_line_error(done, "model.onnx", "Protobuf parsing failed")


def test_ports_in_use_are_one_line_errors(tmp_path: Path, server: RunningServer) -> None:
    server_models.mlp(tmp_path / "m" / "model.onnx")
    # the session server holds its gRPC port: a second server must not share it
    done = run_server(
        "--model_dir", str(tmp_path / "m"), "--http_port", str(free_port()), "--grpc_port", str(server.grpc_port)
    )
    assert_one_line_error(done, f"--grpc_port {server.grpc_port}", "in use")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_server("--model_dir", str(tmp_path / "m"), "--http_port", str(port), "--enable_grpc", "false")
    assert_one_line_error(done, f"--http_port {port}", "in use")
    assert httpx.get(server.http + "/v2/health/ready").status_code == 200
