"""The Starlette application: KServe V1, V2 / Open Inference Protocol REST, repository API, metrics.

Every route converts errors into ``{"error": ...}`` itself, so no exception ever reaches Starlette's
ServerErrorMiddleware (which would close the keep-alive connection after answering).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable

import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from server import codec, hotpath, metrics, triton_config
from server.errors import ModelNotFound, NotImplementedByServer
from server.hotpath import Inference
from server.model import OnnxModel
from server.state import ServerState

logger = logging.getLogger("server")

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
        except Exception as exc:  # noqa: BLE001 - every failure is answered; the connection stays
            where = f"{request.method} {request.url.path[:200]}"
            status, message = hotpath.log_failure(exc, request.headers.get("x-request-id"), where)
            return error_response(status, message)

    return endpoint


async def read_body(request: Request, limit: int) -> bytes:
    return await hotpath.read_body(request.receive, request.headers.get("content-length", "").encode() or None, limit)


def build_app(state: ServerState) -> ASGIApp:
    options = state.options
    repository = state.repository
    limit = options.max_request_size
    inference = Inference(state)

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

    async def model_config(request: Request) -> Response:
        return json_response(triton_config.model_config(versioned(request)))

    async def model_stats(request: Request) -> Response:
        name = request.path_params.get("model_name")
        if name is None:
            rows = [stats.triton(n, v) for n, v, stats in state.model_stats()]
        else:
            model = versioned(request)
            rows = [model.stats.triton(model.name, model.version)]
        return json_response({"model_stats": rows})

    async def prometheus(request: Request) -> Response:
        body, content_type = metrics.exposition(request.headers.get("accept", ""), state.collector)
        return Response(body, media_type=content_type)

    # --- inference (the unversioned routes are normally answered by hotpath.FastPath first) -------
    async def v2_infer(request: Request) -> Response:
        model = versioned(request)
        body = await read_body(request, limit)
        payload, json_length = await inference.v2(
            model, body, request.headers.get(HEADER_LENGTH), request.headers.get("x-request-id")
        )
        if json_length is None:
            return Response(payload, media_type=JSON)
        return Response(payload, media_type=BINARY, headers={"Inference-Header-Content-Length": str(json_length)})

    async def v1_predict(request: Request) -> Response:
        model = repository.get(request.path_params["model_name"])
        body = await read_body(request, limit)
        return Response(await inference.v1(model, body, request.headers.get("x-request-id")), media_type=JSON)

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
        Route("/v2/models/stats", guarded(model_stats), methods=get),
        Route(model_path, guarded(model_metadata), methods=get),
        Route(model_path + "/ready", guarded(model_ready), methods=get),
        Route(version_path, guarded(model_metadata), methods=get),
        Route(version_path + "/ready", guarded(model_ready), methods=get),
        Route(version_path + "/infer", guarded(v2_infer), methods=post),
        Route(model_path + "/config", guarded(model_config), methods=get),
        Route(model_path + "/stats", guarded(model_stats), methods=get),
        Route(version_path + "/config", guarded(model_config), methods=get),
        Route(version_path + "/stats", guarded(model_stats), methods=get),
        Route("/v2/repository/index", guarded(repository_index), methods=post),
        Route("/v2/repository/models/{model_name}/load", guarded(repository_load), methods=post),
        Route("/v2/repository/models/{model_name}/unload", guarded(repository_unload), methods=post),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return error_response(exc.status_code, exc.detail, dict(exc.headers or {}))

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    return hotpath.FastPath(app, state, inference)
