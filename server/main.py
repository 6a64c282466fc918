"""Process entry: logging, the ASGI app with its lifespan (models + gRPC), uvicorn, worker processes."""

from __future__ import annotations

import contextlib
import json
import logging
import logging.config
import os
import sys
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette
from starlette.types import ASGIApp

from server.config import Options, parse_options
from server.state import ServerState

logger = logging.getLogger("server")

OPTIONS_ENV = "ONNXSERVER_OPTIONS"  # how worker processes receive the parsed command line


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
            "plain": {"format": "%(asctime)s.%(msecs)03d %(process)d %(name)s %(levelname)s %(message)s",
                      "datefmt": "%Y-%m-%d %H:%M:%S"},
            "access": {"()": "uvicorn.logging.AccessFormatter",
                       "fmt": '%(asctime)s.%(msecs)03d %(process)d %(name)s %(client_addr)s - "%(request_line)s" %(status_code)s',
                       "datefmt": "%Y-%m-%d %H:%M:%S", "use_colors": False},
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


def create_app(options: Options) -> ASGIApp:
    """The ASGI app; its lifespan loads every model (so uvicorn listens only once they are ready)."""
    state = ServerState(options)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        import asyncio
        from concurrent.futures import ThreadPoolExecutor

        if options.max_asyncio_workers:
            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(options.max_asyncio_workers))
        state.start()
        names = await state.load_all()
        logger.info("models ready: %s", ", ".join(names))
        grpc_server = None
        if options.enable_grpc:
            from server.grpc_server import build_grpc_server

            grpc_server = build_grpc_server(state)
            await grpc_server.start()
        try:
            yield
        finally:
            if grpc_server is not None:
                await grpc_server.stop(grace=5)
            state.stop()

    from server.rest import build_app

    app: ASGIApp = build_app(state, lifespan=lifespan)
    if options.access_log_format:
        from server.access_log import AccessLogMiddleware

        app = AccessLogMiddleware(app, options.access_log_format)
    return app


def app_from_env() -> ASGIApp:
    """Factory for worker processes (``--workers`` > 1): options travel in an environment variable."""
    return create_app(Options.from_json_dict(json.loads(os.environ[OPTIONS_ENV])))


def uvicorn_kwargs(options: Options) -> dict[str, object]:
    return {
        "host": options.bind_address,
        "port": options.http_port,
        "loop": options.event_loop,
        "http": "httptools" if _has("httptools") else "auto",
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


def serve(options: Options) -> int:
    config = logging_config(options)
    if isinstance(config, dict):
        logging.config.dictConfig(config)
    kwargs = uvicorn_kwargs(options)
    if options.workers > 1:
        os.environ[OPTIONS_ENV] = json.dumps(options.to_json_dict())
        uvicorn.run("server.main:app_from_env", factory=True, workers=options.workers, **kwargs)  # type: ignore[arg-type]
        return 0
    try:
        app = create_app(options)
    except ValueError as exc:  # bad --model_dir layout, --device cuda without a GPU, ...
        logger.error("%s", exc)
        return 2
    server = uvicorn.Server(uvicorn.Config(app, **kwargs))  # type: ignore[arg-type]
    server.run()
    return 0 if server.started else 1


def main(argv: list[str] | None = None) -> int:
    return serve(parse_options(argv))


if __name__ == "__main__":
    sys.exit(main())
