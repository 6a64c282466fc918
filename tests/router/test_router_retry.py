"""Router retries (kserve/kserve PR #5386's ``defaultRetry`` / ``retry``): what is retried, how long it waits, the
graph's deadline, and KServe's behaviour (no retry) without them."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson
import pytest
from router_stubs import HANG_UP, RESET, SILENT, http_answer, raw_stub, refused_url

from router.client import ServiceClient
from router.engine import Router, TraceEvent
from router.retry import RetryPolicy
from router.spec import SpecError, parse_graph

OK = http_answer(200, b'{"predictions":[2]}')
UNAVAILABLE = http_answer(503, b'{"error":"cold"}')
FAST = {"maxRetries": 3, "initialDelayMs": 1, "maxDelayMs": 5}


def seq(*steps: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {**spec, "nodes": {"root": {"routerType": "Sequence", "steps": list(steps)}}}


async def handle(spec: dict[str, Any], body: bytes = b'{"instances":[1]}') -> tuple[int, bytes, list[TraceEvent]]:
    g = parse_graph(orjson.dumps(spec))
    events: list[TraceEvent] = []
    router = Router(g, ServiceClient(g.timeouts.service_client), tracer=events.append, jitter=lambda: 0.5)
    await router.client.start()
    try:
        status, answer, _ = await router.handle(body, [])
    finally:
        await router.client.close()
    return status, answer, events


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.mark.parametrize("failure", [HANG_UP, RESET, UNAVAILABLE, http_answer(502, b"{}"), http_answer(504, b"{}")])
def test_a_step_failing_once_is_answered_by_its_second_attempt(failure: bytes | str) -> None:
    async def case() -> None:
        async with raw_stub(failure, OK) as stub:
            status, body, events = await handle(seq({"name": "first", "serviceUrl": stub.url, "retry": FAST}))
            assert (status, body) == (200, b'{"predictions":[2]}')
            assert len(stub.requests) == 2 and stub.requests[0] == stub.requests[1] == b'{"instances":[1]}'
            assert [(e.attempt, e.attempts) for e in events] == [(1, 4), (2, 4)]
            assert events[0].retry_in is not None and events[1].retry_in is None

    run(case())


@pytest.mark.parametrize(
    ("failure", "status", "cause"),
    [
        (HANG_UP, 500, 'Post "{url}": EOF'),
        (RESET, 500, 'Post "{url}": read tcp '),
        (UNAVAILABLE, 503, None),
    ],
)
def test_without_a_retry_config_the_first_failure_stands_as_in_kserve(
    failure: bytes | str, status: int, cause: str | None
) -> None:
    async def case() -> None:
        async with raw_stub(failure, OK) as stub:
            got, body, events = await handle(seq({"name": "first", "serviceUrl": stub.url}))
            assert got == status and len(stub.requests) == 1
            if cause is None:
                assert body == b'{"error":"cold"}'  # a Soft step's status and answer, as KServe returns them
            else:
                error = orjson.loads(body)
                assert error["error"] == "Failed to process request"
                assert error["cause"].startswith(cause.format(url=stub.url))
            assert [(e.attempt, e.attempts) for e in events] == [(0, 0)]  # traced as before: no attempt numbers

    run(case())


@pytest.mark.parametrize("answer", [http_answer(500, b'{"e":1}'), http_answer(404, b"{}"), http_answer(429, b"{}")])
def test_answers_that_are_not_transient_are_not_retried(answer: bytes) -> None:
    async def case() -> None:
        async with raw_stub(answer, OK) as stub:
            status, _, events = await handle(seq({"serviceUrl": stub.url, "retry": FAST}))
            assert status == int(answer.split()[1]) and len(stub.requests) == 1
            assert events[0].retry_in is None and events[0].no_retry == ""

    run(case())


def test_a_failure_inside_the_body_is_not_retried() -> None:
    """The status and headers came: the step has answered, part of it was lost."""
    broken = b'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"partial'

    async def case() -> None:
        async with raw_stub(broken + b"", OK) as stub:
            # the stub keeps the connection open: the body never completes, so the call times out in the body
            status, body, _ = await handle(
                seq({"serviceUrl": stub.url, "retry": FAST}, routerTimeouts={"serviceClient": 1})
            )
            assert status == 500 and len(stub.requests) == 1
            assert b"while reading body" in body

    run(case())


def test_a_timeout_before_any_answer_byte_is_retried() -> None:
    async def case() -> None:
        async with raw_stub(SILENT, OK) as stub:
            spec = seq({"serviceUrl": stub.url, "retry": FAST}, routerTimeouts={"serviceClient": 1})
            status, body, events = await handle(spec)
            assert (status, body) == (200, b'{"predictions":[2]}')
            assert "Client.Timeout exceeded while awaiting headers" in events[0].error

    run(case())


def test_refused_connections_are_retried_up_to_max_retries_then_the_error_stands() -> None:
    url = refused_url()
    status, body, events = run(handle(seq({"serviceUrl": url, "retry": {**FAST, "maxRetries": 2}})))
    assert status == 500 and b"connect: connection refused" in body
    assert [e.attempt for e in events] == [1, 2, 3]
    assert events[-1].no_retry == "no retries left" and events[-1].retry_in is None


def test_a_dns_failure_is_not_retried() -> None:
    status, body, events = run(handle(seq({"serviceUrl": "http://no-such-host.invalid/x", "retry": FAST})))
    assert status == 500 and b"no such host" in body and len(events) == 1


def test_the_step_retry_wins_over_the_graph_default_and_zero_turns_it_off() -> None:
    async def case() -> None:
        async with raw_stub(UNAVAILABLE, OK) as a, raw_stub(UNAVAILABLE, OK) as b:
            spec = seq(
                {"serviceUrl": a.url, "retry": {"maxRetries": 0}},
                {"serviceUrl": b.url},
                defaultRetry=FAST,
            )
            status, _, events = await handle(spec)
            assert status == 200  # b was retried under the default; a's 503 was passed on (Soft)
            assert len(a.requests) == 1 and len(b.requests) == 2
            assert b.requests[0] == b'{"instances":[1]}'  # data is not $response: each step gets the request
            assert [(e.index, e.attempt) for e in events] == [(0, 0), (1, 1), (1, 2)]

    run(case())


def test_an_ensemble_member_is_retried_alone() -> None:
    async def case() -> None:
        async with raw_stub(HANG_UP, OK) as flaky, raw_stub(http_answer(200, b'{"s":1}')) as stable:
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Ensemble",
                        "steps": [
                            {"name": "flaky", "serviceUrl": flaky.url, "retry": FAST},
                            {"name": "stable", "serviceUrl": stable.url},
                        ],
                    }
                }
            }
            status, body, _ = await handle(spec)
            assert status == 200 and orjson.loads(body) == {"flaky": {"predictions": [2]}, "stable": {"s": 1}}
            assert len(flaky.requests) == 2 and len(stable.requests) == 1

    run(case())


def test_no_retry_waits_past_the_graphs_deadline() -> None:
    async def case() -> None:
        async with raw_stub(UNAVAILABLE, OK) as stub:
            retry = {"maxRetries": 3, "initialDelayMs": 5000, "maxDelayMs": 5000}
            spec = seq({"serviceUrl": stub.url, "retry": retry}, routerTimeouts={"serverWrite": 2})
            start = time.monotonic()
            status, _, events = await handle(spec)
            assert time.monotonic() - start < 1.5
            assert status == 503 and len(stub.requests) == 1
            assert "past the request's 2 s deadline" in events[0].no_retry

    run(case())


def test_spec_timeout_is_a_deadline_too() -> None:
    g = parse_graph(orjson.dumps(seq({"serviceUrl": "http://x"}, timeout=5, routerTimeouts={"serverWrite": 30})))
    assert Router(g, ServiceClient(None)).deadline_s == 5.0


def test_backoff_is_exponential_capped_and_jittered_within_half() -> None:
    policy = RetryPolicy(max_retries=10, initial_delay_ms=100, max_delay_ms=1000)
    assert [policy.delay(n, 0.999999) for n in (1, 2, 3, 4, 5)] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0], rel=1e-5)
    assert [policy.delay(n, 0.0) for n in (1, 2, 5)] == pytest.approx([0.05, 0.1, 0.5])
    assert RetryPolicy().attempts == 4 and RetryPolicy(max_retries=0).attempts == 1


def test_the_waits_between_attempts_follow_the_policy() -> None:
    async def case() -> list[float]:
        async with raw_stub(UNAVAILABLE, UNAVAILABLE, OK) as stub:
            retry = {"maxRetries": 2, "initialDelayMs": 40, "maxDelayMs": 1000}
            _, _, events = await handle(seq({"serviceUrl": stub.url, "retry": retry}))
            return [e.retry_in for e in events if e.retry_in is not None]

    assert run(case()) == pytest.approx([0.030, 0.060])  # jitter 0.5: 3/4 of 40 ms, then of 80 ms


@pytest.mark.parametrize(
    ("retry", "message"),
    [
        ({"maxRetries": 11}, "defaultRetry.maxRetries: must be between 0 and 10, not 11"),
        ({"initialDelayMs": -1}, "defaultRetry.initialDelayMs: must be at least 0, not -1"),
        ({"maxDelayMs": "5"}, "defaultRetry.maxDelayMs: must be an integer, not a string"),
        ([], "defaultRetry: must be an object, not a list"),
    ],
)
def test_bad_retry_configs_are_errors_naming_the_field(retry: Any, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        parse_graph(orjson.dumps({"defaultRetry": retry, "nodes": {}}))


def test_retry_fields_match_without_regard_to_case_as_go_decodes_them() -> None:
    g = parse_graph(b'{"DefaultRetry":{"MAXRETRIES":2},"nodes":{"root":{"steps":[{"Retry":{"initialdelayms":7}}]}}}')
    assert g.default_retry == RetryPolicy(max_retries=2)
    assert g.nodes["root"].steps[0].retry == RetryPolicy(initial_delay_ms=7)
