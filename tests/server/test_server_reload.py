"""Repository operations under traffic: a reload swaps only a ready instance, in-flight requests finish on
the instance they started on, an unloaded model answers 404 — never a 500."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from pathlib import Path

import httpx
import numpy as np
import pytest
import server_models
from conftest import start_server, stop_server
from starlette.types import ASGIApp

from server.config import parse_options
from server.errors import ModelNotFound
from server.main import create_app
from server.model import SessionSettings
from server.providers import CPU
from server.repository import ModelRepository
from server.state import ServerState

SETTINGS = SessionSettings(providers=[CPU], warmup=False)


def test_replaced_and_unloaded_instances_finish_their_requests(tmp_path: Path) -> None:
    server_models.mlp(tmp_path / "m" / "model.onnx")
    repo = ModelRepository(tmp_path, "unused", SETTINGS)
    repo.load("m")
    feeds = {"x": np.ones((1, 4), np.float32)}
    before = repo.get("m")
    repo.load("m")  # a reload while `before` is held by a request
    assert repo.get("m") is not before
    assert before.run(feeds, ["label"])[0].shape == (1,)
    held = repo.get("m")
    repo.unload("m")
    assert held.run(feeds, ["label"])[0].shape == (1,)
    with pytest.raises(ModelNotFound):
        repo.get("m")


def _traffic(url: str, body: dict, stop: threading.Event, statuses: list[int]) -> None:
    with httpx.Client(timeout=30) as client:
        while not stop.is_set():
            statuses.append(client.post(url, json=body).status_code)


def test_reload_and_unload_under_traffic_never_500(tmp_path: Path) -> None:
    server_models.slow(tmp_path / "models" / "slow" / "model.onnx")
    running = start_server(
        tmp_path / "models", tmp_path / "log", "--enable_grpc", "false", "--inline_inference_us", "0"
    )
    body = {"inputs": [{"name": "x", "shape": [16, 256], "datatype": "FP32", "data": [0.5] * (16 * 256)}]}
    url = running.http + "/v2/models/slow/infer"
    stop = threading.Event()
    statuses: list[int] = []
    clients = [threading.Thread(target=_traffic, args=(url, body, stop, statuses)) for _ in range(4)]
    try:
        for thread in clients:
            thread.start()
        with httpx.Client(base_url=running.http, timeout=60) as admin:
            for _ in range(8):
                assert admin.post("/v2/repository/models/slow/load").status_code == 200
            served_during_reloads = len(statuses)
            assert set(statuses) == {200}, sorted(set(statuses))
            assert admin.post("/v2/repository/models/slow/unload").status_code == 200
            assert admin.post(url, json=body).status_code == 404
            assert admin.post("/v2/repository/models/slow/load").status_code == 200
    finally:
        stop.set()
        for thread in clients:
            thread.join()
        stop_server(running)
    assert served_during_reloads > 8
    assert set(statuses) <= {200, 404, 503}, sorted(set(statuses))
    assert "is unloaded" not in running.output()


async def _started(app: ASGIApp) -> asyncio.Task:
    """Run the app's lifespan startup as uvicorn does; the returned task waits for shutdown."""
    answers: asyncio.Queue = asyncio.Queue()
    started = False

    async def receive() -> dict:
        nonlocal started
        if started:
            await asyncio.Event().wait()  # shutdown never comes: the test cancels the task
        started = True
        return {"type": "lifespan.startup"}

    async def lifespan() -> None:
        await app({"type": "lifespan"}, receive, answers.put)

    task = asyncio.create_task(lifespan())
    assert (await answers.get())["type"] == "lifespan.startup.complete"
    return task


def test_startup_freezes_the_heap_and_an_unload_thaws_it(tmp_path: Path) -> None:
    """Frozen objects are out of the cyclic collector's reach: an unloaded, batched model must still be collected
    once it leaves the repository, its batcher with it."""
    server_models.mlp(tmp_path / "m" / "model.onnx")
    options = parse_options(["--model_dir", str(tmp_path), "--enable_grpc", "false", "--max_batch_size", "4"])
    state = ServerState(options)
    app = create_app(options, state)

    async def scenario() -> tuple[int, int, bool]:
        lifespan = await _started(app)
        frozen = gc.get_freeze_count()
        model = weakref.ref(state.repository.get("m"))
        served = model()
        assert served is not None and state.batcher_for(served) is not None
        batcher = weakref.ref(state.batchers["m"])
        del served
        await state.unload("m")
        assert "m" not in state.batchers
        thawed = gc.get_freeze_count()
        gc.collect()
        lifespan.cancel()
        state.stop()
        return frozen, thawed, model() is None and batcher() is None

    try:
        frozen, thawed, collected = asyncio.run(scenario())
    finally:
        gc.unfreeze()
    assert frozen > 1000, frozen  # the imports, the session and the app
    assert thawed == 0
    assert collected, "the unloaded model was not collected"
