"""``python -m router`` as a process: KServe's flag, readiness, SIGTERM drain, bad graph JSON."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import orjson

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, data: bytes | None = None) -> tuple[int, bytes, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=5) as resp:
            return resp.status, resp.read(), resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as err:
        return err.code, err.read(), err.headers.get("Content-Type", "")


def _wait_ready(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            if _get(f"http://127.0.0.1:{port}/readyz")[0] == 200:
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    raise AssertionError("router did not become ready")


def test_readyz_fails_after_sigterm_then_drains_and_exits() -> None:
    port = _free_port()
    graph = orjson.dumps(
        {"nodes": {"root": {"routerType": "Switch", "steps": [{"serviceUrl": "http://127.0.0.1:1", "condition": "a"}]}}}
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "router",
            f"--graph-json={graph.decode()}",
            "--port",
            str(port),
            "--host",
            "127.0.0.1",
            "--drain-seconds",
            "1.5",
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_ready(port, proc)
        status, body, ctype = _get(f"http://127.0.0.1:{port}/any/path?q=1", data=b'{"b":1}')
        assert (status, ctype) == (404, "application/json")
        assert orjson.loads(body)["cause"] == "None of the routes matched with the switch condition"
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        status, body, ctype = _get(f"http://127.0.0.1:{port}/readyz")
        assert (status, body, ctype) == (503, b"shutting down\n", "text/plain; charset=utf-8")
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_graph_json_exits_1_with_a_message() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "router", "--graph-json", '{"nodes": 5}'],
        cwd=ROOT,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 1
    assert b"failed to unmarshall inference graph json: nodes: must be an object" in result.stderr
    assert b"Traceback" not in result.stderr


def test_missing_flag_is_a_usage_error() -> None:
    result = subprocess.run([sys.executable, "-m", "router"], cwd=ROOT, capture_output=True, timeout=30, check=False)
    assert result.returncode == 2 and b"--graph-json" in result.stderr


def test_router_imports_nothing_of_the_compiler() -> None:
    """The image (router/Dockerfile) ships router/ with httptools, uvloop and orjson only."""
    code = (
        "import sys, router.main, router.server, router.engine; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'kserve_compile', 'pydantic', 'yaml', 'typer', 'server'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"


def test_router_needs_only_its_extra_and_orjson() -> None:
    """The router extra is httptools and uvloop: serving a graph loads no other HTTP library."""
    code = (
        "import sys, router.main, router.server, router.engine, router.client, router.h1; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'aiohttp', 'yarl', 'multidict', 'httpx', 'requests'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"


def test_without_the_router_extra_it_says_what_to_install_in_one_line() -> None:
    code = "import sys, runpy; sys.modules['httptools'] = None; runpy.run_module('router', run_name='__main__')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 2
    assert (
        result.stderr
        == "error: the router needs the Python package 'httptools': pip install 'kserve-compile[router]'\n"
    )
