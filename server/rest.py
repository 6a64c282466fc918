"""The Starlette application: KServe V1, V2 / Open Inference Protocol REST, repository API, metrics.

Every route converts errors into ``{"error": ...}`` itself, so no exception ever reaches Starlette's
ServerErrorMiddleware (which would close the keep-alive connection after answering).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable

import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from server import codec, metrics
from server.errors import ModelNotFound, NotImplementedByServer, PayloadTooLarge, ServerError
from server.model import OnnxModel
from server.state import ServerState

logger = logging.getLogger("server")
trace = logging.getLogger("server.trace")

JSON = "application/json"
BINARY = "application/octet-stream"
HEADER_LENGTH = "inference-header-content-length"

Handler = Callable[[Request], Awaitable[Response]]


def json_response(obj: object, status: int = 200) -> Response:
    return Response(orjson.dumps(obj), status_code=status, media_type=JSON)


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps({"error": message}), status_code=status, media_type=JSON, headers=headers)


def guarded(handler: Handler) -> Handler:
    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except ServerError as exc:
            return error_response(exc.status, exc.message)
        except Exception as exc:  # noqa: BLE001 - last resort: answer 500 and keep the connection
            logger.exception("unhandled error on %s %s", request.method, request.url.path)
            return error_response(500, f"{type(exc).__name__} : {exc}")

    return endpoint


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refusing more than ``limit`` bytes (413) before buffering it."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"request body of {declared} bytes exceeds the limit of {limit} bytes")
    receive = request.receive
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


def build_app(state: ServerState, lifespan: Callable | None = None) -> Starlette:  # type: ignore[type-arg]
    options = state.options
    repository = state.repository
    limit = options.max_request_size
    latency_log = options.enable_latency_logging

    def versioned(request: Request) -> OnnxModel:
        name = request.path_params["model_name"]
        model = repository.get(name)
        version = request.path_params.get("version")
        if version is not None and version != model.version:
            raise ModelNotFound(name, version)
        return model

    # --- liveness, metadata ------------------------------------------------------------------
    async def root(request: Request) -> Response:
        return json_response({"status": "alive"})

    async def live(request: Request) -> Response:
        return json_response({"live": True})

    async def ready(request: Request) -> Response:
        if not state.ready():
            return error_response(503, "Server is not ready.")
        return json_response({"ready": True})

    async def server_metadata(request: Request) -> Response:
        return json_response(state.server_metadata())

    async def model_list(request: Request) -> Response:
        return json_response({"models": list(repository.models)})

    async def model_ready(request: Request) -> Response:
        model = versioned(request)
        return json_response({"name": model.name, "ready": model.ready})

    async def model_metadata(request: Request) -> Response:
        return json_response(versioned(request).metadata())

    async def prometheus(request: Request) -> Response:
        body, content_type = metrics.exposition(request.headers.get("accept", ""))
        return Response(body, media_type=content_type)

    # --- inference ----------------------------------------------------------------------------
    async def v2_infer(request: Request) -> Response:
        model = versioned(request)
        body = await read_body(request, limit)
        timers = metrics.timers(model.name)
        started = time.perf_counter()
        decoded = codec.decode_v2(model, body, request.headers.get(HEADER_LENGTH))
        decoded_at = time.perf_counter()
        results = await state.infer(model, decoded.feeds, decoded.outputs)
        predicted_at = time.perf_counter()
        payload, json_length = codec.encode_v2(model, decoded, results)
        done = time.perf_counter()
        timers.pre.observe(decoded_at - started)
        timers.predict.observe(predicted_at - decoded_at)
        timers.post.observe(done - predicted_at)
        if latency_log:
            _log_latency(request, started, decoded_at, predicted_at, done)
        if json_length is None:
            return Response(payload, media_type=JSON)
        return Response(payload, media_type=BINARY, headers={"Inference-Header-Content-Length": str(json_length)})

    async def v1_predict(request: Request) -> Response:
        model = repository.get(request.path_params["model_name"])
        body = await read_body(request, limit)
        timers = metrics.timers(model.name)
        started = time.perf_counter()
        feeds = codec.decode_v1(model, body)
        decoded_at = time.perf_counter()
        results = await state.infer(model, feeds, model.output_names[:1])
        predicted_at = time.perf_counter()
        payload = codec.encode_v1(results[0])
        done = time.perf_counter()
        timers.pre.observe(decoded_at - started)
        timers.predict.observe(predicted_at - decoded_at)
        timers.post.observe(done - predicted_at)
        if latency_log:
            _log_latency(request, started, decoded_at, predicted_at, done)
        return Response(payload, media_type=JSON)

    async def v1_explain(request: Request) -> Response:
        model = repository.get(request.path_params["model_name"])
        raise NotImplementedByServer(f"Model {model.name} has no explainer.")

    # --- repository extension -----------------------------------------------------------------
    async def repository_index(request: Request) -> Response:
        body = await read_body(request, limit)
        ready_only = False
        if body.strip():
            obj = codec._json_object(body, "the body")
            ready_only = bool(obj.get("ready", False))
        return json_response(repository.index(ready_only))

    async def repository_load(request: Request) -> Response:
        name = request.path_params["model_name"]
        await read_body(request, limit)  # Triton may send parameters; files come from model_dir only
        await state.load(name)
        return json_response({"name": name, "load": True})

    async def repository_unload(request: Request) -> Response:
        name = request.path_params["model_name"]
        await state.unload(name)
        return json_response({"name": name, "unload": True})

    get, post = ["GET"], ["POST"]
    model_path = "/v2/models/{model_name}"
    version_path = "/v2/models/{model_name}/versions/{version}"
    routes = [
        # the hot paths first: Starlette tries routes in order
        Route(model_path + "/infer", guarded(v2_infer), methods=post),
        Route("/v1/models/{model_name}:predict", guarded(v1_predict), methods=post),
        Route("/v1/models/{model_name}:explain", guarded(v1_explain), methods=post),
        Route("/", guarded(root), methods=get),
        Route("/metrics", guarded(prometheus), methods=get),
        Route("/v1/models", guarded(model_list), methods=get),
        Route("/v1/models/{model_name}", guarded(model_ready), methods=get),
        Route("/v2", guarded(server_metadata), methods=get),
        Route("/v2/health/live", guarded(live), methods=get),
        Route("/v2/health/ready", guarded(ready), methods=get),
        Route("/v2/models", guarded(model_list), methods=get),
        Route(model_path, guarded(model_metadata), methods=get),
        Route(model_path + "/ready", guarded(model_ready), methods=get),
        Route(version_path, guarded(model_metadata), methods=get),
        Route(version_path + "/ready", guarded(model_ready), methods=get),
        Route(version_path + "/infer", guarded(v2_infer), methods=post),
        Route("/v2/repository/index", guarded(repository_index), methods=post),
        Route("/v2/repository/models/{model_name}/load", guarded(repository_load), methods=post),
        Route("/v2/repository/models/{model_name}/unload", guarded(repository_unload), methods=post),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return error_response(exc.status_code, exc.detail, dict(exc.headers or {}))

    return Starlette(routes=routes, exception_handlers={HTTPException: http_error}, lifespan=lifespan)


def _log_latency(request: Request, started: float, decoded: float, predicted: float, done: float) -> None:
    trace.info(
        "requestId: %s, preprocess_ms: %.3f, predict_ms: %.3f, postprocess_ms: %.3f",
        request.headers.get("x-request-id", "N.A."),
        (decoded - started) * 1e3,
        (predicted - decoded) * 1e3,
        (done - predicted) * 1e3,
    )
