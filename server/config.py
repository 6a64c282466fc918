"""Command line, compatible with KServe's model servers (snake_case flags; dashes accepted too), and how the parsed
options reach worker processes (``--workers`` > 1): one environment variable, written and read only here.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
from dataclasses import asdict, dataclass, fields

from server.providers import DEVICES

logger = logging.getLogger("server")

MIB = 1024 * 1024
OPTIONS_ENV = "ONNXSERVER_OPTIONS"  # how worker processes receive the parsed command line
FD_RESERVE = 64  # descriptors kept for model files, gRPC, logging, the listening sockets


@dataclass(frozen=True)
class Limits:
    """The connection limits of the HTTP protocol (server.http_protocol.BoundedHttpToolsProtocol)."""

    max_header_bytes: int = 64 * 1024
    header_timeout: float = 30.0
    body_timeout: float = 30.0
    max_connections: int = 0  # 0: the open-file limit less FD_RESERVE

    def connection_cap(self) -> int:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        by_fds = max(16, soft - FD_RESERVE) if soft != resource.RLIM_INFINITY else 1 << 20
        return min(self.max_connections, by_fds) if self.max_connections > 0 else by_fds


@dataclass
class Options:
    model_dir: str
    model_name: str = "model"
    http_port: int = 8080
    grpc_port: int = 8081
    bind_address: str = "0.0.0.0"
    enable_grpc: bool = True
    workers: int = 1
    max_threads: int = 4
    inline_inference_us: float = 50.0
    max_asyncio_workers: int | None = None
    device: str = "auto"
    intra_op_threads: int = 1
    inter_op_threads: int = 1
    warmup: bool = True
    max_request_size: int = 64 * MIB
    grpc_max_send_message_length: int = 64 * MIB
    grpc_max_receive_message_length: int = 64 * MIB
    max_batch_size: int = 0
    max_batch_delay_ms: float = 1.0
    log_level: str = "INFO"
    configure_logging: bool = True
    log_config_file: str | None = None
    enable_access_log: bool = False
    access_log_format: str | None = None
    enable_latency_logging: bool = False
    event_loop: str = "auto"
    timeout_keep_alive: int = 65
    max_header_size: int = 64 * 1024
    header_timeout: float = 30.0
    body_timeout: float = 30.0
    max_connections: int = 0
    large_request_bytes: int = 256 * 1024
    process_decode_bytes: int = 8 * MIB

    def limits(self) -> Limits:
        return Limits(self.max_header_size, self.header_timeout, self.body_timeout, self.max_connections)

    def to_json_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json_dict(cls, data: dict[str, object]) -> Options:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})  # type: ignore[arg-type]


def strtobool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("1", "true", "t", "yes", "y", "on"):
        return True
    if lowered in ("0", "false", "f", "no", "n", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected a boolean (true/false), got {value!r}")


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return number


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration(value: str) -> float:
    """Seconds from ``30``, ``30s``, ``500ms``, ``5m`` or ``1h`` (0 turns the timeout off)."""
    text = value.strip().lower()
    for unit in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            number, scale = text[: -len(unit)], _UNITS[unit]
            break
    else:
        number, scale = text, 1.0
    try:
        seconds = float(number) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a duration such as 30s, 500ms or 5m, got {value!r}") from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"a duration cannot be negative, got {value!r}")
    return seconds


def _add(parser: argparse.ArgumentParser, flag: str, **kwargs: object) -> None:
    """Register ``--a_b`` together with its ``--a-b`` spelling."""
    spellings = [flag]
    for alternative in (flag.replace("_", "-"), flag[:2] + flag[2:].replace("-", "_")):
        if alternative not in spellings:
            spellings.append(alternative)
    parser.add_argument(*spellings, dest=flag[2:].replace("-", "_"), **kwargs)  # type: ignore[arg-type]


def build_parser() -> argparse.ArgumentParser:
    d = Options(model_dir="")
    p = argparse.ArgumentParser(prog="python -m server", description="ONNX Runtime model server (KServe V1/V2, gRPC)")
    _add(p, "--model_dir", required=True, help="model.onnx directory or <name>/[<version>/]model.onnx repository")
    _add(p, "--model_name", default=d.model_name, help="name of the model when model_dir holds one model.onnx")
    _add(p, "--http_port", type=int, default=d.http_port)
    _add(p, "--grpc_port", type=int, default=d.grpc_port)
    p.add_argument(
        "--bind_address",
        "--bind-address",
        "--host",
        dest="bind_address",
        default=d.bind_address,
        help="address both servers listen on",
    )
    _add(p, "--enable_grpc", type=strtobool, default=d.enable_grpc)
    _add(p, "--workers", type=_positive, default=d.workers, help="HTTP worker processes (each loads the models)")
    _add(p, "--max_threads", type=_positive, default=d.max_threads, help="inference threads per process")
    _add(
        p,
        "--inline_inference_us",
        type=float,
        default=d.inline_inference_us,
        help="run a request on the event loop when its predicted inference time is below this (0: never)",
    )
    _add(p, "--max_asyncio_workers", type=int, default=None, help="default executor size (model loading)")
    _add(p, "--device", choices=DEVICES, default=d.device, help="auto: CUDA when a GPU is usable, else CPU")
    _add(
        p,
        "--intra_op_threads",
        type=int,
        default=d.intra_op_threads,
        help="ONNX Runtime intra-op threads (0: ORT picks)",
    )
    _add(p, "--inter_op_threads", type=int, default=d.inter_op_threads)
    _add(p, "--warmup", type=strtobool, default=d.warmup, help="run each model once on zeros before it turns ready")
    _add(p, "--max_request_size", type=int, default=d.max_request_size, help="largest HTTP request body, bytes")
    _add(p, "--grpc_max_send_message_length", type=int, default=d.grpc_max_send_message_length)
    _add(p, "--grpc_max_receive_message_length", type=int, default=d.grpc_max_receive_message_length)
    _add(
        p,
        "--max_batch_size",
        type=int,
        default=d.max_batch_size,
        help="dynamic batching: largest merged batch (0: off)",
    )
    _add(p, "--max_batch_delay_ms", type=float, default=d.max_batch_delay_ms, help="dynamic batching: longest wait")
    _add(p, "--log_level", default=os.environ.get("KSERVE_LOGLEVEL", d.log_level).upper())
    _add(p, "--configure_logging", type=strtobool, default=d.configure_logging)
    _add(p, "--log_config_file", default=None, help="logging config (.json, .yaml or .ini)")
    _add(p, "--enable_access_log", type=strtobool, default=d.enable_access_log, help="one log line per HTTP request")
    _add(p, "--access_log_format", default=None, help="access log format (implies --enable_access_log)")
    _add(p, "--enable_latency_logging", type=strtobool, default=d.enable_latency_logging)
    _add(p, "--event_loop", choices=("auto", "asyncio", "uvloop"), default=d.event_loop)
    _add(p, "--timeout_keep_alive", type=int, default=d.timeout_keep_alive)
    _add(
        p,
        "--max_header_size",
        type=_positive,
        default=d.max_header_size,
        help="largest request line + headers, bytes (431 past it)",
    )
    _add(
        p,
        "--header_timeout",
        type=duration,
        default=d.header_timeout,
        help="time a client has to send a request's headers (408 past it; 0: none)",
    )
    _add(
        p,
        "--body_timeout",
        type=duration,
        default=d.body_timeout,
        help="longest pause between reads of a request body (408 past it; 0: none)",
    )
    _add(
        p,
        "--max_connections",
        type=int,
        default=d.max_connections,
        help="open HTTP connections per process (0: the open-file limit less a reserve)",
    )
    _add(
        p,
        "--large_request_bytes",
        type=int,
        default=d.large_request_bytes,
        help="request bodies from this size are decoded on a thread, off the event loop",
    )
    _add(
        p,
        "--process_decode_bytes",
        type=int,
        default=d.process_decode_bytes,
        help="JSON bodies from this size are decoded in a helper process (0: never)",
    )
    return p


def parse_options(argv: list[str] | None = None) -> Options:
    """Parse like KServe: unknown flags (transformer options, ...) are ignored with a warning."""
    namespace, unknown = build_parser().parse_known_args(argv)
    if unknown:
        logger.warning("ignoring unknown arguments: %s", " ".join(unknown))
    options = Options(**vars(namespace))
    if options.access_log_format:
        options.enable_access_log = True
    return options


def options_to_environment(options: Options) -> None:
    """Hand ``options`` to the worker processes uvicorn is about to start (they inherit the environment)."""
    os.environ[OPTIONS_ENV] = json.dumps(options.to_json_dict())


def options_from_environment() -> Options | None:
    """The options a parent process handed over (options_to_environment), or None outside a worker."""
    raw = os.environ.get(OPTIONS_ENV)
    if not raw:
        return None
    return Options.from_json_dict(json.loads(raw))
