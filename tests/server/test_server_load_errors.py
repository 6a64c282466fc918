"""Repository loads that can never succeed are 4xx, those that may succeed later 503 — REST and gRPC alike.

Triton answers a failed load with its core's INVALID_ARG: 400 over HTTP (``{"error": "load failed for model 'm':
..."}``), INVALID_ARGUMENT over gRPC. An unknown model is 404 / NOT_FOUND here (Triton: 500 / INTERNAL "failed to
poll from model repository", which would read as a server fault). Out of memory, out of open files and a server
that is shutting down are 503 / UNAVAILABLE: asked again later, the load works.
"""

from __future__ import annotations

import asyncio
import os
import resource
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
import server_models
import tritonclient.grpc as grpcclient
from conftest import RunningServer, start_server, stop_server
from tritonclient.utils import InferenceServerException

from server.config import parse_options
from server.rest import build_app
from server.state import ServerState

NEVER = ["corrupt", "future_opset", "linked_dir", "linked_file"]
needs_prlimit = pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="resource.prlimit is Linux-only")


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("load-errors")
    root = base / "models"
    server_models.mlp(root / "ok" / "model.onnx")
    (root / "corrupt").mkdir()
    (root / "corrupt" / "model.onnx").write_bytes(b"this is not onnx")
    server_models.future_opset(root / "future_opset" / "model.onnx")
    server_models.mlp(base / "outside" / "model.onnx")
    (root / "linked_dir").symlink_to(base / "outside")
    (root / "linked_file").mkdir()
    (root / "linked_file" / "model.onnx").symlink_to(base / "outside" / "model.onnx")
    return root


@pytest.fixture(scope="module")
def running(repository: Path) -> Iterator[RunningServer]:
    started = start_server(repository, repository.parent / "server.log")
    yield started
    stop_server(started)


@pytest.fixture()
def clients(running: RunningServer) -> Iterator[tuple[httpx.Client, grpcclient.InferenceServerClient]]:
    """Connected before a test lowers the server's limits: those calls ride on open connections."""
    rest = httpx.Client(base_url=running.http, timeout=60)
    assert rest.get("/v2/health/live").status_code == 200
    rpc = grpcclient.InferenceServerClient(running.grpc)
    assert rpc.is_server_live()
    yield rest, rpc
    rpc.close()
    rest.close()


def grpc_load_error(rpc: grpcclient.InferenceServerClient, name: str) -> tuple[str, str]:
    with pytest.raises(InferenceServerException) as caught:
        rpc.load_model(name)
    return caught.value.status(), caught.value.message()


