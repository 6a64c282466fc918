"""Driving a server with wrk (pinned to the load-generator core) and reading its figures."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from serve.bodies import Body

LUA = Path(__file__).resolve().parent / "wrk_v2.lua"


@dataclass(frozen=True)
class Load:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int  # connect + read + write + timeout errors and non-2xx answers
    cpu_us_per_request: float  # server CPU time (all threads) per request; 0 when unknown

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def body_file(body: Body, directory: Path) -> Path:
    path = directory / f"body-{hashlib.sha1(body.data).hexdigest()[:16]}.bin"
    if not path.exists():
        path.write_bytes(body.data)
    return path


def wrk(url: str, body: Body, connections: int, seconds: int, cpu: int | None, directory: Path) -> dict[str, float]:
    env = {
        **os.environ,
        "BENCH_BODY": str(body_file(body, directory)),
        "BENCH_CONTENT_TYPE": body.content_type,
        "BENCH_HEADER_LENGTH": "" if body.header_length is None else str(body.header_length),
    }
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s", "-s", str(LUA), url]
    if cpu is not None:
        command = ["taskset", "-c", str(cpu), *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=seconds + 30)
    for line in done.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            return json.loads(line[len("BENCH_RESULT ") :])
    raise RuntimeError(f"wrk gave no result (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")


def measure(server, path: str, body: Body, connections: int, seconds: int, cpu: int | None, directory: Path) -> Load:  # noqa: ANN001
    cpu_before = server.cpu_seconds()
    figures = wrk(server.base + path, body, connections, seconds, cpu, directory)
    cpu_used = server.cpu_seconds() - cpu_before
    requests = int(figures["requests"])
    errors = sum(int(figures[k]) for k in ("connect", "read", "write", "status", "timeout"))
    return Load(
        requests=requests,
        seconds=figures["duration_us"] / 1e6,
        p50_ms=figures["p50_us"] / 1e3,
        p99_ms=figures["p99_us"] / 1e3,
        errors=errors,
        cpu_us_per_request=cpu_used * 1e6 / requests if requests else 0.0,
    )
