"""Repository operations under traffic: a reload swaps only a ready instance, in-flight requests finish on
the instance they started on, an unloaded model answers 404 — never a 500."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import numpy as np
import pytest
import server_models
from conftest import start_server, stop_server

from server.errors import ModelNotFound
from server.model import SessionSettings
from server.providers import CPU
from server.repository import ModelRepository

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
