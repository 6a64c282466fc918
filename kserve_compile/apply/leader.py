"""Lease leader election (coordination.k8s.io/v1), as client-go's ``tools/leaderelection`` does it.

Writes go through PUT with the resourceVersion of a fresh GET (optimistic locking); nothing from a
write's response is kept. ``release()`` is client-go's ``ReleaseOnCancel``: on graceful shutdown the
holder clears ``holderIdentity`` and shortens the lease to 1 s, so a follower takes over at once
instead of waiting out the lease. ``loss_reason`` says why leadership ended, for the log line before exit.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

from kserve_compile.apply.kube import ApiError, Kube, Resource


def micro_time(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(s: str) -> float:
    return dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC).timestamp()


class LeaderElector:
    def __init__(
        self,
        kube: Kube,
        namespace: str,
        name: str,
        identity: str,
        lease_seconds: float = 15.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.kube, self.namespace, self.name, self.identity = kube, namespace, name, identity
        self.lease_seconds = lease_seconds
        self.clock = clock
        self.res = Resource("coordination.k8s.io", "v1", "Lease", "leases", True)
        self._renewed_at: float | None = None
        self.loss_reason = ""

    def is_leader(self) -> bool:
        return self._renewed_at is not None and self.clock() - self._renewed_at < self.lease_seconds

    def try_acquire_or_renew(self) -> bool:
        now = self.clock()
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.lease_seconds),
            "renewTime": micro_time(now),
        }
        try:
            live = self.kube.get(self.res, self.namespace, self.name)
            if live is None:
                spec.update(acquireTime=micro_time(now), leaseTransitions=0)
                body = {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": spec,
                }
                self.kube.request("POST", self.res.path(self.namespace), body=body)
            else:
                cur = live.get("spec") or {}
                holder = cur.get("holderIdentity")
                if holder != self.identity:  # taking it over: from another holder, or released ("")
                    renewed = parse_micro_time(cur["renewTime"]) if cur.get("renewTime") else 0.0
                    if holder and renewed + float(cur.get("leaseDurationSeconds") or self.lease_seconds) > now:
                        return self._lost(f"the Lease is held by {holder!r} (renewed {cur.get('renewTime')})")
                    # a transition whoever held it before, as client-go's tryAcquireOrRenew counts it
                    spec.update(acquireTime=micro_time(now), leaseTransitions=int(cur.get("leaseTransitions") or 0) + 1)
                else:
                    spec.update(
                        acquireTime=cur.get("acquireTime") or micro_time(now),
                        leaseTransitions=int(cur.get("leaseTransitions") or 0),
                    )
                live["spec"] = spec
                self.kube.request("PUT", self.res.path(self.namespace, self.name), body=live)
        except ApiError as err:
            if err.status in (409, 404):  # someone else wrote first; try again next period
                return self._lost(f"the Lease changed under us ({err})")
            raise
        self._renewed_at = now
        self.loss_reason = ""
        return True

    def _lost(self, reason: str) -> bool:
        if self._renewed_at is not None:
            self.loss_reason = reason
        self._renewed_at = None
        return False

    def expire(self, reason: str) -> None:
        """Record that renewals failed until the lease ran out."""
        if self.loss_reason == "":
            self.loss_reason = reason
        self._renewed_at = None

    def release(self, attempts: int = 3) -> bool:
        """Give the Lease up if we hold it (ReleaseOnCancel); True when it was handed back.

        A 409 (the Lease changed between our GET and PUT) is retried with a fresh GET.
        """
        if not self.is_leader():
            return False
        for _ in range(attempts):
            now = self.clock()
            try:
                live = self.kube.get(self.res, self.namespace, self.name)
                if live is None or (live.get("spec") or {}).get("holderIdentity") != self.identity:
                    return False
                spec = dict(live.get("spec") or {})
                spec.update(
                    holderIdentity="", leaseDurationSeconds=1, renewTime=micro_time(now), acquireTime=micro_time(now)
                )
                live["spec"] = spec
                self.kube.request("PUT", self.res.path(self.namespace, self.name), body=live)
            except ApiError as err:
                if err.status == 409:
                    continue
                return False
            self._renewed_at = None
            return True
        return False
