"""Process entry: logging, startup checks, the ASGI app with its lifespan (models + gRPC), uvicorn, workers.

Startup mirrors KServe's ``ModelServer.start`` (``kserve/model_server.py``): every problem that stops the
server (a port in use, a bad ``--model_dir``, the single model failing to load) is one log line naming it
and exit status 2; in a repository, a model that fails is left unavailable and the others serve.
"""

from __future__ import annotations

import logging
import logging.config
import socket
import sys
from collections.abc import Awaitable, Callable

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from server.config import Options, options_from_environment, options_to_environment, parse_options
from server.http_protocol import BoundedHttpToolsProtocol, raise_open_file_limit
from server.state import ServerState

logger = logging.getLogger("server")


def logging_config(options: Options) -> dict[str, object] | str | None:
    """The dict (or file) handed to uvicorn, which installs it in every process it starts."""
    if options.log_config_file:
        return options.log_config_file
    if not options.configure_logging:
        return None
    level = options.log_level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "plain": {
                "format": "%(asctime)s.%(msecs)03d %(process)d %(name)s %(levelname)s %(message)s",
                "datefmt": "%Y-%m-%d %H:%M:%S",
            },
            "access": {
                "()": "uvicorn.logging.AccessFormatter",
                "fmt": '%(asctime)s.%(msecs)03d %(process)d %(name)s %(client_addr)s - "%(request_line)s" %(status_code)s',
                "datefmt": "%Y-%m-%d %H:%M:%S",
                "use_colors": False,
            },
        },
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stderr"},
            "access": {"class": "logging.StreamHandler", "formatter": "access", "stream": "ext://sys.stdout"},
            "access_plain": {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stdout"},
        },
        "loggers": {
            "server": {"handlers": ["stderr"], "level": level, "propagate": False},
            "server.access": {"handlers": ["access_plain"], "level": "INFO", "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["access"], "level": "INFO", "propagate": False},
        },
    }


class StartupError(Exception):
    """A reason not to serve, reported on one line (never a traceback)."""


class Lifespan:
    """ASGI lifespan without Starlette's: a failed startup is reported as one line, not a traceback."""

    def __init__(
        self, app: ASGIApp, startup: Callable[[], Awaitable[None]], shutdown: Callable[[], Awaitable[None]]
    ) -> None:
        self.app = app
        self.startup = startup
        self.shutdown = shutdown

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        await receive()  # lifespan.startup
        try:
            await self.startup()
        except (StartupError, ValueError) as exc:
            logger.error("%s", exc)
            await send({"type": "lifespan.startup.failed", "message": ""})
            return
        await send({"type": "lifespan.startup.complete"})
        await receive()  # lifespan.shutdown
        await self.shutdown()
        await send({"type": "lifespan.shutdown.complete"})


def create_app(options: Options, state: ServerState | None = None) -> ASGIApp:
    """The ASGI app; its lifespan starts inference threads and gRPC (and, in a worker process, loads
    the models), so uvicorn listens only once every model is ready."""
    state = state or ServerState(options)
    grpc_server: list[object] = []

    async def startup() -> None:
        import asyncio
        from concurrent.futures import ThreadPoolExecutor

        if options.max_asyncio_workers:
            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(options.max_asyncio_workers))
        if not state.repository.models and not state.repository.failures:
            await asyncio.get_running_loop().run_in_executor(None, state.load_all)
        state.start()
        freeze_heap()
        if options.enable_grpc:
            from server.grpc_server import build_grpc_server

            server = build_grpc_server(state)
            await server.start()
            grpc_server.append(server)

    async def shutdown() -> None:
        for server in grpc_server:
            await server.stop(grace=5)  # type: ignore[attr-defined]
        state.stop()

    from server.rest import build_app

    app: ASGIApp = build_app(state)
    if options.access_log_format:
        from server.access_log import AccessLogMiddleware

        app = AccessLogMiddleware(app, options.access_log_format)
    return Lifespan(app, startup, shutdown)


def freeze_heap() -> None:
    """Move everything startup allocated (modules, sessions, the app) out of the cyclic collector's reach.

    A full collection of that heap takes 10-50 ms on a 2-core machine, during which no request is served;
    frozen, it takes well under 1 ms. Frozen objects are still freed by reference counting; a repository
    load or unload thaws the heap (server.state.thaw_heap), so a replaced model's cycles can be collected.
    """
    import gc

    gc.collect()
    gc.freeze()
    logger.debug("heap frozen after startup: %d objects", gc.get_freeze_count())


def app_from_env() -> ASGIApp:
    """Factory for worker processes (``--workers`` > 1): options travel in an environment variable."""
    options = options_from_environment()
    if options is None:
        raise StartupError("server.main:app_from_env runs in the worker processes of `python -m server --workers N`")
    return create_app(options)


def uvicorn_kwargs(options: Options) -> dict[str, object]:
    return {
        "host": options.bind_address,
        "port": options.http_port,
        "loop": options.event_loop,
        "http": "server.http_protocol:BoundedHttpToolsProtocol" if _has("httptools") else "h11",
        "h11_max_incomplete_event_size": options.max_header_size,
        "lifespan": "on",
        "access_log": options.enable_access_log and not options.access_log_format,
        "log_config": logging_config(options),
        "log_level": options.log_level.lower(),
        "timeout_keep_alive": options.timeout_keep_alive,
        "server_header": False,
    }


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def port_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on now (in use, no permission), or None."""
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind; never SO_REUSEPORT
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def check_ports(options: Options) -> None:
    ports = [("--http_port", options.http_port)]
    if options.enable_grpc:
        ports.append(("--grpc_port", options.grpc_port))
    if options.enable_grpc and options.http_port == options.grpc_port and options.http_port:
        raise StartupError(f"--http_port and --grpc_port are both {options.http_port}")
    for flag, port in ports:
        problem = port_problem(options.bind_address, port)
        if problem:
            raise StartupError(f"{flag} {port}: cannot listen on {options.bind_address}:{port}: {problem}")


def prepare(options: Options) -> ServerState | None:
    """Everything that can fail before serving: ports, ``model_dir``, the models (one process only)."""
    state = ServerState(options)  # ValueError: bad layout, --device cuda without a GPU
    check_ports(options)
    state.load_all()  # RepositoryError: the single model fails, no model at all
    if options.workers > 1:
        return None  # checked once here; every worker loads its own copy
    return state


def serve(options: Options) -> int:
    config = logging_config(options)
    if isinstance(config, dict):
        logging.config.dictConfig(config)
    raise_open_file_limit()
    BoundedHttpToolsProtocol.configure(options.limits())
    try:
        state = prepare(options)
    except (StartupError, ValueError) as exc:
        logger.error("%s", exc)
        return 2
    kwargs = uvicorn_kwargs(options)
    if options.workers > 1:
        options_to_environment(options)
        uvicorn.run("server.main:app_from_env", factory=True, workers=options.workers, **kwargs)  # type: ignore[arg-type]
        return 0
    server = uvicorn.Server(uvicorn.Config(create_app(options, state), **kwargs))  # type: ignore[arg-type]
    server.run()
    return 0 if server.started else 1


def main(argv: list[str] | None = None) -> int:
    return serve(parse_options(argv))


if __name__ == "__main__":
    sys.exit(main())
