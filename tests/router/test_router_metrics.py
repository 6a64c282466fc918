"""The router's ``/metrics`` (Prometheus text format) and its in-flight limit, in process and as ``python -m router``."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest
from router_stubs import HANG_UP, RESET, http_answer, json_answer, raw_stub, stubs

from router.client import ServiceClient
from router.engine import Router
from router.metrics import RouterMetrics, escape
from router.server import RouterServer
from router.spec import parse_graph

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client parses the exposition format")
ROOT = Path(__file__).resolve().parents[2]


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, parsed by prometheus_client (which also checks the format)."""
    out = {}
    for family in parser.text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(all_samples: dict[Any, float], name: str, **labels: str) -> float:
    return all_samples[(name, tuple(sorted(labels.items())))]


def test_a_graph_run_is_counted_by_node_step_status_and_retry() -> None:
    async def case() -> tuple[RouterMetrics, list[tuple[int, bytes]]]:
        async with (
            raw_stub(http_answer(503, b"{}"), http_answer(200, b'{"predictions":[1]}')) as first,
            stubs(json_answer({"predictions": [2]})) as (second,),
        ):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"name": "first", "serviceUrl": first.url, "retry": {"initialDelayMs": 1}},
                            {"nodeName": "inner", "data": "$response"},
                        ],
                    },
                    "inner": {"routerType": "Switch", "steps": [{"serviceUrl": second.url, "condition": "instances"}]},
                }
            }
            g = parse_graph(orjson.dumps(spec))
            metrics = RouterMetrics(g)
            router = Router(g, ServiceClient(None), metrics=metrics)
            await router.client.start()
            try:
                answers = [(await router.handle(b'{"instances":[1]}', []))[:2] for _ in range(3)]
            finally:
                await router.client.close()
            return metrics, answers

    metrics, answers = asyncio.run(case())
    # the Switch gets the first answer ({"predictions":[1]}, no "instances"): 404 inside, 500 at the root
    assert [status for status, _ in answers] == [500, 500, 500]
    got = samples(metrics.render().decode())
    assert value(got, "kserve_router_requests_total", code="500") == 3
    assert value(got, "kserve_router_request_duration_seconds_count") == 3
    assert value(got, "kserve_router_node_requests_total", node="root", code="500") == 3
    assert value(got, "kserve_router_node_requests_total", node="inner", code="404") == 3
    assert value(got, "kserve_router_step_requests_total", node="root", step="first", code="503") == 1
    assert value(got, "kserve_router_step_requests_total", node="root", step="first", code="200") == 3
    assert value(got, "kserve_router_step_retries_total", node="root", step="first") == 1
    assert value(got, "kserve_router_step_duration_seconds_count", node="root", step="first") == 4
    # the Switch step (unnamed: its index) was never called, and its series exists at zero
    assert value(got, "kserve_router_step_duration_seconds_count", node="inner", step="0") == 0
    assert value(got, "kserve_router_step_retries_total", node="inner", step="0") == 0
    total = value(got, "kserve_router_request_duration_seconds_sum")
    overhead = value(got, "kserve_router_overhead_seconds_sum")
    waited = value(got, "kserve_router_step_duration_seconds_sum", node="root", step="first")
    assert 0 < overhead < total - waited + 1e-3  # the steps' time (and the retry's wait) is not overhead
    buckets = [value(got, "kserve_router_overhead_seconds_bucket", le=le) for le in ("0.0001", "0.001", "1.0", "+Inf")]
    assert buckets == sorted(buckets) and buckets[-1] == 3  # cumulative, the +Inf bucket holding every request


def test_transport_failures_are_counted_as_error() -> None:
    async def case() -> str:
        async with raw_stub(HANG_UP, RESET) as stub:
            g = parse_graph(orjson.dumps({"nodes": {"root": {"routerType": "Splitter", "steps": [
                {"name": "only", "serviceUrl": stub.url, "weight": 100, "retry": {"maxRetries": 1, "initialDelayMs": 1}}
            ]}}}))  # fmt: skip
            metrics = RouterMetrics(g)
            router = Router(g, ServiceClient(None), metrics=metrics)
            await router.client.start()
            try:
                status, _, _ = await router.handle(b"{}", [])
            finally:
                await router.client.close()
            assert status == 500
            return metrics.render().decode()

    got = samples(asyncio.run(case()))
    assert value(got, "kserve_router_step_requests_total", node="root", step="only", code="error") == 2
    assert value(got, "kserve_router_step_retries_total", node="root", step="only") == 1


