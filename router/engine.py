"""Routing a request through the graph: KServe's ``routeStep``, ``executeStep`` and ``graphHandler``
(``cmd/router/main.go``).

* **Sequence**: steps in order; ``data: $response`` sends the previous step's response (the exact string only);
  ``mapPredictionsToInstances`` turns ``{"predictions": [...]}`` into ``{"instances": [...]}``; a ``condition`` is
  a gjson path on the *previous response*: an invalid previous response is a 500 ``invalid response``, an unmet
  condition ends the sequence with the previous response and 200; a ``Hard`` step answering non-2xx ends it with
  that answer; otherwise the last step's body and status.
* **Switch**: the first step whose condition exists in the *request*; none (or a request that is not JSON) is a 404.
* **Splitter**: a random number in [0, 100) against the cumulative weights.
* **Ensemble**: all steps at once on the request; every answer must be a JSON object; the first ``Hard`` step (in
  step order) answering non-2xx is returned as is, otherwise the answers merged by step name (index when unnamed),
  200.
* A failing nested node makes its parent fail with 500; only the root's own status (404 of a Switch) reaches the
  client. Errors become ``{"error":"Failed to process request","cause":"..."}``.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from . import gjson
from .client import CallError, ServiceClient, Target, outbound_headers, parse_target
from .gojson import DecodeError, dumps, loads, valid
from .spec import (
    ENSEMBLE,
    HARD,
    RESPONSE_DATA,
    ROOT_NODE,
    SEQUENCE,
    SPLITTER,
    SWITCH,
    Graph,
    Node,
    Step,
)

ERROR_MESSAGE = "Failed to process request"
NO_SPLITTER_ROUTE = "no route was selected by the splitter"
NO_SWITCH_ROUTE = "None of the routes matched with the switch condition"
INVALID_RESPONSE = "invalid response"


class RouteError(Exception):
    """A routing failure: the HTTP status it gives and the cause KServe reports."""

    def __init__(self, status: int, cause: str) -> None:
        super().__init__(cause)
        self.status = status
        self.cause = cause


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One step executed: what it was sent and what it answered (``status`` 0 and ``error`` set on failure)."""

    node: str
    index: int
    step: Step
    target: str
    request: bytes
    status: int
    response: bytes
    seconds: float
    error: str = ""


Tracer = Callable[[TraceEvent], None]
_EMPTY_NODE = Node("", ())


def is_success(status: int) -> bool:
    return 200 <= status <= 299


def error_body(cause: str) -> bytes:
    """``prepareErrorResponse``: Go's ``json.Marshal`` of ``InferenceGraphRoutingError``."""
    return b'{"error":"' + ERROR_MESSAGE.encode() + b'","cause":' + dumps(cause) + b"}"


