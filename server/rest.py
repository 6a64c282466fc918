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


class Endpoints:
    """The REST handlers over one server state (the unversioned inference routes are normally answered by
    ``hotpath.FastPath`` before Starlette sees them)."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.repository = state.repository
        self.limit = state.options.max_request_size
        self.inference = Inference(state)

    def _versioned(self, request: Request) -> OnnxModel:
        name = request.path_params["model_name"]
        model = self.repository.get(name)
        version = request.path_params.get("version")
        if version is not None and version != model.version:
            raise ModelNotFound(name, version)
        return model

    # --- liveness, metadata ------------------------------------------------------------------
    async def root(self, request: Request) -> Response:
        return json_response({"status": "alive"})

    async def live(self, request: Request) -> Response:
        return json_response({"live": True})

    async def ready(self, request: Request) -> Response:
        if not self.state.ready():
            return error_response(503, "Server is not ready.")
        return json_response({"ready": True})

    async def server_metadata(self, request: Request) -> Response:
        return json_response(self.state.server_metadata())

    async def model_list(self, request: Request) -> Response:
        return json_response({"models": list(self.repository.models)})

    async def model_ready(self, request: Request) -> Response:
        model = self._versioned(request)
        return json_response({"name": model.name, "ready": model.ready})

    async def model_metadata(self, request: Request) -> Response:
        return json_response(self._versioned(request).metadata())

    async def model_config(self, request: Request) -> Response:
        model = self._versioned(request)
        return json_response(triton_config.model_config(model, self.state.batcher_for(model)))

    async def model_stats(self, request: Request) -> Response:
        name = request.path_params.get("model_name")
        if name is None:
            rows = [stats.triton(n, v) for n, v, stats in self.state.model_stats()]
        else:
            model = self._versioned(request)
            rows = [model.stats.triton(model.name, model.version)]
        return json_response({"model_stats": rows})

    async def prometheus(self, request: Request) -> Response:
        body, content_type = metrics.exposition(request.headers.get("accept", ""), self.state.collector)
        return Response(body, media_type=content_type)

    # --- inference (the unversioned routes are normally answered by hotpath.FastPath first) -------
    async def v2_infer(self, request: Request) -> Response:
        model = self._versioned(request)
        body = await read_body(request, self.limit)
        payload, json_length = await self.inference.v2(
            model, body, request.headers.get(HEADER_LENGTH), request.headers.get("x-request-id")
        )
        if json_length is None:
            return Response(payload, media_type=JSON)
        return Response(payload, media_type=BINARY, headers={"Inference-Header-Content-Length": str(json_length)})

    async def v1_predict(self, request: Request) -> Response:
        model = self.repository.get(request.path_params["model_name"])
        body = await read_body(request, self.limit)
        return Response(await self.inference.v1(model, body, request.headers.get("x-request-id")), media_type=JSON)

    async def v1_explain(self, request: Request) -> Response:
        model = self.repository.get(request.path_params["model_name"])
        raise NotImplementedByServer(f"Model {model.name} has no explainer.")

    # --- repository extension -----------------------------------------------------------------
    async def repository_index(self, request: Request) -> Response:
        body = await read_body(request, self.limit)
        ready_only = False
        if body.strip():
            obj = codec._json_object(body, "the body")
            ready_only = bool(obj.get("ready", False))
        return json_response(self.repository.index(ready_only))

    async def repository_load(self, request: Request) -> Response:
        name = request.path_params["model_name"]
        await read_body(request, self.limit)  # Triton may send parameters; files come from model_dir only
        await self.state.load(name)
        return json_response({"name": name, "load": True})

    async def repository_unload(self, request: Request) -> Response:
        name = request.path_params["model_name"]
        await self.state.unload(name)
        return json_response({"name": name, "unload": True})


_MODEL = "/v2/models/{model_name}"
_VERSION = _MODEL + "/versions/{version}"
# (path, handler, method); the hot paths first: Starlette tries routes in order
ROUTES: tuple[tuple[str, str, str], ...] = (
    (_MODEL + "/infer", "v2_infer", "POST"),
    ("/v1/models/{model_name}:predict", "v1_predict", "POST"),
    ("/v1/models/{model_name}:explain", "v1_explain", "POST"),
    ("/", "root", "GET"),
    ("/metrics", "prometheus", "GET"),
    ("/v1/models", "model_list", "GET"),
    ("/v1/models/{model_name}", "model_ready", "GET"),
    ("/v2", "server_metadata", "GET"),
    ("/v2/health/live", "live", "GET"),
    ("/v2/health/ready", "ready", "GET"),
    ("/v2/models", "model_list", "GET"),
    ("/v2/models/stats", "model_stats", "GET"),
    (_MODEL, "model_metadata", "GET"),
    (_MODEL + "/ready", "model_ready", "GET"),
    (_VERSION, "model_metadata", "GET"),
    (_VERSION + "/ready", "model_ready", "GET"),
    (_VERSION + "/infer", "v2_infer", "POST"),
    (_MODEL + "/config", "model_config", "GET"),
    (_MODEL + "/stats", "model_stats", "GET"),
    (_VERSION + "/config", "model_config", "GET"),
    (_VERSION + "/stats", "model_stats", "GET"),
    ("/v2/repository/index", "repository_index", "POST"),
    ("/v2/repository/models/{model_name}/load", "repository_load", "POST"),
    ("/v2/repository/models/{model_name}/unload", "repository_unload", "POST"),
)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, exc.detail, dict(exc.headers or {}))


def build_app(state: ServerState) -> ASGIApp:
    endpoints = Endpoints(state)
    routes = [Route(path, guarded(getattr(endpoints, name)), methods=[method]) for path, name, method in ROUTES]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error})
    return hotpath.FastPath(app, state, endpoints.inference)
