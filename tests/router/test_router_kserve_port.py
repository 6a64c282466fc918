"""The cases of KServe's ``cmd/router/main_test.go``, ported: stub backends on 127.0.0.1, the Python router."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import orjson
import pytest
from router_stubs import echo_headers, json_answer, stubs

from router.client import (
    CallError,
    ServiceClient,
    compile_patterns,
    outbound_headers,
    parse_target,
)
from router.engine import Router, pick_weighted
from router.server import RouterServer
from router.spec import Step, parse_graph


def graph(spec: dict[str, Any]):
    return parse_graph(orjson.dumps(spec))


async def route(spec: dict[str, Any], body: Any, headers: list[tuple[str, str]] | None = None, patterns=()):
    g = graph(spec)
    client = ServiceClient(g.timeouts.service_client)
    await client.start()
    try:
        router = Router(g, client, patterns)
        return await router.route("root", orjson.dumps(body), outbound_headers(headers or [], list(patterns)))
    finally:
        await client.close()


def test_simple_model_chainer() -> None:
    async def case() -> None:
        async with stubs(json_answer({"predictions": "1"}), json_answer({"predictions": "2"})) as (m1, m2):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"name": "model1", "serviceUrl": m1.url, "mapPredictionsToInstances": True},
                            {"name": "model2", "serviceUrl": m2.url, "data": "$response"},
                        ],
                    }
                }
            }
            body, status = await route(spec, {"predictions": ["test", "test2"]}, [("Authorization", "Bearer Token")])
            assert "instances" in orjson.loads(m1.bodies[0])
            assert orjson.loads(m1.bodies[0]) == {"instances": ["test", "test2"]}
            assert "predictions" in orjson.loads(m2.bodies[0])
            assert orjson.loads(body) == {"predictions": "2"}
            assert status == 200

    asyncio.run(case())


def test_simple_model_ensemble() -> None:
    async def case() -> None:
        async with stubs(json_answer({"predictions": "1"}), json_answer({"predictions": "2"})) as (m1, m2):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Ensemble",
                        "steps": [{"name": "model1", "serviceUrl": m1.url}, {"name": "model2", "serviceUrl": m2.url}],
                    }
                }
            }
            body, status = await route(spec, {"instances": ["test", "test2"]}, [("Authorization", "Bearer Token")])
            assert orjson.loads(body) == {"model1": {"predictions": "1"}, "model2": {"predictions": "2"}}
            assert status == 200

    asyncio.run(case())


def _labelled(label: str, scores: list[float]):
    return json_answer({"predictions": [{"label": label, "score": scores}]})


def test_inference_graph_with_condition() -> None:
    async def case() -> None:
        async with stubs(
            _labelled("cat", [0.1, 0.9]),
            _labelled("dog", [0.8, 0.2]),
            _labelled("beagle", [0.1, 0.9]),
            _labelled("poodle", [0.8, 0.2]),
        ) as (m1, m2, m3, m4):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"name": "step1", "nodeName": "animal-categorize"},
                            {
                                "name": "step2",
                                "nodeName": "breed-categorize",
                                "condition": 'predictions.#(label=="dog")',
                            },
                        ],
                    },
                    "animal-categorize": {
                        "routerType": "Switch",
                        "steps": [
                            {"name": "model1", "serviceUrl": m1.url, "condition": 'instances.#(modelId=="1")'},
                            {"name": "model2", "serviceUrl": m2.url, "condition": 'instances.#(modelId=="2")'},
                        ],
                    },
                    "breed-categorize": {
                        "routerType": "Ensemble",
                        "steps": [{"name": "model3", "serviceUrl": m3.url}, {"name": "model4", "serviceUrl": m4.url}],
                    },
                }
            }
            body, status = await route(spec, {"instances": [{"modelId": "2"}]}, [("Authorization", "Bearer Token")])
            response = orjson.loads(body)
            assert response["model3"] == {"predictions": [{"label": "beagle", "score": [0.1, 0.9]}]}
            assert response["model4"] == {"predictions": [{"label": "poodle", "score": [0.8, 0.2]}]}
            assert (len(m1.bodies), len(m2.bodies)) == (0, 1)
            assert status == 200

    asyncio.run(case())


def test_inference_graph_sequence_with_unmet_condition() -> None:
    async def case() -> None:
        async with stubs(_labelled("cat", [0.8, 0.2])) as (m1,):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"name": "step1", "serviceUrl": m1.url},
                            {"name": "step2", "serviceUrl": "http://dummy", "condition": 'predictions.#(label=="dog")'},
                        ],
                    }
                }
            }
            body, status = await route(spec, {"instances": [{"modelId": "1"}]})
            assert status == 200  # the condition for step2 is unmet: 200 with step1's answer
            assert orjson.loads(body) == {"predictions": [{"label": "cat", "score": [0.8, 0.2]}]}

    asyncio.run(case())


async def _call_with_patterns(patterns: list[str], headers: list[tuple[str, str]]) -> dict[str, Any]:
    compiled, _ = compile_patterns(patterns)
    async with stubs(echo_headers) as (m1,):
        client = ServiceClient(None)
        await client.start()
        try:
            body, status = await client.post(
                parse_target(m1.url),
                orjson.dumps({"instances": ["test", "test2"]}),
                outbound_headers(headers, compiled),
            )
        finally:
            await client.close()
    assert status == 200
    received = orjson.loads(body)["headers"]
    return {name: values[0] for name, values in received.items() if any(p.search(name) for p in compiled)}


HEADERS = [("Authorization", "Bearer Token"), ("Test-Header-Key", "Test-Header-Value")]


def test_call_service_when_no_headers_to_propagate() -> None:
    received = asyncio.run(_call_with_patterns([], HEADERS))
    assert received == {}


def test_call_service_when_no_headers_to_propagate_sends_only_content_type() -> None:
    async def case() -> dict[str, list[str]]:
        async with stubs(echo_headers) as (m1,):
            client = ServiceClient(None)
            await client.start()
            try:
                await client.post(parse_target(m1.url), b"{}", outbound_headers(HEADERS, []))
            finally:
                await client.close()
            return m1.headers[0]

    got = asyncio.run(case())
    assert got["Content-Type"] == ["application/json"]
    assert "Authorization" not in got and "Test-Header-Key" not in got


def test_call_service_when_1_header_to_propagate() -> None:
    received = asyncio.run(_call_with_patterns(["Test-Header-Key"], HEADERS))
    assert received == {"Test-Header-Key": "Test-Header-Value"}


def test_call_service_when_multiple_headers_to_propagate() -> None:
    received = asyncio.run(_call_with_patterns(["Test-Header-Key", "Authorization"], HEADERS))
    assert received == {"Test-Header-Key": "Test-Header-Value", "Authorization": "Bearer Token"}


def test_malformed_url() -> None:
    async def case() -> None:
        client = ServiceClient(None)
        await client.start()
        try:
            with pytest.raises(CallError, match="invalid character"):
                await client.post(parse_target("http://single-1.default.{$your-domain}/switch"), b"", [])
        finally:
            await client.close()
        spec = {
            "nodes": {
                "root": {
                    "routerType": "Sequence",
                    "steps": [{"serviceUrl": "http://single-1.default.{$your-domain}/switch"}],
                }
            }
        }
        g = graph(spec)
        router = Router(g, ServiceClient(None))
        await router.client.start()
        status, body, ctype = await router.handle(b"", [])
        await router.client.close()
        assert status == 500 and ctype == "application/json"
        assert orjson.loads(body)["error"] == "Failed to process request"

    asyncio.run(case())


MANY = [
    ("Authorization", "Bearer Token"),
    ("Test-Header-1", "Test-Header-1"),
    ("Test-Header-2", "Test-Header-2"),
    ("Test-Header-3", "Test-Header-3"),
]


def test_call_service_when_multiple_headers_to_propagate_using_patterns() -> None:
    received = asyncio.run(_call_with_patterns(["Test-Header-*", "Auth*"], MANY))
    assert received == {
        "Test-Header-1": "Test-Header-1",
        "Test-Header-2": "Test-Header-2",
        "Test-Header-3": "Test-Header-3",
        "Authorization": "Bearer Token",
    }


def test_call_service_when_multiple_headers_to_propagate_using_invalid_pattern() -> None:
    compiled, errors = compile_patterns(["Test-Header-[0-9", "Auth*"])
    assert len(errors) == 1 and "Test-Header-[0-9" in errors[0]
    assert [p.pattern for p in compiled] == ["Auth*"]
    received = asyncio.run(_call_with_patterns(["Test-Header-[0-9", "Auth*"], MANY))
    assert received == {"Authorization": "Bearer Token"}  # the invalid pattern is ignored


@pytest.mark.parametrize(
    ("server_timeout", "step_seconds", "expect_error"),
    [(None, 0.001, False), (1, 1.0, True), (2, 0.5, False)],
    ids=["default", "timeout", "success"],
)
def test_server_timeout(server_timeout: int | None, step_seconds: float, expect_error: bool) -> None:
    async def slow(answer: bytes):
        async def handler(body: bytes, headers: Any) -> tuple[int, bytes]:
            await asyncio.sleep(step_seconds)
            return 200, answer

        return handler

    async def case() -> None:
        async with stubs(await slow(b'{"predictions":"1"}'), await slow(b'{"predictions":"2"}')) as (m1, m2):
            spec: dict[str, Any] = {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"name": "model1", "serviceUrl": m1.url},
                            {"name": "model2", "serviceUrl": m2.url, "data": "$response"},
                        ],
                    }
                }
            }
            if server_timeout is not None:
                spec["routerTimeouts"] = {
                    "serverRead": server_timeout,
                    "serverWrite": server_timeout,
                    "serverIdle": server_timeout,
                }
            g = graph(spec)
            server = RouterServer(Router(g, ServiceClient(None)), g.timeouts, drain_seconds=0)
            port = await server.start("127.0.0.1", 0)
            try:
                async with aiohttp.ClientSession() as session:
                    if expect_error:
                        with pytest.raises(aiohttp.ServerDisconnectedError):
                            await session.post(f"http://127.0.0.1:{port}", data=b"")
                    else:
                        async with session.post(f"http://127.0.0.1:{port}", data=b"") as resp:
                            assert resp.status == 200
                            assert orjson.loads(await resp.read()) == {"predictions": "2"}
            finally:
                await server.close()

    asyncio.run(case())


def _weighted(w1: int, w2: int) -> tuple[Step, ...]:
    return (
        Step(name="model1", service_url="http://example.com/model1", weight=w1),
        Step(name="model2", service_url="http://example.com/model2", weight=w2),
    )


@pytest.mark.parametrize("weights", [(20, 80), (30, 70)])
def test_pickup_route_never_returns_nil(weights: tuple[int, int]) -> None:
    steps = _weighted(*weights)
    picks = [pick_weighted(steps, point) for point in range(100)]  # every value the random draw can take
    assert None not in picks
    assert picks.count(0) == weights[0] and picks.count(1) == weights[1]


def test_router_random_draw_upper_bound() -> None:
    draws = []
    router = Router(graph({"nodes": {}}), ServiceClient(None), randbelow=lambda n: draws.append(n) or 99)
    assert router._randbelow(100) == 99 and draws == [100]
    import secrets

    values = {secrets.randbelow(100) for _ in range(20_000)}
    assert min(values) >= 0 and max(values) < 100