class Router:
    """The graph, its parsed service URLs and the client; ``handle`` serves one request."""

    def __init__(
        self,
        graph: Graph,
        client: ServiceClient,
        patterns: Iterable[Any] = (),
        *,
        tracer: Tracer | None = None,
        randbelow: Callable[[int], int] = secrets.randbelow,
    ) -> None:
        self.graph = graph
        self.client = client
        self.patterns = list(patterns)
        self.tracer = tracer
        self._randbelow = randbelow
        self._targets: dict[int, Target] = {}
        self._root_encodes = graph.nodes.get(ROOT_NODE, _EMPTY_NODE).router_type == ENSEMBLE
        for node in graph.nodes.values():
            for step in node.steps:
                if not step.node_name:
                    self._targets[id(step)] = parse_target(step.service_url)

    async def handle(self, body: bytes, headers: Iterable[tuple[str, str]]) -> tuple[int, bytes, str | None]:
        """``graphHandler``: (status, body, Content-Type or ``None`` to let the server sniff)."""
        out_headers = outbound_headers(headers, self.patterns)
        try:
            response, status = await self.route(ROOT_NODE, body, out_headers)
        except RouteError as err:
            return err.status, error_body(err.cause), "application/json"
        if self._root_encodes or valid(response):  # an Ensemble's answer is always our own JSON encoding
            return status, response, "application/json"
        return status, response, None

    async def route(self, node_name: str, body: bytes, headers: list[tuple[str, str]]) -> tuple[bytes, int]:
        """``routeStep``: (body, status) or :class:`RouteError`."""
        node = self.graph.nodes.get(node_name, _EMPTY_NODE)
        kind = node.router_type
        if kind == SEQUENCE:
            return await self._sequence(node_name, node, body, headers)
        if kind == ENSEMBLE:
            return await self._ensemble(node_name, node, body, headers)
        if kind == SWITCH:
            return await self._switch(node_name, node, body, headers)
        if kind == SPLITTER:
            return await self._splitter(node_name, node, body, headers)
        raise RouteError(500, f"invalid route type: {kind}")

    async def _execute(
        self, node_name: str, index: int, step: Step, body: bytes, headers: list[tuple[str, str]]
    ) -> tuple[bytes, int]:
        """``executeStep``, reported to the tracer when there is one."""
        if self.tracer is None:  # the same as _run_step, one coroutine fewer per step
            try:
                if step.node_name:
                    return await self.route(step.node_name, body, headers)
                return await self.client.post(self._targets[id(step)], body, headers)
            except RouteError as err:
                raise RouteError(500, err.cause) from None
            except CallError as err:
                raise RouteError(500, str(err)) from None
        target = f"node {step.node_name}" if step.node_name else step.service_url
        start = time.perf_counter()
        try:
            response, status = await self._run_step(step, body, headers)
        except RouteError as err:
            self.tracer(
                TraceEvent(node_name, index, step, target, body, 0, b"", time.perf_counter() - start, err.cause)
            )
            raise
        self.tracer(TraceEvent(node_name, index, step, target, body, status, response, time.perf_counter() - start))
        return response, status

    async def _run_step(self, step: Step, body: bytes, headers: list[tuple[str, str]]) -> tuple[bytes, int]:
        """A failure below this step is a 500 here, whatever status it had."""
        try:
            if step.node_name:
                return await self.route(step.node_name, body, headers)
            return await self.client.post(self._targets[id(step)], body, headers)
        except RouteError as err:
            raise RouteError(500, err.cause) from None
        except CallError as err:
            raise RouteError(500, str(err)) from None

    async def _sequence(
        self, node_name: str, node: Node, body: bytes, headers: list[tuple[str, str]]
    ) -> tuple[bytes, int]:
        response, status = b"", 0
        for i, step in enumerate(node.steps):
            request = response if step.data == RESPONSE_DATA and i > 0 else body
            if step.map_predictions_to_instances:
                request = predictions_to_instances(request)
            if step.condition:
                try:
                    previous = loads(response)
                except DecodeError:
                    raise RouteError(500, INVALID_RESPONSE) from None
                if not gjson.exists(previous, step.condition):
                    return response, 200
            response, status = await self._execute(node_name, i, step, request, headers)
            if step.dependency == HARD and not is_success(status):
                return response, status
        return response, status

    async def _switch(
        self, node_name: str, node: Node, body: bytes, headers: list[tuple[str, str]]
    ) -> tuple[bytes, int]:
        try:
            doc = loads(body)
        except DecodeError:
            raise RouteError(404, NO_SWITCH_ROUTE) from None
        for i, step in enumerate(node.steps):
            if gjson.exists(doc, step.condition):
                return await self._execute(node_name, i, step, body, headers)
        raise RouteError(404, NO_SWITCH_ROUTE)

    async def _splitter(
        self, node_name: str, node: Node, body: bytes, headers: list[tuple[str, str]]
    ) -> tuple[bytes, int]:
        index = pick_weighted(node.steps, self._randbelow(100))
        if index is None:
            raise RouteError(500, NO_SPLITTER_ROUTE)
        return await self._execute(node_name, index, node.steps[index], body, headers)

    async def _ensemble(
        self, node_name: str, node: Node, body: bytes, headers: list[tuple[str, str]]
    ) -> tuple[bytes, int]:
        if not node.steps:
            return b"{}", 200
        loop = asyncio.get_running_loop()
        tasks = [
            loop.create_task(self._ensemble_step(node_name, i, s, body, headers)) for i, s in enumerate(node.steps)
        ]
        try:
            await _all_or_first_error(loop, tasks)
        except BaseException:  # cancelled (client gone, write deadline): stop the steps too
            _cancel(tasks)
            raise
        merged: dict[str, Any] = {}
        for i, (step, task) in enumerate(zip(node.steps, tasks)):
            if not task.done():
                # a later step failed while this one still runs: KServe returns that failure at once
                failure = next(t.exception() for t in tasks if t.done() and t.exception() is not None)
                _cancel(tasks)
                raise RouteError(500, str(failure.cause if isinstance(failure, RouteError) else failure))
            error = task.exception()
            if error is not None:
                _cancel(tasks)
                raise RouteError(500, error.cause if isinstance(error, RouteError) else str(error))
            answer, status = task.result()
            if step.dependency == HARD and not is_success(status):
                _cancel(tasks)
                return dumps(answer), status
            merged[step.name or str(i)] = answer
        return dumps(merged), 200

    async def _ensemble_step(
        self, node_name: str, index: int, step: Step, body: bytes, headers: list[tuple[str, str]]
    ) -> tuple[Any, int]:
        response, status = await self._execute(node_name, index, step, body, headers)
        try:
            answer = loads(response)
        except DecodeError as err:
            raise RouteError(500, str(err)) from None
        if answer is not None and not isinstance(answer, dict):
            raise RouteError(
                500, f"json: cannot unmarshal {_go_kind(answer)} into Go value of type map[string]interface {{}}"
            )
        return answer, status


