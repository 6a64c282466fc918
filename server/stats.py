"""Per-model inference statistics as Triton reports them, and the Prometheus counters derived from them.

Mirrors Triton's statistics extension (``GET /v2/models/{m}/stats``, gRPC ``ModelStatistics``:
``inference_stats.success/fail/queue/compute_input/compute_infer/compute_output`` as ``{count, ns}``,
``inference_count`` in batch rows, ``execution_count`` in ONNX Runtime runs, ``last_inference`` in ms since
the epoch) and its metric names (``nv_inference_request_success``, ``nv_inference_request_failure`` with a
``reason`` label, ``nv_inference_count``, ``nv_inference_exec_count``, the ``*_duration_us`` counters),
labelled ``model`` / ``version`` as Triton labels them. One instance of a model has one ModelStats: a reload
starts from zero, as in Triton. Stages here: compute_input = decoding the request, compute_infer = waiting
for and running ONNX Runtime, compute_output = encoding the response; nothing is queued before decoding, so
``queue`` counts requests with zero time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

from prometheus_client.metrics_core import Metric

# failure reason labels, Triton's
REJECTED, BACKEND, OTHER = "REJECTED", "BACKEND", "OTHER"


class ModelStats:
    """Counters of one model instance, updated on the event loop only (no locks). Cumulative times are kept
    in float seconds (cheapest to add per request) and reported in integer ns / µs."""

    __slots__ = (
        "execution_count",
        "fail_count",
        "fail_s",
        "failures",
        "infer_s",
        "inference_count",
        "input_s",
        "last_done",
        "output_s",
        "success_count",
        "success_s",
    )

    def __init__(self) -> None:
        self.success_count = 0
        self.success_s = self.input_s = self.infer_s = self.output_s = 0.0
        self.fail_count = 0
        self.fail_s = 0.0
        self.inference_count = 0
        self.execution_count = 0
        self.last_done: float | None = None  # time.perf_counter() of the last request's end
        self.failures: dict[str, int] = {}

    def success(self, rows: int, started: float, decoded: float, predicted: float, done: float) -> None:
        self.success_count += 1
        self.success_s += done - started
        self.input_s += decoded - started
        self.infer_s += predicted - decoded
        self.output_s += done - predicted
        self.inference_count += rows
        self.last_done = done

    def failure(self, reason: str, seconds: float) -> None:
        self.fail_count += 1
        self.fail_s += seconds
        self.failures[reason] = self.failures.get(reason, 0) + 1
        self.last_done = time.perf_counter()

    @property
    def last_inference_ms(self) -> int:
        """Milliseconds since the epoch of the last request's end (0: none yet)."""
        if self.last_done is None:
            return 0
        return int((time.time() - (time.perf_counter() - self.last_done)) * 1000)

    def durations(self) -> dict[str, dict[str, int]]:
        """Triton's ``inference_stats``: ``{stage: {count, ns}}``."""
        count = self.success_count
        stages = {
            "success": (count, self.success_s),
            "fail": (self.fail_count, self.fail_s),
            "queue": (count, 0.0),
            "compute_input": (count, self.input_s),
            "compute_infer": (count, self.infer_s),
            "compute_output": (count, self.output_s),
            "cache_hit": (0, 0.0),
            "cache_miss": (0, 0.0),
        }
        return {stage: {"count": n, "ns": int(seconds * 1e9)} for stage, (n, seconds) in stages.items()}

    def triton(self, name: str, version: str) -> dict[str, object]:
        """The JSON Triton's HTTP statistics endpoint gives for one model."""
        return {
            "name": name,
            "version": version,
            "last_inference": self.last_inference_ms,
            "inference_count": self.inference_count,
            "execution_count": self.execution_count,
            "inference_stats": self.durations(),
            "batch_stats": [],
        }


def _counter(name: str, doc: str) -> Metric:
    return Metric(name, doc, "counter")


class StatsCollector:
    """A prometheus_client collector over the models ``source()`` yields as (name, version, stats)."""

    def __init__(self, source: Callable[[], Iterable[tuple[str, str, ModelStats]]]) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        success = _counter("nv_inference_request_success", "Number of successful inference requests, all batch sizes")
        failure = _counter("nv_inference_request_failure", "Number of failed inference requests, all batch sizes")
        count = _counter("nv_inference_count", "Number of inferences performed (batch rows)")
        executions = _counter("nv_inference_exec_count", "Number of model executions performed")
        stages = {
            "success": _counter(
                "nv_inference_request_duration_us", "Cumulative inference request duration in microseconds"
            ),
            "compute_input": _counter(
                "nv_inference_compute_input_duration_us", "Cumulative compute input duration in microseconds"
            ),
            "compute_infer": _counter(
                "nv_inference_compute_infer_duration_us", "Cumulative compute inference duration in microseconds"
            ),
            "compute_output": _counter(
                "nv_inference_compute_output_duration_us", "Cumulative compute output duration in microseconds"
            ),
        }
        for name, version, stats in self.source():
            labels = {"model": name, "version": version}
            durations = stats.durations()
            success.add_sample(success.name, labels, stats.success_count)
            for reason in (REJECTED, BACKEND, OTHER):
                failure.add_sample(failure.name, {**labels, "reason": reason}, stats.failures.get(reason, 0))
            count.add_sample(count.name, labels, stats.inference_count)
            executions.add_sample(executions.name, labels, stats.execution_count)
            for stage, metric in stages.items():
                metric.add_sample(metric.name, labels, durations[stage]["ns"] // 1000)
        yield from (success, failure, count, executions, *stages.values())


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def classic_text(collector: StatsCollector) -> bytes:
    """Prometheus text format with Triton's exact names (prometheus_client would add ``_total`` to the
    TYPE line of a counter, which then no longer names its samples)."""
    lines: list[str] = []
    for metric in collector.collect():
        lines.append(f"# HELP {metric.name} {metric.documentation}")
        lines.append(f"# TYPE {metric.name} counter")
        for sample in metric.samples:
            labels = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(sample.labels.items()))
            lines.append(f"{sample.name}{{{labels}}} {float(sample.value)}")
    return ("\n".join(lines) + "\n").encode() if lines else b""
