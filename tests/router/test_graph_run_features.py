"""``kserve-compile graph run`` with the router's features: a Sequence whose first step fails once is answered by
the second attempt with retries configured and fails as KServe does without; ``--trace`` shows each attempt; a
served graph with metrics on answers ``/metrics``."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import urllib.request
from pathlib import Path

import orjson
import pytest
from router_stubs import HANG_UP, http_answer, raw_stub

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "import cli; cli.main()"]

GRAPH = """\
apiVersion: serving.kserve.io/v1alpha1
kind: InferenceGraph
metadata:
  name: flaky-chain
  annotations:
{annotations}
spec:
{retry}
  nodes:
    root:
      routerType: Sequence
      steps:
      - name: first
        serviceUrl: http://first.default.svc.cluster.local/v1/models/first:predict
      - name: second
        serviceUrl: http://second.default.svc.cluster.local/v1/models/second:predict
        data: $response
"""


async def _graph_run(graph: Path, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *CLI,
        "graph",
        "run",
        str(graph),
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _write(tmp_path: Path, retry: str = "", annotations: str = "    example.com/x: y") -> Path:
    path = tmp_path / "graph.yaml"
    path.write_text(GRAPH.format(retry=retry, annotations=annotations))
    return path


@pytest.mark.parametrize("configured_by", ["spec", "annotation"])
def test_a_step_failing_once_is_answered_by_its_second_attempt(tmp_path: Path, configured_by: str) -> None:
    if configured_by == "spec":
        graph = _write(tmp_path, retry="  defaultRetry:\n    maxRetries: 2\n    initialDelayMs: 20")
    else:
        value = '{"steps": {"root": {"first": {"maxRetries": 2, "initialDelayMs": 20}}}}'
        graph = _write(tmp_path, annotations=f"    kserve-compile.io/router-retry: '{value}'")

    async def case() -> tuple[int, str, str, list[bytes]]:
        async with (
            raw_stub(HANG_UP, http_answer(200, b'{"predictions":[1]}')) as first,
            raw_stub(http_answer(200, b'{"predictions":[2]}')) as second,
        ):
            code, out, err = await _graph_run(
                graph, "-b", f"first={first.base}", "-b", f"second={second.base}", "--trace", "-d", '{"x":1}'
            )
            return code, out, err, first.requests

    code, out, err, requests = asyncio.run(case())
    assert code == 0, err
    assert orjson.loads(out) == {"predictions": [2]} and len(requests) == 2
    lines = [line for line in err.splitlines() if line.startswith("trace:")]
    assert lines[0].startswith('trace: root[0] "first" -> http://127.0.0.1:')
    assert ": failed: Post " in lines[0] and ": EOF in " in lines[0]
    assert lines[0].endswith(" ms)") and "(attempt 1 of 3; retrying in " in lines[0]
    assert ": 200 in " in lines[1] and lines[1].endswith("(attempt 2 of 3)")
    assert lines[2].startswith('trace: root[1] "second"')
    # the graph's default covers "second" too; the annotation named "first" only
    assert lines[2].endswith("(attempt 1 of 3)") == (configured_by == "spec")
    assert "status: 200" in err


def test_without_retries_the_first_failure_is_kserves_error(tmp_path: Path) -> None:
    graph = _write(tmp_path)

    async def case() -> tuple[int, str, str, int]:
        async with (
            raw_stub(HANG_UP, http_answer(200, b'{"predictions":[1]}')) as first,
            raw_stub(http_answer(200, b'{"predictions":[2]}')) as second,
        ):
            code, out, err = await _graph_run(
                graph, "-b", f"first={first.base}", "-b", f"second={second.base}", "--trace", "-d", '{"x":1}'
            )
            return code, out, err, len(first.requests) + len(second.requests)

    code, out, err, calls = asyncio.run(case())
    assert code == 1 and calls == 1
    answer = orjson.loads(out)
    assert answer["error"] == "Failed to process request"
    assert answer["cause"].startswith('Post "http://127.0.0.1:') and answer["cause"].endswith(
        '/v1/models/first:predict": EOF'
    )
    assert "status: 500" in err and "(attempt" not in err  # the trace is as it was before retries existed


def test_a_served_graph_with_metrics_on_answers_metrics_and_its_limit(tmp_path: Path) -> None:
    annotations = (
        '    serving.kserve.io/enable-prometheus-scraping: "true"\n    kserve-compile.io/router-max-inflight: "5"'
    )
    graph = _write(tmp_path, annotations=annotations)

    async def case() -> tuple[str, str]:
        async with (
            raw_stub(http_answer(200, b'{"predictions":[1]}')) as first,
            raw_stub(http_answer(200, b'{"predictions":[2]}')) as second,
        ):
            proc = await asyncio.create_subprocess_exec(
                *CLI,
                "graph",
                "run",
                str(graph),
                "-b",
                f"first={first.base}",
                "-b",
                f"second={second.base}",
                "--port",
                "0",
                cwd=ROOT,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            assert proc.stderr is not None
            lines: list[str] = []
            try:
                while len(lines) < 3:
                    line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
                    assert line, "graph run exited: " + "".join(lines)
                    lines.append(line)
                graph_url = lines[0].split(" on ")[1].split()[0]
                metrics_url = lines[1].split(" on ")[1].strip()
                for _ in range(3):
                    request = urllib.request.Request(graph_url + "/v1/any", data=b'{"instances":[1]}')
                    answer = await asyncio.to_thread(lambda r=request: urllib.request.urlopen(r, timeout=10).read())
                    assert answer == b'{"predictions":[2]}'
                text = await asyncio.to_thread(lambda: urllib.request.urlopen(metrics_url, timeout=10).read())
            finally:
                proc.send_signal(signal.SIGINT)
                await asyncio.wait_for(proc.wait(), 30)
            return "".join(lines), text.decode()

    banner, text = asyncio.run(case())
    assert "at most 5 requests in flight; more are answered 503" in banner
    assert 'kserve_router_requests_total{code="200"} 3' in text
    assert 'kserve_router_step_requests_total{node="root",step="second",code="200"} 3' in text
    assert "kserve_router_max_inflight_requests 5" in text
