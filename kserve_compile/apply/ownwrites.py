"""What the daemon wrote to each child, and which child watch events need the owner reconciled.

Two jobs, one record per child (``ObjKey``):

* **Skip the dry run** for an object whose desired form is unchanged since it was last verified and whose live form
  still has the same resourceVersion or still holds every field we send (``unchanged``), as controller-runtime's
  cached client and Flux's inventory let a no-op reconcile send nothing.
* **Filter child events** (``needs_owner``), as controller-runtime's ``Owns()`` with a predicate: the owner is
  queued when a child is deleted by someone else, when its generation (its spec), one of the labels or
  annotations we set, or its readiness (``kstatus``, which the owner's status reports) changed — never for the
  daemon's own write coming back. On a real API server the watch event of a write can arrive *before* the
  write's response (the fake API server always answered first): an event for a child whose write is in flight
  is held until the response arrives and dropped only if it carries the response's resourceVersion; any other
  held event queues the owner then (``on_missed``).

Kept of a write's response: only its resourceVersion and the small fingerprint above, compared for equality.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kserve_compile import constants as C
from kserve_compile.apply import kstatus
from kserve_compile.apply.objects import Obj, ObjKey, normalise

__all__ = ["AppliedRecord", "contains", "fingerprint"]


def contains(live: Any, desired: Any) -> bool:
    """True when every field of ``desired`` has the same value in ``live`` (lists: same length, item by item)."""
    if isinstance(desired, dict):
        return isinstance(live, dict) and all(k in live and contains(live[k], v) for k, v in desired.items())
    if isinstance(desired, list):
        return isinstance(live, list) and len(live) == len(desired) and all(map(contains, live, desired))
    return bool(live == desired)


def fingerprint(obj: Obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _rv(obj: Obj | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion", ""))


@dataclass
class _Entry:
    sent: str  # fingerprint of what we sent
    rv: str  # resourceVersion at which the server agreed with it
    ours: tuple[tuple[str, ...], tuple[str, ...]]  # the label and annotation keys we set
    state: tuple[Any, ...]  # what the owner cares about in the live child (see _state)
    set_id: str  # the ApplySet we made it a member of ("" when none)


def _set_id(sent: Obj) -> str:
    return str(((sent.get("metadata") or {}).get("labels") or {}).get(C.LABEL_APPLYSET_PART_OF, ""))


def _meta_keys(sent: Obj) -> tuple[tuple[str, ...], tuple[str, ...]]:
    meta = sent.get("metadata") or {}
    return tuple(sorted(meta.get("labels") or {})), tuple(sorted(meta.get("annotations") or {}))


def _state(live: Obj, ours: tuple[tuple[str, ...], tuple[str, ...]]) -> tuple[Any, ...]:
    meta = live.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    generation = meta.get("generation")  # kinds without one (Services, ConfigMaps, RBAC): their whole content
    return (
        generation if generation is not None else fingerprint(normalise(live) or {}),
        tuple(labels.get(k) for k in ours[0]),
        tuple(annotations.get(k) for k in ours[1]),
        kstatus.compute(live),
    )


class AppliedRecord:
    def __init__(self, on_missed: Callable[[Obj], None] = lambda obj: None) -> None:
        self.on_missed = on_missed  # the daemon queues the owner of the child an event named
        self._seen: dict[ObjKey, _Entry] = {}
        self._by_set: dict[str, set[ObjKey]] = {}  # the keys of _seen by the ApplySet they were written into
        self._in_flight: dict[ObjKey, Obj | None] = {}  # writes sent, not answered: the last event held for each
        self._deleting: set[ObjKey] = set()
        self._lock = threading.Lock()

    # --- the writer's side ------------------------------------------------------------------------
    def writing(self, key: ObjKey) -> None:
        """A write of ``key`` is about to be sent: hold its events until ``verified`` or ``abandoned``."""
        with self._lock:
            self._in_flight[key] = None

    def verified(self, key: ObjKey, sent: Obj, live: Obj) -> None:
        """The server holds ``sent`` in ``live`` (a write's response, or a dry run that found no drift)."""
        ours = _meta_keys(sent)
        with self._lock:
            held = self._in_flight.pop(key, None)
            self._drop_locked(key)
            entry = self._seen[key] = _Entry(fingerprint(sent), _rv(live), ours, _state(live, ours), _set_id(sent))
            self._by_set.setdefault(entry.set_id, set()).add(key)
        if held is not None and _rv(held) != _rv(live):
            self.on_missed(held)

    def abandoned(self, key: ObjKey) -> None:
        """The write failed: an event held meanwhile was someone else's."""
        with self._lock:
            held = self._in_flight.pop(key, None)
        if held is not None:
            self.on_missed(held)

    def deleting(self, key: ObjKey) -> None:
        """We are about to delete ``key`` (prune): its DELETED event is our own."""
        with self._lock:
            self._deleting.add(key)

    def not_deleted(self, key: ObjKey) -> None:
        with self._lock:
            self._deleting.discard(key)

    def unchanged(self, key: ObjKey, sent: Obj, live: Obj) -> bool:
        with self._lock:
            seen = self._seen.get(key)
        if seen is None or seen.sent != fingerprint(sent):
            return False
        return seen.rv == _rv(live) or contains(live, sent)

    def members(self, set_id: str, group_kind: str) -> set[ObjKey]:
        """The objects of one GroupKind this process made members of ``set_id`` and has not seen deleted: an
        informer cache without one of them is behind our own writes (its event is still on the way)."""
        with self._lock:
            return {k for k in self._by_set.get(set_id, ()) if k.group_kind == group_kind}

    def _drop_locked(self, key: ObjKey) -> None:
        entry = self._seen.pop(key, None)
        if entry is not None:
            keys = self._by_set[entry.set_id]
            keys.discard(key)
            if not keys:
                del self._by_set[entry.set_id]

    def forget(self, key: ObjKey) -> None:
        with self._lock:
            self._drop_locked(key)

    # --- the informer's side ----------------------------------------------------------------------
    def needs_owner(self, event: str, key: ObjKey, live: Obj) -> bool:
        """Whether a watch event of a child should queue its owner (SYNC never does)."""
        with self._lock:
            if event == "SYNC":
                return False
            if event == "DELETED":
                self._drop_locked(key)
                if key in self._deleting:
                    self._deleting.discard(key)
                    return False  # pruned by us
                return True  # deleted by someone else, or garbage-collected with its owner
            if key in self._in_flight:
                self._in_flight[key] = live  # decided when the write's response arrives
                return False
            seen = self._seen.get(key)
            if seen is None:
                return True  # not written by this process (yet): let the owner look
            if seen.rv == _rv(live):
                return False  # our own write coming back
            state = _state(live, seen.ours)
            changed = state != seen.state
            seen.state = state
            return changed
