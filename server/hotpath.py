"""The inference routes as plain ASGI, in front of the Starlette router.

``POST /v2/models/{name}/infer`` and ``POST /v1/models/{name}:predict`` are most of the traffic;
answering them here skips Starlette's routing, Request/Response objects and exception wrappers,
which on a small model cost as much as the whole Open Inference Protocol validation. Every other
path (and the versioned infer route) goes to the Starlette app, which calls the same functions.
"""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Receive, Scope, Send

from server import codec, metrics
from server.errors import PayloadTooLarge, ServerError
from server.model import OnnxModel
from server.state import ServerState

logger = logging.getLogger("server")
trace = logging.getLogger("server.trace")

_JSON = b"application/json"
_BINARY = b"application/octet-stream"
_V2_PREFIX, _V2_SUFFIX = "/v2/models/", "/infer"
_V1_PREFIX, _V1_SUFFIX = "/v1/models/", ":predict"


class Inference:
    """The two inference endpoints, independent of the web framework."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.latency_log = state.options.enable_latency_logging

    async def v2(self, model: OnnxModel, body: bytes, header_length: str | None, request_id: str | None) -> tuple[bytes, int | None]:
        timers = metrics.timers(model.name)
        started = time.perf_counter()
        decoded = codec.decode_v2(model, body, header_length)
        decoded_at = time.perf_counter()
        results = await self.state.infer(model, decoded.feeds, decoded.outputs)
        predicted_at = time.perf_counter()
        answer = codec.encode_v2(model, decoded, results)
        self._observe(timers, request_id, started, decoded_at, predicted_at)
        return answer

    async def v1(self, model: OnnxModel, body: bytes, request_id: str | None) -> bytes:
        timers = metrics.timers(model.name)
        started = time.perf_counter()
        feeds = codec.decode_v1(model, body)
        decoded_at = time.perf_counter()
        results = await self.state.infer(model, feeds, model.output_names[:1])
        predicted_at = time.perf_counter()
        answer = codec.encode_v1(results[0])
        self._observe(timers, request_id, started, decoded_at, predicted_at)
        return answer

    def _observe(self, timers: metrics.ModelTimers, request_id: str | None, started: float, decoded: float, predicted: float) -> None:
        done = time.perf_counter()
        timers.pre.observe(decoded - started)
        timers.predict.observe(predicted - decoded)
        timers.post.observe(done - predicted)
        if self.latency_log:
            trace.info(
                "requestId: %s, preprocess_ms: %.3f, predict_ms: %.3f, postprocess_ms: %.3f",
                request_id or "N.A.", (decoded - started) * 1e3, (predicted - decoded) * 1e3, (done - predicted) * 1e3,
            )


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
        except ServerError as exc:
            status, payload = exc.status, codec.error_body(exc.message)
            extra.clear()
        except Exception as exc:  # noqa: BLE001 - answer 500 and keep the connection
            logger.exception("unhandled error on POST %s", scope["path"])
            status, payload = 500, codec.error_body(f"{type(exc).__name__} : {exc}")
            extra.clear()
        headers = [
            (b"content-type", _BINARY if extra else _JSON),
            (b"content-length", str(len(payload)).encode()),
            *extra,
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})
