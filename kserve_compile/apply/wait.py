"""The verb ``wait``: poll applied objects until every one is ready by kstatus (``kstatus.py``), as Flux's
``ssa`` WaitForSet does; one Failed object ends the wait at once (``fail_fast``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kserve_compile.apply import kstatus
from kserve_compile.apply.kube import Kube
from kserve_compile.apply.objects import Obj, ObjKey, key_of

__all__ = ["WaitResult", "wait_for"]


@dataclass
class WaitResult:
    ok: bool
    statuses: dict[ObjKey, kstatus.Status]
    timed_out: bool = False

    def not_ready(self) -> list[str]:
        """``key: State message`` for every object that is not Current."""
        return [f"{k}: {s.state} {s.message}".rstrip() for k, s in self.statuses.items() if s.state != kstatus.CURRENT]


def wait_for(
    kube: Kube,
    objects: Sequence[Obj],
    timeout: float,
    *,
    interval: float = 2.0,
    fail_fast: bool = True,
    progress: Callable[[str], None] = lambda m: None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> WaitResult:
    """Poll every object until all are Current, one Failed (fail_fast), or ``timeout`` passes."""
    deadline = clock() + timeout
    last: dict[ObjKey, kstatus.Status] = {}
    refs = [(key_of(o), kube.resource_of(o)) for o in objects]
    while True:
        for key, res in refs:
            status = kstatus.compute(kube.get(res, key.namespace, key.name))
            if last.get(key) != status:
                progress(f"{key}: {status.state}" + (f" — {status.message}" if status.message else ""))
            last[key] = status
        states = {s.state for s in last.values()}
        if states <= {kstatus.CURRENT}:
            progress(f"all {len(last)} objects are ready")
            return WaitResult(True, last)
        if kstatus.FAILED in states and (fail_fast or states <= {kstatus.CURRENT, kstatus.FAILED}):
            return WaitResult(False, last)
        if clock() >= deadline:
            return WaitResult(False, last, timed_out=True)
        sleep(interval)
