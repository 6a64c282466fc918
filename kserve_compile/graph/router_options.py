"""What the router does beyond KServe's: retries, Prometheus metrics and an in-flight limit, read from the graph.

* **Retries**: ``spec.defaultRetry`` and a step's ``retry`` (kserve/kserve PR #5386, open: a released KServe CRD
  prunes them), or the annotation ``kserve-compile.io/router-retry`` holding the same configuration as JSON, which
  survives the CRD::

      {"defaultRetry": {"maxRetries": 3}, "steps": {"root": {"first": {"maxRetries": 5, "initialDelayMs": 200}}}}

  (``steps``: node name → step name, or index for an unnamed step → ``RetryConfig``). A field in the spec wins over
  the annotation at the same place. Either way they reach the router in ``--graph-json``, where the PR puts them,
  with the PR's defaults filled in as the API server's defaulting would (:func:`with_retries`).
* **Metrics**: ``serving.kserve.io/enable-prometheus-scraping: "true"`` on the graph (the annotation KServe's pod
  webhook reads on an isvc, which KServe ignores on a graph): the router serves ``/metrics`` on
  :data:`ROUTER_METRICS_PORT`. Only the graph's own annotation turns it on: inferenceservice-config's
  ``metricsAggregator.enablePrometheusScraping`` is KServe's setting for isvc pods, and with it alone a graph's
  router is rendered exactly as KServe renders it.
* **In-flight limit**: ``kserve-compile.io/router-max-inflight: "N"`` (kserve/kserve#2457: the router has no
  ``containerConcurrency``): beyond N requests in flight the router answers 503 with ``Retry-After``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .. import constants as C
from ..errors import InputError
from .graph_types import GraphSpec, GraphStep, InferenceGraph, RetryConfig

ANN_ROUTER_RETRY = "kserve-compile.io/router-retry"
ANN_ROUTER_MAX_INFLIGHT = "kserve-compile.io/router-max-inflight"
ROUTER_METRICS_PORT = 9095  # clear of the router's 8080 and of Knative's queue-proxy ports (8012, 8022, 9090, 9091)
ROUTER_METRICS_PORT_NAME = "http-metrics"
ROUTER_PORT_NAME = "http"  # declared beside the metrics port (a Service with two ports names both)
ENV_ROUTER_METRICS_PORT = "ROUTER_METRICS_PORT"
ENV_ROUTER_MAX_INFLIGHT = "ROUTER_MAX_INFLIGHT"
PROMETHEUS_SCRAPE = "prometheus.io/scrape"

# PR #5386: +kubebuilder:default and +kubebuilder:validation markers of RetryConfig
RETRY_DEFAULTS = {"maxRetries": 3, "initialDelayMs": 100, "maxDelayMs": 300_000}
RETRY_RANGES = {"maxRetries": (0, 10), "initialDelayMs": (0, 2**31 - 1), "maxDelayMs": (0, 2**31 - 1)}  # int32
_RETRY_FIELDS = {"maxRetries": "max_retries", "initialDelayMs": "initial_delay_ms", "maxDelayMs": "max_delay_ms"}


@dataclass(frozen=True)
class RouterOptions:
    metrics: bool
    max_inflight: int  # 0: no limit


def router_options(graph: InferenceGraph) -> RouterOptions:
    """The graph's metrics switch and in-flight limit; a bad annotation raises :class:`InputError` naming it."""
    annotations = graph.metadata.annotations
    scrape = annotations.get(C.ANN_ENABLE_PROMETHEUS_SCRAPING)
    return RouterOptions(scrape == "true", _max_inflight(annotations.get(ANN_ROUTER_MAX_INFLIGHT)))


def _max_inflight(value: str | None) -> int:
    if value is None:
        return 0
    text = value.strip()
    if not text.isdigit() or int(text) < 1:
        raise InputError(
            f'{ANN_ROUTER_MAX_INFLIGHT} must be a whole number of requests, 1 or more, not "{value}"',
            f"metadata.annotations[{ANN_ROUTER_MAX_INFLIGHT}]",
        )
    return int(text)


# --- retries ------------------------------------------------------------------------------------------------------


def check_retry(retry: RetryConfig, path: str) -> None:
    """The PR's CRD validation of one ``RetryConfig``, in the API server's wording."""
    for key, attr in _RETRY_FIELDS.items():
        value = getattr(retry, attr)
        low, high = RETRY_RANGES[key]
        field = f"{path}.{key}"
        if value is not None and value < low:
            bound = f"greater than or equal to {low}"
        elif value is not None and high is not None and value > high:
            bound = f"less than or equal to {high}"
        else:
            continue
        raise InputError(f"{field}: Invalid value: {value}: {field} in body should be {bound}", field)


