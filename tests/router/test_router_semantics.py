"""KServe router behaviour beyond its unit tests: dependencies, statuses, error bodies, Go JSON bytes."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from router_stubs import json_answer, stubs

from router.client import ServiceClient
from router.engine import Router, predictions_to_instances
from router.spec import SpecError, parse_graph


async def handle(spec: dict[str, Any], body: bytes, randbelow=None) -> tuple[int, bytes, str | None]:
    g = parse_graph(orjson.dumps(spec))
    kwargs = {"randbelow": randbelow} if randbelow else {}
    router = Router(g, ServiceClient(g.timeouts.service_client), **kwargs)
    await router.client.start()
    try:
        return await router.handle(body, [])
    finally:
        await router.client.close()


def run(coro):
    return asyncio.run(coro)


def seq(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"nodes": {"root": {"routerType": "Sequence", "steps": list(steps)}}}


def test_sequence_soft_failure_continues_and_last_status_wins() -> None:
    async def case():
        async with stubs(json_answer({"e": 1}, 503), json_answer({"ok": True}, 201)) as (a, b):
            status, body, _ = await handle(
                seq({"serviceUrl": a.url}, {"serviceUrl": b.url, "data": "$response"}), b"{}"
            )
            assert (status, body) == (201, b'{"ok":true}')
            assert b.bodies == [b'{"e":1}']  # the failing step's answer is chained

    run(case())


def test_sequence_hard_failure_stops_with_its_answer() -> None:
    async def case():
        async with stubs(json_answer({"e": 1}, 503), json_answer({"ok": True})) as (a, b):
            status, body, _ = await handle(
                seq({"serviceUrl": a.url, "dependency": "Hard"}, {"serviceUrl": b.url}), b"{}"
            )
            assert (status, body) == (503, b'{"e":1}')
            assert b.bodies == []

    run(case())


def test_sequence_without_response_data_sends_the_request_to_every_step() -> None:
    async def case():
        async with stubs(json_answer({"a": 1}), json_answer({"b": 2})) as (a, b):
            status, body, _ = await handle(
                seq({"serviceUrl": a.url}, {"serviceUrl": b.url, "data": "$response.x"}), b'{"in":1}'
            )
            assert b.bodies == [b'{"in":1}']  # only the exact "$response" chains
            assert (status, body) == (200, b'{"b":2}')

    run(case())


def test_condition_on_first_step_is_invalid_response() -> None:
    async def case():
        async with stubs(json_answer({})) as (a,):
            status, body, ctype = await handle(seq({"serviceUrl": a.url, "condition": "x"}), b"{}")
            assert (status, ctype) == (500, "application/json")
            assert body == b'{"error":"Failed to process request","cause":"invalid response"}'

    run(case())


SWITCH = {
    "nodes": {"root": {"routerType": "Switch", "steps": [{"serviceUrl": "http://127.0.0.1:1/x", "condition": "a"}]}}
}


def test_switch_without_match_is_404_at_the_root() -> None:
    status, body, _ = run(handle(SWITCH, b'{"b":1}'))
    assert status == 404
    assert (
        body == b'{"error":"Failed to process request","cause":"None of the routes matched with the switch condition"}'
    )
    assert run(handle(SWITCH, b"not json"))[0] == 404


def test_nested_failure_is_500() -> None:
    spec = {"nodes": {"root": {"routerType": "Sequence", "steps": [{"nodeName": "sw"}]}, "sw": SWITCH["nodes"]["root"]}}
    status, body, _ = run(handle(spec, b'{"b":1}'))
    assert status == 500
    assert orjson.loads(body)["cause"] == "None of the routes matched with the switch condition"


def test_transport_error_is_500_with_go_style_cause() -> None:
    status, body, _ = run(handle(seq({"serviceUrl": "http://127.0.0.1:1/x"}), b"{}"))
    assert status == 500
    assert orjson.loads(body)["cause"].startswith('Post "http://127.0.0.1:1/x": dial tcp 127.0.0.1:1: connect:')


def test_unknown_router_type_and_missing_node() -> None:
    status, body, _ = run(handle({"nodes": {"root": {"routerType": "Fanout"}}}, b"{}"))
    assert (status, orjson.loads(body)["cause"]) == (500, "invalid route type: Fanout")
    status, body, _ = run(handle({"nodes": {"other": {"routerType": "Sequence"}}}, b"{}"))
    assert (status, orjson.loads(body)["cause"]) == (500, "invalid route type: ")


def test_splitter_picks_by_cumulative_weight() -> None:
    async def case():
        async with stubs(json_answer({"s": "a"}), json_answer({"s": "b"})) as (a, b):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Splitter",
                        "steps": [{"serviceUrl": a.url, "weight": 30}, {"serviceUrl": b.url, "weight": 70}],
                    }
                }
            }
            assert (await handle(spec, b"{}", randbelow=lambda n: 29))[1] == b'{"s":"a"}'
            assert (await handle(spec, b"{}", randbelow=lambda n: 30))[1] == b'{"s":"b"}'
            short = {"nodes": {"root": {"routerType": "Splitter", "steps": [{"serviceUrl": a.url, "weight": 30}]}}}
            status, body, _ = await handle(short, b"{}", randbelow=lambda n: 50)
            assert (status, orjson.loads(body)["cause"]) == (500, "no route was selected by the splitter")

    run(case())


def test_splitter_and_switch_return_the_step_status_even_for_hard_failures() -> None:
    async def case():
        async with stubs(json_answer({"e": 1}, 502)) as (a,):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Splitter",
                        "steps": [{"serviceUrl": a.url, "weight": 100, "dependency": "Hard"}],
                    }
                }
            }
            assert (await handle(spec, b"{}"))[:2] == (502, b'{"e":1}')

    run(case())


def test_ensemble_merges_by_name_or_index_in_go_bytes() -> None:
    async def case():
        async with stubs(json_answer({"z": 1.0, "a": "<b>"}), json_answer({"p": [1e21]}, 500)) as (a, b):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Ensemble",
                        "steps": [{"name": "first", "serviceUrl": a.url}, {"serviceUrl": b.url}],
                    }
                }
            }
            status, body, ctype = await handle(spec, b"{}")
            assert (status, ctype) == (200, "application/json")  # a Soft failure is merged, status 200
            assert body == b'{"1":{"p":[1e+21]},"first":{"a":"\\u003cb\\u003e","z":1}}'

    run(case())


def test_ensemble_hard_failure_is_returned_re_encoded() -> None:
    async def case():
        async with stubs(json_answer({"ok": 1}), json_answer({"b": 2.0, "a": 1}, 422)) as (a, b):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Ensemble",
                        "steps": [
                            {"name": "x", "serviceUrl": a.url},
                            {"name": "y", "serviceUrl": b.url, "dependency": "Hard"},
                        ],
                    }
                }
            }
            assert (await handle(spec, b"{}"))[:2] == (422, b'{"a":1,"b":2}')

    run(case())


def test_ensemble_step_answer_must_be_an_object() -> None:
    async def case():
        async with stubs(json_answer([1, 2]), json_answer({"ok": 1})) as (a, b):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Ensemble",
                        "steps": [{"name": "x", "serviceUrl": a.url}, {"name": "y", "serviceUrl": b.url}],
                    }
                }
            }
            status, body, _ = await handle(spec, b"{}")
            assert status == 500
            assert (
                orjson.loads(body)["cause"]
                == "json: cannot unmarshal array into Go value of type map[string]interface {}"
            )

    run(case())


def test_non_json_answer_has_no_json_content_type() -> None:
    async def case():
        async with stubs(lambda body, headers: (200, b"plain text")) as (a,):
            status, body, ctype = await handle(seq({"serviceUrl": a.url}), b"{}")
            assert (status, body, ctype) == (200, b"plain text", None)

    run(case())


@pytest.mark.parametrize(
    ("request_body", "expected"),
    [
        (b'{"predictions":[1.0,{"b":1,"a":"<"}],"other":1}', b'{"instances":[1,{"a":"\\u003c","b":1}]}'),
        (b'{"Predictions":[1]}', b'{"instances":[1]}'),
        (b'{"predictions":[]}', b'{"predictions":[]}'),
        (b'{"predictions":[1],"instances":"x"}', b'{"predictions":[1],"instances":"x"}'),
        (b'{"predictions":"x"}', b'{"predictions":"x"}'),
        (b"[1]", b"[1]"),
        (b"nope", b"nope"),
    ],
)
def test_predictions_to_instances(request_body: bytes, expected: bytes) -> None:
    assert predictions_to_instances(request_body) == expected


def test_spec_errors_name_the_field() -> None:
    with pytest.raises(SpecError, match=r"nodes\.root\.steps\[0\]\.weight: must be an integer"):
        parse_graph(b'{"nodes":{"root":{"routerType":"Splitter","steps":[{"weight":"x"}]}}}')
    with pytest.raises(SpecError, match="does not parse"):
        parse_graph(b"{")
    g = parse_graph(
        b'{"nodes":{"root":{"RouterType":"Sequence","steps":[{"ServiceURL":"http://a"}]}},"extra":1,'
        b'"routerTimeouts":{"serviceClient":5}}'
    )
    assert g.nodes["root"].router_type == "Sequence" and g.nodes["root"].steps[0].service_url == "http://a"
    assert (g.timeouts.service_client, g.timeouts.server_read) == (5, 60)


def test_service_client_timeout() -> None:
    async def slow(body: bytes, headers: Any) -> tuple[int, bytes]:
        await asyncio.sleep(2)
        return 200, b"{}"

    async def case():
        async with stubs(slow) as (a,):
            spec = seq({"serviceUrl": a.url})
            spec["routerTimeouts"] = {"serviceClient": 1}
            status, body, _ = await handle(spec, b"{}")
            assert status == 500 and "Client.Timeout exceeded" in orjson.loads(body)["cause"]

    run(case())


def test_outbound_headers_canonical_names_all_values_and_never_copied() -> None:
    from router.client import canonical_header, compile_patterns, outbound_headers

    patterns, _ = compile_patterns(["X-Request-Id", ".*-Trace", "Host", "Content-Length", "Content-Type"])
    inbound = [
        ("x-request-id", "a"),
        ("X-REQUEST-ID", "b"),
        ("b3-trace", "t"),
        ("Host", "h"),
        ("Content-Length", "9"),
        ("content-type", "text/plain"),
        ("Authorization", "secret"),
    ]
    assert outbound_headers(inbound, patterns) == [
        ("X-Request-Id", "a"),
        ("X-Request-Id", "b"),
        ("B3-Trace", "t"),
        ("Content-Type", "text/plain"),
    ]
    assert outbound_headers(inbound, []) == [("Content-Type", "application/json")]
    assert canonical_header("weird header") == "weird header"


def test_sequence_without_steps_gives_no_answer() -> None:
    import asyncio as aio

    from router.server import RouterServer

    async def case() -> bytes:
        g = parse_graph(b'{"nodes":{"root":{"routerType":"Sequence"}}}')
        server = RouterServer(Router(g, ServiceClient(None)), g.timeouts, drain_seconds=0)
        port = await server.start("127.0.0.1", 0)
        try:
            reader, writer = await aio.open_connection("127.0.0.1", port)
            writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            data = await aio.wait_for(reader.read(), 5)
            writer.close()
            return data
        finally:
            await server.close()

    assert run(case()) == b""  # KServe's Go server panics on status 0 and closes the connection


def test_ensemble_failure_returns_without_waiting_for_slower_steps() -> None:
    import time

    async def slow(body: bytes, headers: Any) -> tuple[int, bytes]:
        await asyncio.sleep(3)
        return 200, b"{}"

    async def case() -> tuple[int, str, float]:
        async with stubs(slow) as (a,):
            spec = {
                "nodes": {
                    "root": {
                        "routerType": "Ensemble",
                        "steps": [
                            {"name": "slow", "serviceUrl": a.url},
                            {"name": "down", "serviceUrl": "http://127.0.0.1:1/x"},
                        ],
                    }
                }
            }
            start = time.monotonic()
            status, body, _ = await handle(spec, b"{}")
            return status, orjson.loads(body)["cause"], time.monotonic() - start

    status, cause, seconds = run(case())
    assert status == 500 and cause.startswith('Post "http://127.0.0.1:1/x": dial tcp')
    assert seconds < 2.5  # as KServe, the first failure answers at once