@pytest.mark.parametrize("name", NEVER)
def test_a_load_that_can_never_succeed_is_400_and_invalid_argument(clients, repository: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    rest, rpc = clients
    response = rest.post(f"/v2/repository/models/{name}/load")
    assert response.status_code == 400, response.text
    body = response.json()
    assert list(body) == ["error"] and body["error"].startswith(f"load failed for model '{name}': ")
    assert str(repository.parent) not in response.text
    status, message = grpc_load_error(rpc, name)
    assert status == str(grpc.StatusCode.INVALID_ARGUMENT) and message == body["error"]
    index = {row["name"]: row for row in rest.post("/v2/repository/index").json()}
    assert index[name]["state"] == "UNAVAILABLE" and index[name]["reason"] in body["error"]


def test_what_makes_a_load_impossible_is_named(clients) -> None:  # type: ignore[no-untyped-def]
    rest, _ = clients
    errors = {name: rest.post(f"/v2/repository/models/{name}/load").json()["error"] for name in NEVER}
    assert "corrupt/model.onnx" in errors["corrupt"] and "INVALID_PROTOBUF" in errors["corrupt"]
    assert "Opset 999" in errors["future_opset"]
    assert "linked_dir is a link to a directory outside the model repository" in errors["linked_dir"]
    assert "linked_file/model.onnx is a link to a file outside the model repository" in errors["linked_file"]


def test_loading_an_unknown_model_is_404_and_not_found(clients) -> None:  # type: ignore[no-untyped-def]
    rest, rpc = clients
    for name in ("nope", "..", "ok..", "-x"):
        response = rest.post(f"/v2/repository/models/{name}/load")
        assert response.status_code == 404 and list(response.json()) == ["error"], (name, response.text)
    assert "Model with name nope does not exist." in rest.post("/v2/repository/models/nope/load").json()["error"]
    status, message = grpc_load_error(rpc, "nope")
    assert status == str(grpc.StatusCode.NOT_FOUND) and "nope does not exist" in message


def _limit(pid: int, which: int, soft: int) -> tuple[int, int]:
    previous = resource.prlimit(pid, which)
    resource.prlimit(pid, which, (soft, previous[1]))
    return previous


@needs_prlimit
def test_a_load_short_of_memory_is_503_and_works_once_memory_is_back(clients, running, repository: Path) -> None:  # type: ignore[no-untyped-def]
    rest, rpc = clients
    server_models.heavy(repository / "heavy" / "model.onnx", megabytes=96)  # after startup: not loaded yet
    status = Path(f"/proc/{running.process.pid}/status").read_text()
    address_space = int(next(line for line in status.splitlines() if line.startswith("VmSize:")).split()[1]) * 1024
    previous = _limit(running.process.pid, resource.RLIMIT_AS, address_space + (32 << 20))
    try:
        response = rest.post("/v2/repository/models/heavy/load")
        grpc_status, message = grpc_load_error(rpc, "heavy")
    finally:
        resource.prlimit(running.process.pid, resource.RLIMIT_AS, previous)
    assert response.status_code == 503 and "bad_alloc" in response.json()["error"], response.text
    assert grpc_status == str(grpc.StatusCode.UNAVAILABLE) and "bad_alloc" in message
    assert rest.post("/v2/repository/models/heavy/load").status_code == 200
    assert rest.post("/v2/repository/models/heavy/unload").status_code == 200


@needs_prlimit
def test_a_load_short_of_open_files_is_503_and_works_once_files_are_back(clients, running) -> None:  # type: ignore[no-untyped-def]
    rest, rpc = clients
    pid = running.process.pid
    in_use = {int(fd) for fd in os.listdir(f"/proc/{pid}/fd")}
    lowest_free = min(set(range(len(in_use) + 1)) - in_use)
    previous = _limit(pid, resource.RLIMIT_NOFILE, lowest_free)  # no new descriptor, open connections stay
    try:
        response = rest.post("/v2/repository/models/ok/load")
        grpc_status, message = grpc_load_error(rpc, "ok")
    finally:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, previous)
    assert response.status_code == 503 and "system error number 24" in response.json()["error"], response.text
    assert grpc_status == str(grpc.StatusCode.UNAVAILABLE)
    assert rest.get("/v2/models/ok/ready").json()["ready"]  # the failed reload left the serving instance
    assert rest.post("/v2/repository/models/ok/load").status_code == 200


def test_a_load_while_the_server_shuts_down_is_503(tmp_path: Path) -> None:
    server_models.mlp(tmp_path / "m" / "model.onnx")
    state = ServerState(parse_options(["--model_dir", str(tmp_path), "--enable_grpc", "false"]))
    building, release = threading.Event(), threading.Event()
    build = state.repository.build

    def held_build(name: str):  # type: ignore[no-untyped-def]
        building.set()
        release.wait(30)
        return build(name)

    async def scenario() -> tuple[httpx.Response, httpx.Response]:
        state.start()
        transport = httpx.ASGITransport(app=build_app(state))
        async with httpx.AsyncClient(transport=transport, base_url="http://server") as client:
            state.repository.build = held_build  # type: ignore[method-assign]
            during = asyncio.create_task(client.post("/v2/repository/models/m/load"))
            await asyncio.to_thread(building.wait, 30)
            state.stop()  # while that load builds
            release.set()
            after = await client.post("/v2/repository/models/m/load")
            return await during, after

    during, after = asyncio.run(scenario())
    for response in (during, after):
        assert response.status_code == 503 and "the server is shutting down" in response.json()["error"]
    assert "m" not in state.repository.models and "m" not in state.repository.failures
