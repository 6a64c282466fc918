"""Prometheus metrics under KServe's names, labelled by ``model_name``."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Histogram, generate_latest
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST as OPENMETRICS_CONTENT_TYPE
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

PRE = Histogram("request_preprocess_seconds", "pre-process request latency", ["model_name"])
PREDICT = Histogram("request_predict_seconds", "predict request latency", ["model_name"])
POST = Histogram("request_postprocess_seconds", "post-process request latency", ["model_name"])
EXPLAIN = Histogram("request_explain_seconds", "explain request latency", ["model_name"])


class ModelTimers:
    """The labelled histogram children of one model, looked up once instead of per request."""

    __slots__ = ("pre", "predict", "post")

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


def exposition(accept: str) -> tuple[bytes, str]:
    """The registry in the format ``accept`` asks for (OpenMetrics or the classic text format)."""
    if "application/openmetrics-text" in accept:
        return generate_openmetrics(REGISTRY), OPENMETRICS_CONTENT_TYPE
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
