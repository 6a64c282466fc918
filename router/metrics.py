"""The router's Prometheus metrics (text exposition format 0.0.4), served on their own port by :mod:`router.server`.

KServe's Go router has none (kserve/kserve#2703 asks how to measure the router's overhead); the names follow
Prometheus' conventions under a ``kserve_router_`` prefix (seconds, ``_total`` counters, HTTP status in ``code`` as
``promhttp`` labels it):

============================================  =========  ==========================================================
``kserve_router_requests_total{code}``        counter    graph requests routed, by the HTTP status answered (the
                                                         in-flight limit's 503s are ``rejected_requests_total``)
``kserve_router_request_duration_seconds``    histogram  from the request read to its answer ready
``kserve_router_overhead_seconds``            histogram  the router's own time per request: the request's duration
                                                         less the time it waited on steps (calls, retries, backoff;
                                                         an Ensemble's steps once, their span)
``kserve_router_node_requests_total``         counter    ``{node, code}``: each node's result (a nested node
                                                         failing is counted at its own status)
``kserve_router_node_duration_seconds``       histogram  ``{node}``
``kserve_router_step_requests_total``         counter    ``{node, step, code}``: each call to a step's service, every
                                                         attempt; ``code="error"`` when no answer came
``kserve_router_step_duration_seconds``       histogram  ``{node, step}``: each attempt
``kserve_router_step_retries_total``          counter    ``{node, step}``: retries made
``kserve_router_inflight_requests``           gauge      graph requests being served now
``kserve_router_max_inflight_requests``       gauge      the in-flight limit (0: none)
``kserve_router_rejected_requests_total``     counter    requests answered 503 by the in-flight limit
``process_cpu_seconds_total`` …               —          the process' CPU time, resident memory and start time
============================================  =========  ==========================================================

``step`` is the step's name, or its index when it has none (as an Ensemble names its answers). Steps that are
nested nodes (``nodeName``) have no step series: their node's series are theirs. Every histogram and retry series
of the graph exists from the start (at zero), so a rate over them is defined before the first request; a ``code``
appears with its first answer.

Recording costs two clock reads and a few list operations per call and per request (no locks: the router is one
event loop; status codes other than 200 alone are counted one by one, 200 being the rest of a histogram's count),
which keeps the router's CPU per request within a few percent of the router without metrics
(``bench/router_bench.py --metrics``).
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator

from .spec import ROOT_NODE, Graph

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
PREFIX = "kserve_router_"
# from 100 µs (the router's own overhead per request is tens of µs) to the 60 s default write timeout
BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_BUCKET_LABELS = [repr(b) for b in BUCKETS] + ["+Inf"]
ERROR_CODE = "error"


class Histogram:
    """One histogram series: a count per bucket (not yet cumulative) and the sum."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(BUCKETS, seconds)] += 1
        self.total += seconds


class Series(Histogram):
    """A duration histogram and a counter by status code, for one request kind, node or step. Only the codes other
    than 200 are counted one by one: 200 is the rest of the histogram's count (the common case costs a compare)."""

    __slots__ = ("others",)

    def __init__(self) -> None:
        super().__init__()
        self.others: dict[int | str, int] = {}

    def record(self, seconds: float, code: int | str) -> None:
        self.counts[bisect_left(BUCKETS, seconds)] += 1
        self.total += seconds
        if code != 200:
            self.others[code] = self.others.get(code, 0) + 1

    @property
    def codes(self) -> dict[int | str, int]:
        """Every status code seen, with its count."""
        ok = sum(self.counts) - sum(self.others.values())
        return {**self.others, 200: ok} if ok else dict(self.others)


class StepSeries(Series):
    __slots__ = ("labels", "retries")

    def __init__(self, labels: str) -> None:
        super().__init__()
        self.labels = labels
        self.retries = 0


