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

Ours, off unless configured: a step's calls retried per its ``retry`` or the graph's ``defaultRetry``
(:mod:`router.retry`), and every request, node and call recorded in :class:`router.metrics.RouterMetrics`. With
neither, and no tracer, a step is one ``ServiceClient.post``, as before they existed.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from . import gjson
from .client import CallError, ServiceClient, Target, outbound_headers, parse_target
from .gojson import DecodeError, dumps, loads, valid
from .metrics import ERROR_CODE, RouterMetrics, StepSeries
from .retry import RETRY_STATUSES, RetryPolicy
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
    """One step executed, or one attempt of a step with a retry policy: what it was sent and what it answered
    (``status`` 0 and ``error`` set on failure). With a policy, ``attempt`` counts from 1 up to ``attempts``;
    ``retry_in`` is the wait before the next attempt when one follows, ``no_retry`` why a failure that could be
    retried is not."""

    node: str
    index: int
    step: Step
    target: str
    request: bytes
    status: int
    response: bytes
    seconds: float
    error: str = ""
    attempt: int = 0
    attempts: int = 0
    retry_in: float | None = None
    no_retry: str = ""


Tracer = Callable[[TraceEvent], None]
_EMPTY_NODE = Node("", ())
NO_RETRIES_LEFT = "no retries left"


# One way per service step, chosen at start-up: what it needs around its call, and nothing more.
_PLAIN, _TIMED, _RETRIED, _FULL = range(4)


class _Leaf:
    """A step that calls a service: its parsed URL, retry policy, metric series, and which of the ways to call it
    those need (:data:`_PLAIN`: one post; :data:`_TIMED`: timed for metrics; :data:`_RETRIED`: the first attempt
    as a plain post, the rest in ``_attempts``; :data:`_FULL`: every attempt in ``_attempts``, traced)."""

    __slots__ = ("record", "retry", "series", "target", "way")

    def __init__(self, target: Target, retry: RetryPolicy | None, series: StepSeries | None, traced: bool) -> None:
        self.target, self.retry, self.series = target, retry, series
        self.record = series.record if series is not None else _no_record
        if traced or (retry is not None and series is not None):
            self.way = _FULL
        elif series is not None:
            self.way = _TIMED
        else:
            self.way = _PLAIN if retry is None else _RETRIED


# One request's state, a list because one is made per request and a list literal costs a fifth of a class
# instance: when it started, its deadline for retries (``None``: none), and how long it has waited on steps (the
# sum of its service calls' times, retries and their waits included, an Ensemble counting the span of its steps
# once): what its duration less that is, is the router's own time.
_Exchange = list  # [start, deadline, waited]
_START, _DEADLINE, _WAITED = range(3)