async def _all_or_first_error(loop: asyncio.AbstractEventLoop, tasks: list[asyncio.Task[Any]]) -> None:
    """``asyncio.wait(tasks, return_when=FIRST_EXCEPTION)`` without its sets and per-call machinery (a third of
    the Ensemble's own CPU per request, measured)."""
    waiter: asyncio.Future[None] = loop.create_future()
    left = len(tasks)

    def on_done(task: asyncio.Task[Any]) -> None:
        nonlocal left
        left -= 1
        if not waiter.done() and (left == 0 or (not task.cancelled() and task.exception() is not None)):
            waiter.set_result(None)

    for task in tasks:
        task.add_done_callback(on_done)
    try:
        await waiter
    finally:
        for task in tasks:
            task.remove_done_callback(on_done)


def _cancel(tasks: Iterable[asyncio.Future[Any]]) -> None:
    for task in tasks:
        if not task.done():
            task.cancel()
        elif not task.cancelled():
            task.exception()  # mark retrieved


_GO_KINDS: dict[type, str] = {list: "array", str: "string"}


def _go_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return _GO_KINDS.get(type(value), "value")


def pick_weighted(steps: tuple[Step, ...], point: int) -> int | None:
    """``pickupRoute``: the first step whose cumulative weight exceeds ``point`` (0 ≤ point < 100)."""
    end = 0
    for i, step in enumerate(steps):
        end += step.weight or 0
        if point < end:
            return i
    return None


def predictions_to_instances(request: bytes) -> bytes:
    """``mapPredictionsToInstances``: a JSON object with a non-empty ``predictions`` list becomes
    ``{"instances": <predictions>}`` (Go's struct decode: field names match without regard to case, and a
    ``predictions``/``instances`` value that is not a list leaves the request unchanged)."""
    try:
        doc = loads(request)
    except DecodeError:
        return request
    if not isinstance(doc, dict):
        return request
    predictions: Any = None
    for key, value in doc.items():
        folded = key.lower()
        if folded in ("predictions", "instances"):
            if value is not None and not isinstance(value, list):
                return request
            if folded == "predictions":
                predictions = value
    if not predictions:
        return request
    return b'{"instances":' + dumps(predictions) + b"}"
