"""Slow and hostile HTTP clients: header size limit (431), header and body read timeouts (408), a cap on
open connections that keeps the server reachable, and large bodies decoded off the event loop."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import orjson
import pytest
import server_models
from conftest import start_server, stop_server

from server.config import Options
from server.errors import InvalidInput
from server.hotpath import Inference
from server.state import ServerState


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("strict")
    server_models.mlp(root / "models" / "model.onnx")
    running = start_server(
        root / "models",
        root / "log",
        "--enable_grpc",
        "false",
        "--header_timeout",
        "1s",
        "--body_timeout",
        "1500ms",
        "--max_header_size",
        "8192",
    )
    yield running
    stop_server(running)


def _read_until_closed(sock: socket.socket, limit: float) -> tuple[bytes, float]:
    started = time.monotonic()
    sock.settimeout(limit)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data, time.monotonic() - started


def test_oversized_headers_get_431(strict) -> None:  # type: ignore[no-untyped-def]
    with socket.create_connection(("127.0.0.1", strict.http_port)) as sock:
        sock.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 100_000)
        data, _ = _read_until_closed(sock, 10)
    assert data.startswith(b"HTTP/1.1 431"), data[:100]
    assert b"request headers exceed 8192 bytes" in data
    small = httpx.get(strict.http + "/v2/health/live", headers={"X-Small": "a" * 4000})
    assert small.status_code == 200


def test_slow_headers_time_out_with_408(strict) -> None:  # type: ignore[no-untyped-def]
    with socket.create_connection(("127.0.0.1", strict.http_port)) as sock:
        sock.sendall(b"GET /v2/health/live HTTP/1.1\r\nHo")
        data, elapsed = _read_until_closed(sock, 10)
    assert data.startswith(b"HTTP/1.1 408") and elapsed < 5, (data[:60], elapsed)
    with socket.create_connection(("127.0.0.1", strict.http_port)) as silent:  # connects, sends nothing
        data, elapsed = _read_until_closed(silent, 10)
    assert data.startswith(b"HTTP/1.1 408") and elapsed < 5


def test_trickled_headers_time_out_too(strict) -> None:  # type: ignore[no-untyped-def]
    with socket.create_connection(("127.0.0.1", strict.http_port)) as sock:
        started = time.monotonic()
        closed = False
        for byte in b"GET /v2/health/live HTTP/1.1\r\nX-Slow: " + b"a" * 40:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.1)
    assert closed and time.monotonic() - started < 4


def test_stalled_body_times_out_with_408(strict) -> None:  # type: ignore[no-untyped-def]
    with socket.create_connection(("127.0.0.1", strict.http_port)) as sock:
        sock.sendall(b'POST /v2/models/model/infer HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n{"inputs"')
        data, elapsed = _read_until_closed(sock, 10)
    assert b"408" in data.split(b"\r\n")[0] and elapsed < 5, (data[:80], elapsed)
    # a slow but steady body is fine: each read restarts the timer
    body = orjson.dumps({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]})
    with socket.create_connection(("127.0.0.1", strict.http_port)) as sock:
        sock.sendall(
            b"POST /v2/models/model/infer HTTP/1.1\r\nHost: t\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
        )
        for start in range(0, len(body), len(body) // 3 + 1):
            time.sleep(0.8)
            sock.sendall(body[start : start + len(body) // 3 + 1])
        sock.settimeout(10)
        assert sock.recv(100).startswith(b"HTTP/1.1 200")


def test_slow_clients_cannot_take_every_descriptor(tmp_path: Path) -> None:
    """300 clients that never finish their headers, against a 256-descriptor server: it stays reachable."""
    server_models.mlp(tmp_path / "models" / "model.onnx")
    running = start_server(tmp_path / "models", tmp_path / "log", "--enable_grpc", "false", nofile=256)
    slow: list[socket.socket] = []
    try:
        for _ in range(300):
            try:
                sock = socket.create_connection(("127.0.0.1", running.http_port), timeout=5)
                sock.sendall(b"GET /v2/health/live HTTP/1.1\r\nX-Slow: ")
                slow.append(sock)
            except OSError:
                pass
        time.sleep(0.5)
        answers = [httpx.get(running.http + "/v2/health/live", timeout=5).status_code for _ in range(3)]
    finally:
        for sock in slow:
            sock.close()
        stop_server(running)
    assert answers == [200, 200, 200]
    assert "Traceback" not in running.output()


def test_large_bodies_are_decoded_off_the_event_loop(tmp_path: Path) -> None:
    server_models.mlp(tmp_path / "model.onnx")
    options = Options(
        model_dir=str(tmp_path), warmup=False, large_request_bytes=1000, inline_inference_us=1e9, process_decode_bytes=0
    )
    state = ServerState(options)
    state.load_all()
    model = state.repository.get("model")
    inference = Inference(state)
    threads: list[str] = []
    from server import codec

    original = codec.decode_v2

    def recording(*args):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return original(*args)

    small = orjson.dumps({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]})
    large = orjson.dumps({"inputs": [{"name": "x", "shape": [100, 4], "datatype": "FP32", "data": [0.5] * 400}]})

    async def both() -> None:
        state.start()
        try:
            await inference.v2(model, small, None, None)
            await inference.v2(model, large, None, None)
        finally:
            state.stop()

    codec.decode_v2 = recording
    try:
        asyncio.run(both())
    finally:
        codec.decode_v2 = original
    assert threads[0] == "MainThread" and threads[1] != "MainThread", threads
    assert model.stats.inference_count == 2 and model.stats.success_count == 2
    assert os.environ.get("ONNXSERVER_OPTIONS") is None


def test_very_large_json_bodies_are_decoded_in_a_helper_process(tmp_path: Path) -> None:
    server_models.mlp(tmp_path / "model.onnx")
    options = Options(model_dir=str(tmp_path), warmup=False, large_request_bytes=100, process_decode_bytes=1000)
    state = ServerState(options)
    state.load_all()
    model = state.repository.get("model")
    inference = Inference(state)
    x = np.arange(400, dtype=np.float32).reshape(100, 4) / 7
    good = orjson.dumps(
        {"inputs": [{"name": "x", "shape": [100, 4], "datatype": "FP32", "data": x.reshape(-1).tolist()}]}
    )
    bad = orjson.dumps({"inputs": [{"name": "x", "shape": [100, 4], "datatype": "FP32", "data": [1.5] * 399}]})

    async def run() -> tuple[bytes, str]:
        state.start()
        try:
            payload, _ = await inference.v2(model, good, None, "r1")
            with pytest.raises(InvalidInput) as caught:
                await inference.v2(model, bad, None, "r2")
            assert state.decode_pool.started
            return payload, caught.value.message
        finally:
            state.stop()

    payload, message = asyncio.run(run())
    expected = model.run({"x": x}, ["scores"])[0]
    scores = next(o for o in orjson.loads(payload)["outputs"] if o["name"] == "scores")
    np.testing.assert_allclose(scores["data"], expected.reshape(-1), rtol=1e-6)
    assert "needs 400 elements, data has 399" in message
    assert model.stats.fail_count == 1 and model.stats.failures == {"REJECTED": 1}
