"""The daemon's controller: the work queue, its workers, per-key backoff, the resync timer and leader election.

As controller-runtime's ``internal/controller`` (``processNextWorkItem``: get, reconcile, ``Forget`` on success,
``AddRateLimited`` on failure, ``Done`` always) and its leader-election runnable: nothing is reconciled before the
sources say every input is listed and the configuration exists (``Readiness.may_reconcile``); one key's failure —
any exception — is contained to that key and retried with exponential backoff while every other key proceeds; only
the leader writes, a new leader resyncs everything, and losing the Lease stops the process (exit 1) so that it
restarts as a follower. SIGTERM releases the Lease (client-go's ``ReleaseOnCancel``).
"""

from __future__ import annotations

import logging
import random
import threading
import time

from kserve_compile.apply.kube import ApiError
from kserve_compile.apply.leader import LeaderElector
from kserve_compile.apply.metrics import Metrics
from kserve_compile.apply.probes import ALIVE, Liveness, Readiness
from kserve_compile.apply.reconciler import ReconcileFailed, Reconciler
from kserve_compile.apply.settings import DaemonConfig
from kserve_compile.apply.sources import Item, Sources
from kserve_compile.apply.workqueue import RateLimitedQueue

__all__ = ["Controller"]

log = logging.getLogger("kserve_compile.daemon")


class Controller:
    def __init__(
        self,
        cfg: DaemonConfig,
        queue: RateLimitedQueue[Item],
        sources: Sources,
        reconciler: Reconciler,
        metrics: Metrics,
        elector: LeaderElector | None,
        stop: threading.Event,
    ) -> None:
        self.cfg, self.queue, self.sources, self.reconciler = cfg, queue, sources, reconciler
        self.metrics, self.elector, self.stop = metrics, elector, stop
        self.heartbeat = time.monotonic()
        self.ready_since: float | None = None  # when a worker first found the sources ready
        self._ready_lock = threading.Lock()
        self.lost = threading.Event()  # set when the Lease was lost: the process exits 1
        self._workers: list[threading.Thread] = []
        self._leading: threading.Thread | None = None

    def is_leader(self) -> bool:
        return self.elector is None or self.elector.is_leader()

    def readiness(self) -> Readiness:
        return self.sources.readiness()

    # --- one key --------------------------------------------------------------------------------
    def process(self, item: Item) -> bool:
        """Reconcile one key; contain every failure to it. True when it converged."""
        self.heartbeat = time.monotonic()
        ok = True
        try:
            self.reconciler.reconcile(item)
        except ReconcileFailed:
            ok = False
        except Exception as err:
            log.exception("reconcile %s/%s/%s: unexpected failure", *item)
            self.metrics.inc("reconcile_total", result="unexpected_error")
            self.reconciler.report_failure(item, "ReconcileError", f"{type(err).__name__}: {err}")
            ok = False
        finally:
            self.queue.done(item)
        if ok:
            self.queue.forget(item)
        else:
            delay = self.queue.add_rate_limited(item)
            self.metrics.inc("reconcile_retries_total")
            log.info("retrying %s/%s/%s in %.1fs", *item, delay)
        return ok

    def drain(self) -> int:
        """Reconcile everything queued now (tests; the workers do the same one key at a time)."""
        done = 0
        while (item := self.queue.get(timeout=0)) is not None:
            self.process(item)
            done += 1
        return done

    # --- workers --------------------------------------------------------------------------------
    def wait_until_ready(self) -> None:
        while not self.stop.is_set() and not self.readiness().may_reconcile:
            self.heartbeat = time.monotonic()
            self.stop.wait(0.2)
        with self._ready_lock:  # before any worker's first reconcile
            self.ready_since = self.ready_since or time.monotonic()

    def work(self, timer: bool = True) -> None:
        """A worker loop: nothing before the sources may be reconciled from; then one key at a time.

        The worker with ``timer`` also enqueues everything on every resync period. (The first lists queued every
        object already, and a follower that takes the Lease queues everything it skipped: one more resync here
        would only race a worker that took the key a moment earlier into a second reconcile.)
        """
        self.wait_until_ready()
        last_resync = self.ready_since or time.monotonic()
        next_resync = last_resync + self.cfg.resync_seconds
        while not self.stop.is_set():
            self.heartbeat = time.monotonic()
            if not self.readiness().may_reconcile:  # e.g. the ConfigMap was deleted
                self.wait_until_ready()
            item = self.queue.get(timeout=1.0)
            if item is not None:
                self.process(item)
            self.metrics.set("workqueue_depth", len(self.queue))
            if timer and time.monotonic() >= next_resync:
                # what no reconcile asked for since the last resync began (not "one period ago": with the jitter
                # that could fall after the last resync's reconciles, and every credential watch was dropped)
                self.sources.forget_unused_credentials(last_resync)
                last_resync = time.monotonic()
                self.sources.resync()
                self.metrics.inc("resyncs_total")
                next_resync = time.monotonic() + self.cfg.resync_seconds * random.uniform(0.9, 1.1)

    def liveness(self) -> Liveness:
        if any(not w.is_alive() for w in self._workers) and not self.stop.is_set():
            return Liveness("a reconcile worker exited")
        if time.monotonic() - self.heartbeat > 3 * self.cfg.resync_seconds + 60:
            return Liveness("the reconcile worker is stuck")
        return ALIVE

    # --- running --------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the sources, the leader election loop and the workers."""
        self.sources.start()
        if self.elector:
            self._leading = threading.Thread(target=self._lead, name="leader election", daemon=True)
            self._leading.start()
        self._workers = [
            threading.Thread(target=self.work, args=(i == 0,), name=f"reconcile worker {i}", daemon=True)
            for i in range(max(1, self.cfg.workers))
        ]
        for worker in self._workers:
            worker.start()

    def shut_down(self) -> None:
        """After ``stop``: let the workers finish their key, end the election loop, then hand the Lease back."""
        for worker in self._workers:
            worker.join(timeout=30)
        if self._leading is not None:
            self._leading.join(timeout=self.cfg.lease_seconds)  # no renewal may race the release below
        if self.elector and not self.lost.is_set() and self.elector.release():
            log.info("released Lease %s/%s", self.cfg.lease_namespace, self.cfg.lease_name)

    def _lead(self) -> None:
        assert self.elector is not None
        was_leader = False
        while not self.stop.is_set():
            try:
                leader = self.elector.try_acquire_or_renew()
            except ApiError as err:
                leader = self.elector.is_leader()
                if not leader:
                    self.elector.expire(f"could not renew the Lease within {self.cfg.lease_seconds:g}s: {err}")
            self.metrics.set("is_leader", 1 if leader else 0)
            if leader and not was_leader:
                log.info("acquired Lease %s/%s", self.cfg.lease_namespace, self.cfg.lease_name)
                if self.reconciler.skipped_while_following():
                    self.sources.resync()  # a new leader catches up on what it skipped as a follower
            if was_leader and not leader:
                log.error(
                    "leadership lost: %s; exiting so that the pod restarts as a follower",
                    self.elector.loss_reason or "unknown reason",
                )
                self.lost.set()
                self.stop.set()  # never keep working without the lease
                return
            was_leader = leader
            self.stop.wait(self.cfg.retry_seconds if not leader else self.cfg.renew_seconds / 2)
