"""The in-cluster daemon: watch KServe inputs, re-render, apply, write status; one leader per shard.

Mirrors KServe's InferenceService controller loop (``pkg/controller/v1beta1/inferenceservice/controller.go``) on
controller-runtime's shape (apply_ecosystem.md §5), one module per part:

* ``sources.py`` — informers for every input and child kind and the handlers that queue work;
* ``reconciler.py`` — one key: render its inputs, apply them as its ApplySet (owned by the object, so Kubernetes
  garbage-collects everything when it is deleted), write its status;
* ``controller.py`` — the rate-limited work queue, its workers, per-key backoff, resync and Lease leader election;
* ``endpoints.py`` — ``/healthz``, ``/readyz`` (typed values, ``probes.py``) and ``/metrics`` (``metrics.py``).

``Daemon`` builds the four and runs them until SIGTERM/SIGINT or lost leadership.
"""

from __future__ import annotations

import errno
import functools
import logging
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from kserve_compile.apply.controller import Controller
from kserve_compile.apply.endpoints import Probes, http_server
from kserve_compile.apply.events import EventRecorder
from kserve_compile.apply.kube import Kube
from kserve_compile.apply.leader import LeaderElector
from kserve_compile.apply.livecache import LiveCache
from kserve_compile.apply.metrics import Metrics
from kserve_compile.apply.ownwrites import AppliedRecord
from kserve_compile.apply.probes import Liveness, Readiness
from kserve_compile.apply.rbac import PERMISSIONS
from kserve_compile.apply.reconciler import Reconciler, Render, StatusUrls, default_render
from kserve_compile.apply.settings import DaemonConfig, shard_lease_name
from kserve_compile.apply.sources import Item, Sources
from kserve_compile.apply.workqueue import RateLimitedQueue

__all__ = ["PERMISSIONS", "Daemon", "DaemonConfig", "Metrics", "shard_lease_name"]

log = logging.getLogger("kserve_compile.daemon")


class Daemon:
    def __init__(
        self,
        kube: Kube,
        cfg: DaemonConfig,
        render: Render | None = None,
        status_urls: StatusUrls | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.kube, self.cfg, self.clock = kube, cfg, clock
        self.metrics = Metrics()
        self.queue: RateLimitedQueue[Item] = RateLimitedQueue(cfg.retry_base, cfg.retry_max)
        self.stop = threading.Event()
        self.elector = (
            LeaderElector(kube, cfg.lease_namespace, cfg.lease_name, cfg.identity, cfg.lease_seconds, clock)
            if cfg.leader_elect
            else None
        )
        events = EventRecorder(kube, on_error=lambda status: self.metrics.inc("event_errors_total"))
        self.sources = Sources(kube, cfg, self.queue, self.metrics, LiveCache(), AppliedRecord(), self.stop)
        render = render or functools.partial(default_render, pod_webhook=cfg.pod_webhook)
        self.reconciler = Reconciler(
            kube, self.sources, self.metrics, events, self.is_leader, render, status_urls, clock
        )
        self.controller = Controller(
            cfg, self.queue, self.sources, self.reconciler, self.metrics, self.elector, self.stop
        )

    def is_leader(self) -> bool:
        return self.elector is None or self.elector.is_leader()

    # --- what the probes and tests ask ------------------------------------------------------------
    def readiness(self) -> Readiness:
        return self.sources.readiness()

    def liveness(self) -> Liveness:
        informers = self.sources.liveness()
        return informers if not informers.alive else self.controller.liveness()

    def metrics_text(self) -> str:
        self.metrics.set("is_leader", 1 if self.is_leader() else 0)
        self.metrics.set("ready", 1 if self.readiness().ready else 0)
        for label, n in sorted(self.kube.requests.items()):
            self.metrics.set(f'api_requests{{verb="{label}"}}', n)
        return self.metrics.render()

    def probes(self) -> Probes:
        return Probes(self.liveness, self.readiness, self.metrics_text)

    def drain(self) -> int:
        """Reconcile everything queued now (tests; the workers do the same one key at a time)."""
        return self.controller.drain()

    def resync(self) -> None:
        self.sources.resync()

    # --- running ------------------------------------------------------------------------------------
    def serve(self, health_addr: str, metrics_addr: str) -> int:
        """Run until stopped (SIGTERM/SIGINT or lost leadership); returns the exit code (1 when the Lease was lost)."""
        servers = [
            _listen("--health-addr", health_addr, self.probes()),
            _listen("--metrics-addr", metrics_addr, self.probes()),
        ]
        for s in servers:
            threading.Thread(target=s.serve_forever, daemon=True).start()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: self.stop.set())
        self.controller.start()
        log.info(
            "daemon started (identity %s, lease %s/%s)",
            self.cfg.identity,
            self.cfg.lease_namespace,
            self.cfg.lease_name,
        )
        self.stop.wait()
        self.controller.shut_down()
        for s in servers:
            s.shutdown()
        return 1 if self.controller.lost.is_set() else 0


def _listen(flag: str, addr: str, probes: Probes) -> Any:
    """The endpoint's server; an address that cannot be bound is a usage error naming the flag (exit 2)."""
    from kserve_compile.errors import UsageError

    try:
        return http_server(addr, probes)
    except OSError as exc:
        reason = "the address is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        raise UsageError(f"{flag} {addr}: cannot listen: {reason}") from None