def test_label_values_are_escaped() -> None:
    assert escape('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
    g = parse_graph(
        b'{"nodes":{"n\\"1":{"routerType":"Sequence","steps":[{"name":"s\\\\x","serviceUrl":"http://x"}]}}}'
    )
    got = samples(RouterMetrics(g).render().decode())
    assert value(got, "kserve_router_step_retries_total", node='n"1', step="s\\x") == 0


async def _serve(spec: dict[str, Any], **kwargs: Any) -> tuple[RouterServer, int]:
    g = parse_graph(orjson.dumps(spec))
    server = RouterServer(Router(g, ServiceClient(None), metrics=RouterMetrics(g)), g.timeouts, 0, **kwargs)
    port = await server.start("127.0.0.1", 0)
    return server, port


async def _fetch(url: str, data: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    def go() -> tuple[int, dict[str, str], bytes]:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=10) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read()

    return await asyncio.to_thread(go)


def test_metrics_have_their_own_port_and_every_path_of_the_graph_port_stays_the_graphs() -> None:
    async def case() -> None:
        async with stubs(json_answer({"predictions": [1]})) as (stub,):
            spec = {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceUrl": stub.url}]}}}
            server, port = await _serve(spec, metrics_port=0)
            try:
                status, _, body = await _fetch(f"http://127.0.0.1:{port}/metrics", b"{}")
                assert (status, body) == (200, b'{"predictions":[1]}') and stub.paths == ["/v1/models/m:predict"]
                status, headers, text = await _fetch(f"http://127.0.0.1:{server.metrics_port}/metrics")
                assert status == 200 and headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
                got = samples(text.decode())
                assert value(got, "kserve_router_requests_total", code="200") == 1
                assert value(got, "kserve_router_inflight_requests") == 0
                assert value(got, "process_cpu_seconds_total") > 0
                status, _, _ = await _fetch(f"http://127.0.0.1:{server.metrics_port}/other")
                assert status == 404
            finally:
                await server.close()

    asyncio.run(case())


def test_beyond_the_in_flight_limit_the_router_answers_503_with_retry_after() -> None:
    release = asyncio.Event()

    async def slow(body: bytes, headers: dict[str, list[str]]) -> tuple[int, bytes]:
        await release.wait()
        return 200, b'{"ok":1}'

    async def case() -> None:
        async with stubs(slow) as (stub,):
            spec = {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceUrl": stub.url}]}}}
            server, port = await _serve(spec, metrics_port=0, max_inflight=2)
            try:
                busy = [asyncio.create_task(_fetch(f"http://127.0.0.1:{port}/", b"{}")) for _ in range(2)]
                while server.inflight < 2:
                    await asyncio.sleep(0.01)
                status, headers, body = await _fetch(f"http://127.0.0.1:{port}/", b"{}")
                assert (status, headers["Retry-After"], headers["Content-Type"]) == (503, "1", "application/json")
                assert orjson.loads(body) == {
                    "error": "Failed to process request",
                    "cause": "too many requests in flight (the router's limit is 2)",
                }
                _, _, text = await _fetch(f"http://127.0.0.1:{server.metrics_port}/metrics")
                got = samples(text.decode())
                assert value(got, "kserve_router_inflight_requests") == 2
                assert value(got, "kserve_router_max_inflight_requests") == 2
                assert value(got, "kserve_router_rejected_requests_total") == 1
                release.set()
                assert [(await t)[0] for t in busy] == [200, 200]
                status, _, _ = await _fetch(f"http://127.0.0.1:{port}/", b"{}")  # room again
                assert status == 200 and server.inflight == 0
                # readiness is never limited
                ready = await _fetch(f"http://127.0.0.1:{port}/readyz")
                assert ready[0] == 200
            finally:
                await server.close()

    asyncio.run(case())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_python_m_router_serves_metrics_from_its_environment() -> None:
    port, metrics_port = _free_port(), _free_port()
    graph = '{"nodes":{"root":{"routerType":"Sequence","steps":[{"name":"a","serviceUrl":"http://127.0.0.1:9/x"}]}}}'
    env = {**os.environ, "ROUTER_METRICS_PORT": str(metrics_port), "ROUTER_MAX_INFLIGHT": "8"}
    argv = [sys.executable, "-m", "router", "--graph-json", graph, "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen([*argv, "--drain-seconds", "0"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline, text = time.monotonic() + 30, None
        while text is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as resp:
                    text = resp.read().decode()
            except OSError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.1)
        assert text is not None
        got = samples(text)
        assert value(got, "kserve_router_max_inflight_requests") == 8
        assert value(got, "kserve_router_step_duration_seconds_count", node="root", step="a") == 0
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert f"Prometheus metrics on port {metrics_port} at /metrics" in (proc.stderr.read() if proc.stderr else "")


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        ({"ROUTER_METRICS_PORT": "nine"}, [], "ROUTER_METRICS_PORT='nine': must be an integer"),
        ({"ROUTER_MAX_INFLIGHT": "-1"}, [], "ROUTER_MAX_INFLIGHT='-1': must be 0 or more"),
        ({}, ["--metrics-port", "70000"], "--metrics-port='70000': must be from 0 to 65535"),
    ],
)
def test_bad_settings_are_usage_errors_naming_them(env: dict[str, str], args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "router", "--graph-json", '{"nodes":{}}', *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
