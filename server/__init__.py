"""A Starlette + ONNX Runtime model server speaking KServe's V1 and V2 (REST and gRPC) protocols.

Self-contained: it ships in its own image and imports nothing from ``kserve_compile``.

The package imports nothing itself, so that ``python -m server`` can name a missing dependency in one line (see
``__main__``) and a caller pays only for the modules it uses. ``__all__`` lists the modules callers may import
(``from server.config import parse_options``, ``python -m server``, ``server.main:app_from_env``); the others
(access_log, datatypes, decode_pool, metrics, stats, triton_config) are the server's own.
"""

__all__ = [
    "batcher",
    "codec",
    "config",
    "errors",
    "grpc_server",
    "hotpath",
    "http_protocol",
    "main",
    "model",
    "proto",
    "providers",
    "repository",
    "rest",
    "runner",
    "state",
]
