"""KServe's InferenceGraph e2e scenarios (``test/e2e/graph/test_inference_graph.py``, scenarios 1-10 with their
``test-resources/ig_test_*_scenario_*.yaml``), ported: the two isvcs become stubs on 127.0.0.1 that answer as
KServe's test models do (200 ``{"predictions":[{"message":"SUCCESS"}]}``, 404 ``{"detail":"Intentional 404 code"}``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from router_stubs import json_answer, stubs

from router.client import ServiceClient
from router.engine import Router
from router.spec import parse_graph

SUCCESS = {"predictions": [{"message": "SUCCESS"}]}
ERROR = {"detail": "Intentional 404 code"}
NO_MATCH = {"error": "Failed to process request", "cause": "None of the routes matched with the switch condition"}
IRIS = {"instances": [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]]}


def picker(decision: str) -> dict[str, Any]:
    return {"decision_picker": decision, "key1": {"name": "abc"}}


def _switch(ok: str, err: str, hard: bool = False) -> dict[str, Any]:
    step = {"name": "node1Step1", "serviceUrl": err, "condition": "[@this].#(decision_picker==ERROR)"}
    if hard:
        step["dependency"] = "Hard"
    return {"routerType": "Switch", "steps": [step]}


def _splitter(err: str, hard: bool = False) -> dict[str, Any]:
    step: dict[str, Any] = {
        "name": "node1Step1",
        "weight": 100,
        "serviceUrl": err,
        "condition": "[@this].#(decision_picker==ERROR)",
    }
    if hard:
        step["dependency"] = "Hard"
    return {"routerType": "Splitter", "steps": [step]}


def _nested(node: dict[str, Any], ok: str, hard: bool) -> dict[str, Any]:
    return {
        "nodes": {
            "root": {
                "routerType": "Sequence",
                "steps": [
                    {"name": "rootStep1", "nodeName": "node1", "dependency": "Hard" if hard else "Soft"},
                    {"name": "rootStep2", "serviceUrl": ok},
                ],
            },
            "node1": node,
        }
    }


def scenarios(ok: str, err: str) -> dict[str, tuple[dict[str, Any], list[tuple[Any, int, Any]]]]:
    """name → (graph spec, [(request, expected status, expected body)])."""
    return {
        "1 sequence soft->soft ends on the error": (
            {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [{"serviceUrl": ok}, {"serviceUrl": err, "data": "$request"}],
                    }
                }
            },
            [(IRIS, 404, ERROR)],
        ),
        "2 sequence error(soft)->success": (
            {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [{"serviceUrl": err}, {"serviceUrl": ok, "data": "$request"}],
                    }
                }
            },
            [(IRIS, 200, SUCCESS)],
        ),
        "3 sequence hard error stops": (
            {
                "nodes": {
                    "root": {
                        "routerType": "Sequence",
                        "steps": [
                            {"name": "rootStep1", "serviceUrl": err, "dependency": "Hard"},
                            {"name": "rootStep2", "serviceUrl": ok, "dependency": "Soft"},
                        ],
                    }
                }
            },
            [(IRIS, 404, ERROR)],
        ),
        "4 switch error / success / no match": (
            {
                "nodes": {
                    "root": {
                        "routerType": "Switch",
                        "steps": [
                            {
                                "name": "rootStep1",
                                "serviceUrl": err,
                                "condition": "[@this].#(decision_picker==ERROR)",
                                "dependency": "Soft",
                            },
                            {
                                "name": "rootStep2",
                                "serviceUrl": ok,
                                "condition": "[@this].#(decision_picker==SUCCESS)",
                                "dependency": "Soft",
                            },
                        ],
                    }
                }
            },
            [(picker("ERROR"), 404, ERROR), (picker("SUCCESS"), 200, SUCCESS), (picker("NO_MATCH"), 404, NO_MATCH)],
        ),
        "5 nested switch soft": (_nested(_switch(ok, err), ok, hard=False), [(picker("ERROR"), 200, SUCCESS)]),
        "6 nested switch hard": (_nested(_switch(ok, err, hard=True), ok, hard=True), [(picker("ERROR"), 404, ERROR)]),
        "7 ensemble soft+soft merged": (
            {
                "nodes": {
                    "root": {
                        "routerType": "Ensemble",
                        "steps": [{"name": "rootStep1", "serviceUrl": ok}, {"name": "rootStep2", "serviceUrl": err}],
                    }
                }
            },
            [(picker("SUCCESS"), 200, {"rootStep1": SUCCESS, "rootStep2": ERROR})],
        ),
        "8 ensemble hard error returned": (
            {
                "nodes": {
                    "root": {
                        "routerType": "Ensemble",
                        "steps": [
                            {"name": "rootStep1", "serviceUrl": err, "dependency": "Hard"},
                            {"name": "rootStep2", "serviceUrl": ok},
                            {"name": "rootStep3", "serviceUrl": ok},
                        ],
                    }
                }
            },
            [(picker("SUCCESS"), 404, ERROR)],
        ),
        "9 nested splitter soft": (_nested(_splitter(err), ok, hard=False), [(picker("ERROR"), 200, SUCCESS)]),
        "10 nested splitter hard": (_nested(_splitter(err, hard=True), ok, hard=True), [(picker("ERROR"), 404, ERROR)]),
    }


NAMES = list(scenarios("", ""))


@pytest.mark.parametrize("name", NAMES)
def test_kserve_e2e_graph_scenario(name: str) -> None:
    async def case() -> None:
        async with stubs(json_answer(SUCCESS), json_answer(ERROR, 404)) as (ok, err):
            spec, calls = scenarios(ok.url, err.url)[name]
            g = parse_graph(orjson.dumps(spec))
            router = Router(g, ServiceClient(None))
            await router.client.start()
            try:
                for request, status, body in calls:
                    got_status, got_body, ctype = await router.handle(orjson.dumps(request), [])
                    assert (got_status, orjson.loads(got_body)) == (status, body), name
                    assert ctype == "application/json"
            finally:
                await router.client.close()

    asyncio.run(case())
