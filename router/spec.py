"""The ``--graph-json`` document: the InferenceGraph spec as KServe's router decodes it.

Mirrors ``pkg/apis/serving/v1alpha1/inference_graph.go`` (``InferenceGraphSpec``, ``InferenceRouter``,
``InferenceStep``, ``InfereceGraphRouterTimeouts``) as Go's ``json.Unmarshal`` reads it: field names match without
regard to case, unknown fields are ignored, a value of the wrong type is an error. Only the fields the router uses
are kept. ``defaultRetry`` and a step's ``retry`` are kserve/kserve PR #5386's ``RetryConfig`` (see
:mod:`router.retry`); their values are range-checked here, as the PR's CRD validation would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from .retry import MAX_RETRIES_LIMIT, RetryPolicy

ROOT_NODE = "root"
SEQUENCE, SPLITTER, ENSEMBLE, SWITCH = "Sequence", "Splitter", "Ensemble", "Switch"
HARD = "Hard"
RESPONSE_DATA = "$response"

# routerTimeouts defaults: pkg/constants (RouterTimeoutsServerRead / ServerWrite / ServerIdle), in seconds
DEFAULT_SERVER_READ, DEFAULT_SERVER_WRITE, DEFAULT_SERVER_IDLE = 60, 60, 180


class SpecError(ValueError):
    """The graph JSON cannot be decoded; the message names the field."""


@dataclass(frozen=True, slots=True)
class Step:
    name: str = ""
    node_name: str = ""
    service_name: str = ""
    service_url: str = ""
    data: str = ""
    map_predictions_to_instances: bool = False
    weight: int | None = None
    condition: str = ""
    dependency: str = ""
    retry: RetryPolicy | None = None


@dataclass(frozen=True, slots=True)
class Node:
    router_type: str
    steps: tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds; ``service_client`` ``None`` means no timeout on calls to the steps (KServe's default)."""

    server_read: int = DEFAULT_SERVER_READ
    server_write: int = DEFAULT_SERVER_WRITE
    server_idle: int = DEFAULT_SERVER_IDLE
    service_client: int | None = None


@dataclass(frozen=True, slots=True)
class Graph:
    nodes: dict[str, Node]
    timeouts: Timeouts
    default_retry: RetryPolicy | None = None
    timeout: int | None = None  # spec.timeout, seconds (the Knative revision's timeout)


_STEP_FIELDS = {
    "name": ("name", str),
    "nodename": ("node_name", str),
    "servicename": ("service_name", str),
    "serviceurl": ("service_url", str),
    "data": ("data", str),
    "mappredictionstoinstances": ("map_predictions_to_instances", bool),
    "weight": ("weight", int),
    "condition": ("condition", str),
    "dependency": ("dependency", str),
}
_RETRY_FIELDS = {
    "maxretries": ("max_retries", "maxRetries", 0, MAX_RETRIES_LIMIT),
    "initialdelayms": ("initial_delay_ms", "initialDelayMs", 0, None),
    "maxdelayms": ("max_delay_ms", "maxDelayMs", 0, None),
}
_TIMEOUT_FIELDS = {
    "serverread": "server_read",
    "serverwrite": "server_write",
    "serveridle": "server_idle",
    "serviceclient": "service_client",
}


def parse_graph(text: str | bytes) -> Graph:
    """The graph in ``text``; raises :class:`SpecError` naming the offending field."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as err:
        raise SpecError(f"graph JSON does not parse: {err}") from None
    spec = _mapping(data, "spec")
    fields = _fold(spec)
    nodes: dict[str, Node] = {}
    raw_nodes = fields.get("nodes")
    if raw_nodes is not None:
        for name, raw in _mapping(raw_nodes, "nodes").items():
            nodes[name] = _node(raw, f"nodes.{name}")
    default_retry = _retry(fields.get("defaultretry"), "defaultRetry")
    timeout = _typed(fields.get("timeout"), int, "timeout")
    return Graph(nodes, _timeouts(fields.get("routertimeouts")), default_retry, timeout)


def _fold(value: dict[str, Any]) -> dict[str, Any]:
    """Keys lower-cased as Go matches struct fields (the last of two spellings wins, as in Go)."""
    return {key.lower(): item for key, item in value.items()}


def _mapping(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SpecError(f"{path}: must be an object, not {_kind(value)}")
    return value


def _node(raw: Any, path: str) -> Node:
    if raw is None:
        return Node("", ())
    fields = _fold(_mapping(raw, path))
    router_type = _typed(fields.get("routertype"), str, f"{path}.routerType") or ""
    raw_steps = fields.get("steps")
    if raw_steps is None:
        return Node(router_type, ())
    if not isinstance(raw_steps, list):
        raise SpecError(f"{path}.steps: must be a list, not {_kind(raw_steps)}")
    return Node(router_type, tuple(_step(s, f"{path}.steps[{i}]") for i, s in enumerate(raw_steps)))


def _step(raw: Any, path: str) -> Step:
    if raw is None:
        return Step()
    values: dict[str, Any] = {}
    for key, item in _fold(_mapping(raw, path)).items():
        field = _STEP_FIELDS.get(key)
        if field is not None and item is not None:
            values[field[0]] = _typed(item, field[1], f"{path}.{key}")
        elif key == "retry":
            values["retry"] = _retry(item, f"{path}.retry")
    return Step(**values)


def _retry(raw: Any, path: str) -> RetryPolicy | None:
    """A ``RetryConfig``: absent fields take the PR's defaults; ``null`` is no config."""
    if raw is None:
        return None
    values: dict[str, Any] = {}
    for key, item in _fold(_mapping(raw, path)).items():
        field = _RETRY_FIELDS.get(key)
        if field is None or item is None:
            continue
        name, shown, low, high = field
        value = _typed(item, int, f"{path}.{shown}")
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise SpecError(f"{path}.{shown}: must be {bound}, not {value}")
        values[name] = value
    return RetryPolicy(**values)


def _timeouts(raw: Any) -> Timeouts:
    if raw is None:
        return Timeouts()
    values: dict[str, Any] = {}
    for key, item in _fold(_mapping(raw, "routerTimeouts")).items():
        name = _TIMEOUT_FIELDS.get(key)
        if name is not None and item is not None:
            values[name] = _typed(item, int, f"routerTimeouts.{key}")
    return Timeouts(**values)


def _typed(value: Any, kind: type, path: str) -> Any:
    if value is None:
        return None
    if kind is int and isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
        raise SpecError(f"{path}: must be {_KIND_NAMES[kind]}, not {_kind(value)}")
    return value


_KIND_NAMES = {str: "a string", bool: "a boolean", int: "an integer"}


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)