def _no_record(seconds: float, code: int | str) -> None:
    pass


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
        metrics: RouterMetrics | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.graph = graph
        self.client = client
        self.patterns = list(patterns)
        self.tracer = tracer
        self.metrics = metrics
        self._randbelow = randbelow
        self._jitter = jitter
        self._leaves: dict[int, _Leaf] = {}
        self._root_encodes = graph.nodes.get(ROOT_NODE, _EMPTY_NODE).router_type == ENSEMBLE
        for node in graph.nodes.values():
            for step in node.steps:
                if not step.node_name:
                    retry = step.retry or graph.default_retry
                    series = metrics.steps[id(step)] if metrics is not None else None
                    self._leaves[id(step)] = _Leaf(
                        parse_target(step.service_url),
                        retry if retry and retry.max_retries else None,
                        series,
                        bool(tracer),
                    )
        budgets = [t for t in (graph.timeouts.server_write, graph.timeout) if t and t > 0]
        self.deadline_s: float | None = float(min(budgets)) if budgets else None
        self._measured = metrics is not None or any(leaf.retry for leaf in self._leaves.values())
        self._kinds: dict[str, Callable[..., Awaitable[tuple[bytes, int]]]] = {
            SEQUENCE: self._sequence,
            ENSEMBLE: self._ensemble,
            SWITCH: self._switch,
            SPLITTER: self._splitter,
        }

    async def handle(self, body: bytes, headers: Iterable[tuple[str, str]]) -> tuple[int, bytes, str | None]:
        """``graphHandler``: (status, body, Content-Type or ``None`` to let the server sniff)."""
        out_headers = outbound_headers(headers, self.patterns)
        exchange: _Exchange | None = None
        if self._measured:
            now = perf_counter()
            exchange = [now, now + self.deadline_s if self.deadline_s is not None else None, 0.0]
        content_type: str | None
        try:
            response, status = await self.route(ROOT_NODE, body, out_headers, exchange)
            content_type = "application/json" if self._root_encodes or valid(response) else None
        except RouteError as err:
            status, response, content_type = err.status, error_body(err.cause), "application/json"
        metrics = self.metrics
        if metrics is not None and exchange is not None:
            elapsed = perf_counter() - exchange[_START]
            metrics.request_done(elapsed, elapsed - exchange[_WAITED], status)  # the root node's series too
        return status, response, content_type

    async def route(
        self, node_name: str, body: bytes, headers: list[tuple[str, str]], exchange: _Exchange | None = None
    ) -> tuple[bytes, int]:
        """``routeStep``: (body, status) or :class:`RouteError`."""
        node = self.graph.nodes.get(node_name, _EMPTY_NODE)
        run = self._kinds.get(node.router_type, _invalid_route)
        if self.metrics is None or node_name == ROOT_NODE:  # the root's series is the request's, recorded by handle
            return await run(node_name, node, body, headers, exchange)
        series = self.metrics.nodes.get(node_name)
        start = perf_counter()
        try:
            result = await run(node_name, node, body, headers, exchange)
        except RouteError as err:
            if series is not None:
                series.record(perf_counter() - start, err.status)
            raise
        if series is not None:
            series.record(perf_counter() - start, result[1])
        return result

    async def _execute(
        self,
        node_name: str,
        index: int,
        step: Step,
        body: bytes,
        headers: list[tuple[str, str]],
        exchange: _Exchange | None,
    ) -> tuple[bytes, int]:
        """``executeStep``: a failure below this step is a 500 here, whatever status it had."""
        leaf = self._leaves.get(id(step))
        if leaf is None:
            if self.tracer is not None:
                return await self._nested(node_name, index, step, body, headers, exchange)
            try:
                return await self.route(step.node_name, body, headers, exchange)
            except RouteError as err:
                raise RouteError(500, err.cause) from None
        way = leaf.way
        if way == _PLAIN:
            try:
                return await self.client.post(leaf.target, body, headers)
            except CallError as err:
                raise RouteError(500, str(err)) from None
        if way == _TIMED:  # one call, in its step's series and in the request's time waiting on steps
            record = leaf.record
            start = perf_counter()
            try:
                response, status = await self.client.post(leaf.target, body, headers)
            except CallError as err:
                elapsed = perf_counter() - start
                record(elapsed, ERROR_CODE)
                if exchange is not None:
                    exchange[_WAITED] += elapsed
                raise RouteError(500, str(err)) from None
            elapsed = perf_counter() - start
            record(elapsed, status)
            if exchange is not None:
                exchange[_WAITED] += elapsed
            return response, status
        if way == _RETRIED:  # the first attempt costs what a plain one does; a retriable failure goes on below
            try:
                response, status = await self.client.post(leaf.target, body, headers)
            except CallError as err:
                if not err.transient:
                    raise RouteError(500, str(err)) from None
                return await self._attempts(node_name, index, step, leaf, body, headers, exchange, err)
            if status in RETRY_STATUSES:
                return await self._attempts(node_name, index, step, leaf, body, headers, exchange, (response, status))
            return response, status
        return await self._attempts(node_name, index, step, leaf, body, headers, exchange)

    async def _nested(
        self,
        node_name: str,
        index: int,
        step: Step,
        body: bytes,
        headers: list[tuple[str, str]],
        exchange: _Exchange | None,
    ) -> tuple[bytes, int]:
        """A step whose target is another node, reported to the tracer."""
        assert self.tracer is not None
        target = f"node {step.node_name}"
        start = perf_counter()
        try:
            response, status = await self.route(step.node_name, body, headers, exchange)
        except RouteError as err:
            self.tracer(TraceEvent(node_name, index, step, target, body, 0, b"", perf_counter() - start, err.cause))
            raise RouteError(500, err.cause) from None
        self.tracer(TraceEvent(node_name, index, step, target, body, status, response, perf_counter() - start))
        return response, status

    async def _attempts(
        self,
        node_name: str,
        index: int,
        step: Step,
        leaf: _Leaf,
        body: bytes,
        headers: list[tuple[str, str]],
        exchange: _Exchange | None,
        first: tuple[bytes, int] | CallError | None = None,
    ) -> tuple[bytes, int]:
        """A service step's calls, retried per its policy, each recorded and traced; ``first`` is the outcome of
        an attempt already made (untimed: its step has neither series nor tracer)."""
        policy, series, tracer = leaf.retry, leaf.series, self.tracer
        began = perf_counter() if series is not None else 0.0
        try:
            attempt, outcome = 1, first
            while True:
                elapsed = 0.0
                if outcome is None:
                    start = perf_counter()
                    try:
                        outcome = await self.client.post(leaf.target, body, headers)
                    except CallError as err:
                        outcome = err
                    elapsed = perf_counter() - start
                if isinstance(outcome, CallError):
                    error, response, status, retriable = outcome, b"", 0, outcome.transient
                else:
                    error, (response, status) = None, outcome
                    retriable = status in RETRY_STATUSES
                delay, no_retry = None, ""
                if policy is not None and retriable:
                    delay, no_retry = self._next_delay(policy, attempt, exchange)
                if series is not None:
                    series.record(elapsed, ERROR_CODE if error is not None else status)
                    if delay is not None:
                        series.retries += 1
                if tracer is not None:
                    tracer(
                        TraceEvent(
                            node_name,
                            index,
                            step,
                            step.service_url,
                            body,
                            status,
                            response,
                            elapsed,
                            str(error) if error is not None else "",
                            attempt if policy is not None else 0,
                            policy.attempts if policy is not None else 0,
                            delay,
                            no_retry,
                        )
                    )
                if delay is None:
                    if error is not None:
                        raise RouteError(500, str(error)) from None
                    return response, status
                await asyncio.sleep(delay)
                attempt, outcome = attempt + 1, None
        finally:
            if series is not None and exchange is not None:
                exchange[_WAITED] += perf_counter() - began

    def _next_delay(self, policy: RetryPolicy, attempt: int, exchange: _Exchange | None) -> tuple[float | None, str]:
        """The wait before the next attempt, or ``None`` and why there is none."""
        if attempt >= policy.attempts:
            return None, NO_RETRIES_LEFT
        delay = policy.delay(attempt, self._jitter())
        deadline = exchange[_DEADLINE] if exchange is not None else None
        if deadline is not None and perf_counter() + delay >= deadline:
            return None, f"the wait ({delay * 1000:.0f} ms) would end past the request's {self.deadline_s:g} s deadline"
        return delay, ""

    async def _sequence(
        self, node_name: str, node: Node, body: bytes, headers: list[tuple[str, str]], exchange: _Exchange | None
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
            response, status = await self._execute(node_name, i, step, request, headers, exchange)
            if step.dependency == HARD and not is_success(status):
                return response, status
        return response, status

    async def _switch(
        self, node_name: str, node: Node, body: bytes, headers: list[tuple[str, str]], exchange: _Exchange | None
    ) -> tuple[bytes, int]:
        try:
            doc = loads(body)
        except DecodeError:
            raise RouteError(404, NO_SWITCH_ROUTE) from None
        for i, step in enumerate(node.steps):
            if gjson.exists(doc, step.condition):
                return await self._execute(node_name, i, step, body, headers, exchange)
        raise RouteError(404, NO_SWITCH_ROUTE)

    async def _splitter(
        self, node_name: str, node: Node, body: bytes, headers: list[tuple[str, str]], exchange: _Exchange | None
    ) -> tuple[bytes, int]:
        index = pick_weighted(node.steps, self._randbelow(100))
        if index is None:
            raise RouteError(500, NO_SPLITTER_ROUTE)
        return await self._execute(node_name, index, node.steps[index], body, headers, exchange)

    async def _ensemble(
        self, node_name: str, node: Node, body: bytes, headers: list[tuple[str, str]], exchange: _Exchange | None
    ) -> tuple[bytes, int]:
        if not node.steps:
            return b"{}", 200
        loop = asyncio.get_running_loop()
        # with metrics, the steps' waits overlap: they go to a copy, the span of them all to the request
        inner = exchange if exchange is None or self.metrics is None else [exchange[_START], exchange[_DEADLINE], 0.0]
        tasks = [
            loop.create_task(self._ensemble_step(node_name, i, s, body, headers, inner))
            for i, s in enumerate(node.steps)
        ]
        began = perf_counter()
        try:
            await _all_or_first_error(loop, tasks)
        except BaseException:  # cancelled (client gone, write deadline): stop the steps too
            _cancel(tasks)
            raise
        finally:
            if inner is not exchange and exchange is not None:
                exchange[_WAITED] += perf_counter() - began
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
        self,
        node_name: str,
        index: int,
        step: Step,
        body: bytes,
        headers: list[tuple[str, str]],
        exchange: _Exchange | None,
    ) -> tuple[Any, int]:
        response, status = await self._execute(node_name, index, step, body, headers, exchange)
        try:
            answer = loads(response)
        except DecodeError as err:
            raise RouteError(500, str(err)) from None
        if answer is not None and not isinstance(answer, dict):
            raise RouteError(
                500, f"json: cannot unmarshal {_go_kind(answer)} into Go value of type map[string]interface {{}}"
            )
        return answer, status


async def _invalid_route(
    node_name: str, node: Node, body: bytes, headers: list[tuple[str, str]], exchange: _Exchange | None
) -> tuple[bytes, int]:
    raise RouteError(500, f"invalid route type: {node.router_type}")


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