class RouterMetrics:
    """Every series of one graph; :meth:`render` writes them in the exposition format."""

    def __init__(self, graph: Graph) -> None:
        self.requests = Series()
        self.overhead = Histogram()
        # the root node's series is the request's (the same time and status), recorded once per request
        self.nodes = {name: self.requests if name == ROOT_NODE else Series() for name in graph.nodes}
        self.steps: dict[int, StepSeries] = {}
        for node_name, node in graph.nodes.items():
            for i, step in enumerate(node.steps):
                if not step.node_name:
                    label = step.name or str(i)
                    self.steps[id(step)] = StepSeries(f'node="{escape(node_name)}",step="{escape(label)}"')
        self.rejected = 0
        self.max_inflight = 0
        self.inflight: Callable[[], int] = lambda: 0  # the server sets its own counter

    def request_done(self, seconds: float, overhead: float, code: int) -> None:
        """A graph request answered: its duration, the router's own share of it, its status (one call, inlined:
        this runs for every request)."""
        requests = self.requests
        requests.counts[bisect_left(BUCKETS, seconds)] += 1
        requests.total += seconds
        if code != 200:
            requests.others[code] = requests.others.get(code, 0) + 1
        own = self.overhead
        own.counts[bisect_left(BUCKETS, overhead)] += 1
        own.total += overhead

    def render(self) -> bytes:
        return "".join(self._lines()).encode("utf-8")

    def _lines(self) -> Iterator[str]:
        m = PREFIX
        yield from _family(f"{m}requests_total", "counter", "Graph requests routed, by the HTTP status code answered.")
        yield from _codes(f"{m}requests_total", "", self.requests.codes)
        yield from _family(
            f"{m}request_duration_seconds", "histogram", "Time from a graph request read to its answer ready."
        )
        yield from _histogram(f"{m}request_duration_seconds", "", self.requests)
        yield from _family(
            f"{m}overhead_seconds",
            "histogram",
            "The router's own time per graph request: its duration less the time spent waiting on steps.",
        )
        yield from _histogram(f"{m}overhead_seconds", "", self.overhead)
        nodes = [(f'node="{escape(name)}"', series) for name, series in self.nodes.items()]
        yield from _family(f"{m}node_requests_total", "counter", "Results of each graph node, by HTTP status code.")
        for labels, series in nodes:
            yield from _codes(f"{m}node_requests_total", labels, series.codes)
        yield from _family(f"{m}node_duration_seconds", "histogram", "Time spent in each graph node.")
        for labels, series in nodes:
            yield from _histogram(f"{m}node_duration_seconds", labels, series)
        steps = list(self.steps.values())
        yield from _family(
            f"{m}step_requests_total",
            "counter",
            'Calls to each step\'s service, every attempt, by HTTP status code ("error": no answer).',
        )
        for step in steps:
            yield from _codes(f"{m}step_requests_total", step.labels, step.codes)
        yield from _family(f"{m}step_duration_seconds", "histogram", "Time of each call to a step's service.")
        for step in steps:
            yield from _histogram(f"{m}step_duration_seconds", step.labels, step)
        yield from _family(f"{m}step_retries_total", "counter", "Retries of calls to each step's service.")
        for step in steps:
            yield f"{m}step_retries_total{{{step.labels}}} {step.retries}\n"
        yield from _family(f"{m}inflight_requests", "gauge", "Graph requests being served.")
        yield f"{m}inflight_requests {self.inflight()}\n"
        yield from _family(f"{m}max_inflight_requests", "gauge", "The limit on graph requests in flight (0: none).")
        yield f"{m}max_inflight_requests {self.max_inflight}\n"
        yield from _family(
            f"{m}rejected_requests_total", "counter", "Graph requests answered 503 because the limit was reached."
        )
        yield f"{m}rejected_requests_total {self.rejected}\n"
        yield from _process()


def escape(value: str) -> str:
    """A label value as the exposition format writes it."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _family(name: str, kind: str, text: str) -> Iterable[str]:
    return (f"# HELP {name} {text}\n", f"# TYPE {name} {kind}\n")


def _codes(name: str, labels: str, codes: dict[int | str, int]) -> Iterator[str]:
    sep = "," if labels else ""
    for code in sorted(codes, key=str):
        yield f'{name}{{{labels}{sep}code="{code}"}} {codes[code]}\n'


def _histogram(name: str, labels: str, series: Histogram) -> Iterator[str]:
    sep = "," if labels else ""
    running = 0
    for le, count in zip(_BUCKET_LABELS, series.counts):
        running += count
        yield f'{name}_bucket{{{labels}{sep}le="{le}"}} {running}\n'
    braces = f"{{{labels}}}" if labels else ""
    yield f"{name}_sum{braces} {series.total!r}\n"
    yield f"{name}_count{braces} {running}\n"


_START = time.time()  # this module loads as the router starts


def _process() -> Iterator[str]:
    """What ``prometheus_client``'s process collector gives, from ``os.times`` and ``/proc``."""
    times = os.times()
    yield from _family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.")
    yield f"process_cpu_seconds_total {times.user + times.system!r}\n"
    try:
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        rss = None
    if rss is not None:
        yield from _family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.")
        yield f"process_resident_memory_bytes {rss}\n"
    yield from _family("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.")
    yield f"process_start_time_seconds {_START!r}\n"
