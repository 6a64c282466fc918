"""Pause Python's cyclic garbage collector while a batch of objects is built.

Parsing, compiling and emitting create millions of small dicts and lists that hold no reference cycles: reference
counting frees them. The cyclic collector would still wake every few hundred allocations and, as the rendered
objects pile up, re-scan them all in its older generations — about a sixth of the time of rendering 1,000 isvcs,
and a share that grows with the repository. Work that never creates cycles is no worse for the pause; any cycle
made meanwhile is collected once the collector runs again.

When the pause ends, what the batch built is moved into the oldest generation without a scan (see
:func:`_promote_young`). Otherwise the first allocation after it would scan every object the batch left alive as
the young generation — a tenth of the time of rendering 1,000 LLMInferenceServices, paid by whoever allocates next.

The pause nests and is shared by threads: the collector is switched back on when the last paused call returns,
and never if it was off before the first.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_depth = 0
_was_enabled = False
_promoted = 0  # objects promoted unscanned since the last full collection run here
_FULL_COLLECTION_AFTER = 2_000_000  # ~7 renders of 1,000 LLMInferenceServices


def _enter() -> None:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1


def _leave() -> None:
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0 and _was_enabled:
            _promote_young()
            gc.enable()


def _promote_young() -> None:
    """Move every tracked object into the oldest generation unscanned (``freeze`` then ``unfreeze``): reference
    counting frees them as usual, and a full collection reaches them. Objects promoted this way don't count towards
    CPython's own trigger for a full collection, so after ``_FULL_COLLECTION_AFTER`` of them one is run here — a
    long-running process (the daemon) keeps collecting cycles made between renders. Skipped while anyone else holds
    objects frozen (the model server freezes its startup heap): ``unfreeze`` would thaw those too."""
    global _promoted
    if gc.get_freeze_count():
        return
    _promoted += gc.get_count()[0]
    if _promoted > _FULL_COLLECTION_AFTER:
        _promoted = 0
        gc.collect()
        return
    gc.freeze()
    gc.unfreeze()


def gc_paused(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` runs with the cyclic collector paused."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        _enter()
        try:
            return fn(*args, **kwargs)
        finally:
            _leave()

    return wrapper
