"""The inference routes as plain ASGI, in front of the Starlette router.

``POST /v2/models/{name}/infer`` and ``POST /v1/models/{name}:predict`` are most of the traffic;
answering them here skips Starlette's routing, Request/Response objects and exception wrappers,
which on a small model cost as much as the whole Open Inference Protocol validation. Every other
path (and the versioned infer route) goes to the Starlette app, which calls the same functions.
"""

from __future__ import annotations

import asyncio
import logging
import time

from starlette.types import ASGIApp, Receive, Scope, Send

from server import codec, metrics
from server.errors import PayloadTooLarge, ServerError, internal_error_message
from server.model import OnnxModel
from server.state import ServerState
from server.stats import OTHER

logger = logging.getLogger("server")
trace = logging.getLogger("server.trace")

_JSON = b"application/json"
_BINARY = b"application/octet-stream"
_V2_PREFIX, _V2_SUFFIX = "/v2/models/", "/infer"
_V1_PREFIX, _V1_SUFFIX = "/v1/models/", ":predict"


class Inference:
    """The two inference endpoints, independent of the web framework.

    Bodies from ``--large_request_bytes`` up are decoded (and their results encoded) on the default
    executor, so one big or malformed request cannot hold the event loop for the others; very large JSON
    bodies go to a helper process (server.decode_pool).
    """

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.latency_log = state.options.enable_latency_logging
        self.large = state.options.large_request_bytes
        self.pool = state.decode_pool

    def _offload(self, fn, *args) -> asyncio.Future:
        return asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def v2(
        self, model: OnnxModel, body: bytes, header_length: str | None, request_id: str | None
    ) -> tuple[bytes, int | None]:
        started = time.perf_counter()
        try:
            if len(body) < self.large:
                decoded = codec.decode_v2(model, body, header_length)
            elif self.pool.wants(model, len(body), header_length):
                decoded = await self.pool.decode_v2(model, body)
            else:
                decoded = await self._offload(codec.decode_v2, model, body, header_length)
            decoded_at = time.perf_counter()
            results = await self.state.infer(model, decoded.feeds, decoded.outputs)
            predicted_at = time.perf_counter()
            if len(body) < self.large:  # large answers come from large requests
                answer = codec.encode_v2(model, decoded, results)
            else:
                answer = await self._offload(codec.encode_v2, model, decoded, results)
        except Exception as exc:
            model.stats.failure(getattr(exc, "reason", OTHER), time.perf_counter() - started)
            raise
        self._observe(model, decoded.feeds, request_id, started, decoded_at, predicted_at)
        return answer

    async def v1(self, model: OnnxModel, body: bytes, request_id: str | None) -> bytes:
        started = time.perf_counter()
        try:
            if len(body) < self.large:
                feeds = codec.decode_v1(model, body)
            elif self.pool.wants(model, len(body), None):
                feeds = await self.pool.decode_v1(model, body)
            else:
                feeds = await self._offload(codec.decode_v1, model, body)
            decoded_at = time.perf_counter()
            results = await self.state.infer(model, feeds, model.output_names[:1])
            predicted_at = time.perf_counter()
            if len(body) < self.large:
                answer = codec.encode_v1(results[0])
            else:
                answer = await self._offload(codec.encode_v1, results[0])
        except Exception as exc:
            model.stats.failure(getattr(exc, "reason", OTHER), time.perf_counter() - started)
            raise
        self._observe(model, feeds, request_id, started, decoded_at, predicted_at)
        return answer

    def _observe(
        self, model: OnnxModel, feeds: dict, request_id: str | None, started: float, decoded: float, predicted: float
    ) -> None:
        observe(model, feeds, self.state.batcher_for(model) is not None, started, decoded, predicted)
        if self.latency_log:
            done = time.perf_counter()
            trace.info(
                "requestId: %s, preprocess_ms: %.3f, predict_ms: %.3f, postprocess_ms: %.3f",
                request_id or "N.A.",
                (decoded - started) * 1e3,
                (predicted - decoded) * 1e3,
                (done - predicted) * 1e3,
            )


def observe(model: OnnxModel, feeds: dict, batched: bool, started: float, decoded: float, predicted: float) -> None:
    """A successful request: KServe's latency histograms and Triton's statistics (``batched``: through a batcher)."""
    done = time.perf_counter()
    timers = metrics.timers(model.name)
    timers.pre.observe(decoded - started)
    timers.predict.observe(predicted - decoded)
    timers.post.observe(done - predicted)
    rows = 1
    if batched:  # Triton counts batch rows as inferences when the model batches
        rows = next(iter(feeds.values())).shape[0]
    model.stats.success(rows, started, decoded, predicted, done)


def log_failure(exc: Exception, request_id: str | None, where: str) -> tuple[int, str]:
    """One warning line per failed request; returns the status and the message for the client."""
    if isinstance(exc, ServerError):
        logger.warning("request %s %s failed: %d %s", request_id or "-", where, exc.status, exc.message)
        return exc.status, exc.message
    logger.exception("request %s %s failed: unhandled %s", request_id or "-", where, type(exc).__name__)
    return 500, internal_error_message(request_id)


async def read_body(receive: Receive, declared: bytes | None, limit: int) -> bytes:
    """The whole request body; PayloadTooLarge past ``limit`` bytes, checked before buffering."""
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"request body of {declared.decode()} bytes exceeds the limit of {limit} bytes")
    message = await receive()
    body = message.get("body", b"")
    if not message.get("more_body", False):
        if len(body) > limit:
            raise PayloadTooLarge(f"request body exceeds the limit of {limit} bytes")
        return body
    chunks = [body]
    size = len(body)
    while message.get("more_body", False):
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ServerError("client disconnected")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


class FastPath:
    def __init__(self, app: ASGIApp, state: ServerState, inference: Inference) -> None:
        self.app = app
        self.repository = state.repository
        self.inference = inference
        self.limit = state.options.max_request_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            path: str = scope["path"]
            if path.startswith(_V2_PREFIX) and path.endswith(_V2_SUFFIX):
                name = path[len(_V2_PREFIX) : -len(_V2_SUFFIX)]
                if name and "/" not in name:
                    await self._serve(scope, receive, send, name, True)
                    return
            elif path.startswith(_V1_PREFIX) and path.endswith(_V1_SUFFIX):
                name = path[len(_V1_PREFIX) : -len(_V1_SUFFIX)]
                if name and "/" not in name:
                    await self._serve(scope, receive, send, name, False)
                    return
        await self.app(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, name: str, v2: bool) -> None:
        declared = header_length = request_id = None
        for key, value in scope["headers"]:
            if key == b"content-length":
                declared = value
            elif key == b"inference-header-content-length":
                header_length = value.decode("latin-1")
            elif key == b"x-request-id":
                request_id = value.decode("latin-1")
        extra: list[tuple[bytes, bytes]] = []
        try:
            model = self.repository.get(name)
            body = await read_body(receive, declared, self.limit)
            if v2:
                payload, json_length = await self.inference.v2(model, body, header_length, request_id)
                if json_length is not None:
                    extra.append((b"inference-header-content-length", str(json_length).encode()))
            else:
                payload = await self.inference.v1(model, body, request_id)
            status = 200
        except Exception as exc:  # noqa: BLE001 - every failure is answered; the connection stays
            status, message = log_failure(exc, request_id, f"POST {scope['path'][:200]}")
            payload = codec.error_body(message)
            extra.clear()
        headers = [
            (b"content-type", _BINARY if extra else _JSON),
            (b"content-length", str(len(payload)).encode()),
            *extra,
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})
