"""Server processes for the benchmark: free loopback ports, CPU pinning, readiness, RSS, CPU time, stopping."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http_status(port: int, method: str, path: str, body: bytes | None = None, timeout: float = 2.0) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@dataclass
class Server:
    """One started server; ``label`` names it in the tables (``ours``, ``kserve``, ...)."""

    label: str
    model: str
    port: int
    process: subprocess.Popen
    log: Path
    startup_s: float = 0.0
    rss_ready_mib: float = 0.0
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _status_kib(self, key: str) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return float(line.split()[1])
        return 0.0

    def rss_mib(self) -> float:
        return self._status_kib("VmRSS") / 1024

    def peak_rss_mib(self) -> float:
        return self._status_kib("VmHWM") / 1024

    def cpu_seconds(self) -> float:
        """User + system CPU time of the process (all its threads) so far."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def start(
    label: str,
    model: str,
    argv: list[str],
    cpu: int | None,
    log_dir: Path,
    ready_path: str,
    env: dict[str, str] | None = None,
    timeout: float = 90.0,
) -> Server:
    """Start ``argv`` (with ``{port}`` filled in) pinned to ``cpu`` and wait until ``ready_path`` answers 200."""
    port = free_port()
    command = [a.replace("{port}", str(port)) for a in argv]
    if cpu is not None:
        command = ["taskset", "-c", str(cpu), *command]
    log = log_dir / f"{label}-{model}.log"
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        start_new_session=True,  # Ctrl-C reaches only the benchmark
    )
    server = Server(label, model, port, process, log)
    deadline = started + timeout
    while True:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{label} ({model}) exited with code {process.returncode} while starting:\n{tail}")
        try:
            if http_status(port, "GET", ready_path, timeout=1.0) == 200:
                break
        except OSError:
            pass
        if time.perf_counter() > deadline:
            stop(server)
            raise RuntimeError(f"{label} ({model}) was not ready after {timeout:.0f} s; log: {log}")
        time.sleep(0.01)
    server.startup_s = time.perf_counter() - started
    server.rss_ready_mib = server.rss_mib()
    return server


def stop(server: Server, grace: float = 8.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds (KServe's own grace period is 30 s)."""
    process = server.process
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
