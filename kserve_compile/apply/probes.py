"""The daemon's readiness and liveness as typed values: what ``/readyz`` and ``/healthz`` answer, and what the
controller consults before it reconciles (controller-runtime's ``healthz.Checker`` results, with a reason).

Readiness phases, in the order they are checked:

* ``SYNCING`` — an informer has not finished its first list: nothing is reconciled yet;
* ``NO_CONFIG`` — the ``inferenceservice-config`` ConfigMap does not exist: nothing is rendered from a guess;
* ``STALLED`` — an informer has been failing longer than ``--informer-not-ready-after``: ``/readyz`` fails so the
  Service stops routing to this replica, but reconciles continue from the caches;
* ``READY``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["ALIVE", "READY", "Liveness", "Phase", "Readiness"]


class Phase(Enum):
    SYNCING = "syncing"
    NO_CONFIG = "no-config"
    STALLED = "stalled"
    READY = "ready"


@dataclass(frozen=True)
class Readiness:
    phase: Phase
    reason: str = ""  # why not READY, for /readyz and the logs

    @property
    def ready(self) -> bool:
        return self.phase is Phase.READY

    @property
    def may_reconcile(self) -> bool:
        """Every input is listed and the configuration exists (a stalled informer still serves its cache)."""
        return self.phase in (Phase.READY, Phase.STALLED)


READY = Readiness(Phase.READY)


@dataclass(frozen=True)
class Liveness:
    reason: str = ""  # why the process should be restarted ("" = alive)

    @property
    def alive(self) -> bool:
        return not self.reason


ALIVE = Liveness()