def with_retries(graph: InferenceGraph, spec: GraphSpec) -> GraphSpec:
    """``spec`` with the retry annotation's configuration wherever the spec sets none."""
    annotated = annotation_retries(graph)
    if annotated is None:
        return spec
    default, steps = annotated
    nodes = {}
    for node_name, node in (spec.nodes or {}).items():
        wanted = steps.get(node_name, {})
        new_steps = [_with_step_retry(step, i, wanted) for i, step in enumerate(node.steps or [])]
        nodes[node_name] = node.model_copy(update={"steps": new_steps if node.steps is not None else None})
    update: dict[str, Any] = {"nodes": nodes if spec.nodes is not None else None}
    if spec.default_retry is None and default is not None:
        update["default_retry"] = default
    return spec.model_copy(update=update)


def _with_step_retry(step: GraphStep, index: int, wanted: dict[str, RetryConfig]) -> GraphStep:
    retry = wanted.get(step.name) if step.name else wanted.get(str(index))
    if retry is None or step.retry is not None:
        return step
    return step.model_copy(update={"retry": retry})


def annotation_retries(graph: InferenceGraph) -> tuple[RetryConfig | None, dict[str, dict[str, RetryConfig]]] | None:
    """The retry annotation: (its ``defaultRetry``, node → step → ``RetryConfig``), ``None`` when absent."""
    text = graph.metadata.annotations.get(ANN_ROUTER_RETRY)
    if text is None:
        return None
    where = f"metadata.annotations[{ANN_ROUTER_RETRY}]"
    try:
        doc = json.loads(text)
    except ValueError as err:
        raise InputError(f"{ANN_ROUTER_RETRY} is not JSON: {err}", where) from None
    _object(doc, "the value", where)
    unknown = sorted(set(doc) - {"defaultRetry", "steps"})
    if unknown:
        raise InputError(f'{ANN_ROUTER_RETRY}: unknown field "{unknown[0]}" (known: defaultRetry, steps)', where)
    default = _retry_config(doc["defaultRetry"], "defaultRetry", where) if doc.get("defaultRetry") is not None else None
    steps: dict[str, dict[str, RetryConfig]] = {}
    raw_steps = doc.get("steps") or {}
    _object(raw_steps, "steps", where)
    nodes = graph.spec.nodes or {}
    for node_name, by_step in raw_steps.items():
        _object(by_step, f"steps.{node_name}", where)
        node = nodes.get(node_name)
        if node is None:
            known = ", ".join(sorted(nodes)) or "none"
            raise InputError(
                f'{ANN_ROUTER_RETRY}: steps names node "{node_name}", which the graph does not define (defined: '
                f"{known})",
                where,
            )
        names = [step.name or str(i) for i, step in enumerate(node.steps or [])]
        for step_key, raw in by_step.items():
            path = f"steps.{node_name}.{step_key}"
            if step_key not in names:
                raise InputError(
                    f'{ANN_ROUTER_RETRY}: {path}: node "{node_name}" has no step "{step_key}" (its steps: '
                    f"{', '.join(names) or 'none'}; an unnamed step is named by its index)",
                    where,
                )
            target = (node.steps or [])[names.index(step_key)].node_name
            if target:
                raise InputError(
                    f'{ANN_ROUTER_RETRY}: {path}: the step\'s target is node "{target}": retries are of calls to a '
                    f'service, set them on the steps of node "{target}" (or defaultRetry)',
                    where,
                )
            steps.setdefault(node_name, {})[step_key] = _retry_config(raw, path, where)
    return default, steps


def _retry_config(raw: Any, path: str, where: str) -> RetryConfig:
    _object(raw, path, where)
    values: dict[str, int] = {}
    for key, value in raw.items():
        if key not in _RETRY_FIELDS:
            raise InputError(
                f'{ANN_ROUTER_RETRY}: {path}: unknown field "{key}" (known: {", ".join(_RETRY_FIELDS)})', where
            )
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{ANN_ROUTER_RETRY}: {path}.{key}: must be an integer, not {json.dumps(value)}", where)
        values[_RETRY_FIELDS[key]] = value
    config = RetryConfig(**values)
    try:
        check_retry(config, path)
    except InputError as exc:
        raise InputError(f"{ANN_ROUTER_RETRY}: {exc.message}", where) from None
    return config


def _object(value: Any, path: str, where: str) -> None:
    if not isinstance(value, dict):
        raise InputError(f"{ANN_ROUTER_RETRY}: {path} must be a JSON object, not {json.dumps(value)}", where)


def retry_data(retry: RetryConfig) -> dict[str, int]:
    """A ``RetryConfig`` as KServe's controller would marshal it after the API server's defaulting."""
    given = {key: getattr(retry, attr) for key, attr in _RETRY_FIELDS.items()}
    return {key: RETRY_DEFAULTS[key] if value is None else value for key, value in given.items()}
