"""What one apply run is told (``ApplyOptions``) and what it answers (``ApplyReport``: a ``Change`` per object)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from kserve_compile import constants as C
from kserve_compile.apply.livecache import LiveCache
from kserve_compile.apply.objects import Obj, ObjKey
from kserve_compile.apply.ownwrites import AppliedRecord

CREATED, CONFIGURED, UNCHANGED, SKIPPED, PRUNED, RECREATED, KEPT = (
    "created",
    "configured",
    "unchanged",
    "skipped",
    "pruned",
    "recreated",
    "kept",
)
SUMMARY_ORDER = (CREATED, CONFIGURED, RECREATED, UNCHANGED, SKIPPED, PRUNED, KEPT)


@dataclass
class ApplyOptions:
    field_manager: str = C.FIELD_MANAGER
    force: bool = True
    dry_run: bool = False  # server-side dry run: nothing is written
    prune: bool = False
    allow_mass_prune: bool = False
    recreate_on_immutable: bool = False
    applyset: str = "kserve-compile"  # name of the parent ConfigMap
    namespace: str = "default"  # parent namespace and default for namespaced objects without one
    owner: Obj | None = None  # daemon: the live InferenceService every object is owned by
    is_leader: Callable[[], bool] = lambda: True
    progress: Callable[[str], None] = lambda message: None
    mass_prune_min: int = 5
    mass_prune_ratio: float = 0.5
    sleep: Callable[[float], None] = time.sleep
    live: LiveCache | None = None  # daemon: read members and parents from informer caches
    record: AppliedRecord | None = None  # daemon: skip the dry run for objects verified unchanged


@dataclass(frozen=True)
class Change:
    key: ObjKey
    action: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.key} {self.action}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class ApplyReport:
    changes: list[Change] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    applied: list[Obj] = field(default_factory=list)  # the server's view of each member after this run
    set_id: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> Counter[str]:
        return Counter(c.action for c in self.changes)

    def summary(self) -> str:
        counts = self.counts()
        return ", ".join(f"{counts[a]} {a}" for a in SUMMARY_ORDER if counts[a]) or "nothing to do"
