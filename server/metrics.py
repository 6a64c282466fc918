"""Prometheus metrics: KServe's latency histograms labelled by ``model_name``, then Triton's request counters."""

from __future__ import annotations

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Histogram,
    generate_latest,
)
from prometheus_client.openmetrics.exposition import (
    CONTENT_TYPE_LATEST as OPENMETRICS_CONTENT_TYPE,
)
from prometheus_client.openmetrics.exposition import (
    generate_latest as generate_openmetrics,
)

from server.stats import StatsCollector, classic_text

PRE = Histogram("request_preprocess_seconds", "pre-process request latency", ["model_name"])
PREDICT = Histogram("request_predict_seconds", "predict request latency", ["model_name"])
POST = Histogram("request_postprocess_seconds", "post-process request latency", ["model_name"])
EXPLAIN = Histogram("request_explain_seconds", "explain request latency", ["model_name"])


class ModelTimers:
    """The labelled histogram children of one model, looked up once instead of per request."""

    __slots__ = ("post", "pre", "predict")

    def __init__(self, model_name: str) -> None:
        self.pre = PRE.labels(model_name)
        self.predict = PREDICT.labels(model_name)
        self.post = POST.labels(model_name)


_timers: dict[str, ModelTimers] = {}


def timers(model_name: str) -> ModelTimers:
    found = _timers.get(model_name)
    if found is None:
        found = _timers[model_name] = ModelTimers(model_name)
    return found


def exposition(accept: str, triton: StatsCollector | None = None) -> tuple[bytes, str]:
    """The registry, then Triton's counters, in the format ``accept`` asks for (OpenMetrics or classic text)."""
    if "application/openmetrics-text" in accept:
        body = generate_openmetrics(REGISTRY)
        if triton is not None:
            extra = CollectorRegistry(auto_describe=False)
            extra.register(triton)
            body = body.removesuffix(b"# EOF\n") + generate_openmetrics(extra)
        return body, OPENMETRICS_CONTENT_TYPE
    body = generate_latest(REGISTRY)
    return (body + classic_text(triton) if triton is not None else body), CONTENT_TYPE_LATEST
