"""Informers: LIST + WATCH of one resource into a cache that only the informer writes.

Mirrors client-go's reflector (``tools/cache/reflector.go``): list, then watch from the list's
resourceVersion with bookmarks; any watch failure — 410 Gone, reset, protocol error, a line that is
not JSON, a client-side read timeout, an ``ERROR`` event, an unexpected exception — relists and
re-watches after a jittered exponential backoff; a clean server-side close re-watches from the last
resourceVersion. ResourceVersions are opaque: compared for equality only, never ordered.

Health: ``failing_for()`` says how long the informer has gone without a working list+watch (readiness
fails past a bound); ``alive()`` is false once its thread has exited (liveness fails, the kubelet
restarts the pod).
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable
from typing import Protocol

from kserve_compile.apply.kube import (
    ApiError,
    Kube,
    Resource,
    WatchBroken,
    WatchExpired,
)
from kserve_compile.apply.objects import Obj

log = logging.getLogger("kserve_compile.daemon")

Key = tuple[str, str]  # (namespace, name)
Handler = Callable[[str, Obj], None]  # (event type, object); types: SYNC, ADDED, MODIFIED, DELETED


class Counter(Protocol):
    def inc(self, name: str, value: float = 1, **labels: str) -> None: ...


def ident(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace", "")), str(meta.get("name", "")))


def rv_of(obj: Obj | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion", ""))


class Informer:
    """One resource in one namespace ("" = all), optionally narrowed by field and label selectors."""

    def __init__(
        self,
        kube: Kube,
        res: Resource,
        namespace: str,
        handler: Handler,
        metrics: Counter,
        *,
        field_selector: str = "",
        label_selector: str = "",
        watch_timeout: int = 300,
        read_timeout: float | None = None,
        backoff_max: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube, self.res, self.namespace, self.handler, self.metrics = kube, res, namespace, handler, metrics
        self.field_selector, self.label_selector = field_selector, label_selector
        self.watch_timeout, self.read_timeout, self.backoff_max = watch_timeout, read_timeout, backoff_max
        self.clock = clock
        self.cache: dict[Key, Obj] = {}
        self.resource_version = ""
        self.synced = threading.Event()
        self.failing_since: float | None = None
        self.last_error = ""
        self.thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._needs_list = True

    @property
    def name(self) -> str:
        where = self.namespace or "all namespaces"
        sel = ",".join(s for s in (self.field_selector, self.label_selector) if s)
        return f"{self.res.plural}.{self.res.group or 'core'} in {where}" + (f" ({sel})" if sel else "")

    # --- reads ----------------------------------------------------------------------------------
    def get(self, key: Key) -> Obj | None:
        with self._lock:
            return self.cache.get(key)

    def items(self) -> list[Obj]:
        with self._lock:
            return [self.cache[k] for k in sorted(self.cache)]

    def replace_if_unchanged(self, key: Key, expected_rv: str, obj: Obj) -> bool:
        """Store a write's response only if the cache still holds the version the write started from.

        Anything else means a newer event already arrived (or the object is gone): keep the informer's view.
        """
        with self._lock:
            cached = self.cache.get(key)
            if cached is None or rv_of(cached) != expected_rv:
                return False
            self.cache[key] = obj
            return True

    # --- list and watch ---------------------------------------------------------------------------
    def relist(self) -> None:
        """LIST into the cache; report what changed since the previous list (everything as SYNC the first time)."""
        items, rv = self.kube.list(
            self.res, self.namespace, label_selector=self.label_selector, field_selector=self.field_selector
        )
        fresh = {ident(o): o for o in items}
        first = not self.synced.is_set()
        with self._lock:
            old = self.cache
            self.cache = fresh
            self.resource_version = rv
        self._needs_list = False
        for key, obj in sorted(old.items()):
            if key not in fresh:
                self.handler("DELETED", obj)
        for key, obj in sorted(fresh.items()):
            if first:
                self.handler("SYNC", obj)
            elif key not in old:
                self.handler("ADDED", obj)
            elif rv_of(old[key]) != rv_of(obj):
                self.handler("MODIFIED", obj)
        self.synced.set()

    def watch_once(self) -> None:
        """Follow one watch stream until the server closes it; raises on any failure (the caller relists)."""
        stream = self.kube.watch(
            self.res,
            self.namespace,
            self.resource_version,
            self.watch_timeout,
            field_selector=self.field_selector,
            label_selector=self.label_selector,
            read_timeout=self.read_timeout,
            on_open=self._opened,
        )
        for event in stream:
            obj = event["object"]
            rv = rv_of(obj)
            if event["type"] == "BOOKMARK":
                self.resource_version = rv or self.resource_version
                continue
            with self._lock:
                if event["type"] == "DELETED":
                    self.cache.pop(ident(obj), None)
                else:
                    self.cache[ident(obj)] = obj
                self.resource_version = rv or self.resource_version
            self.handler(str(event["type"]), obj)

    def run(self, stop: threading.Event) -> None:
        """List and watch until ``stop``; every failure is counted, logged, backed off and recovered from."""
        backoff = 0.0
        while not stop.is_set():
            try:
                if self._needs_list:
                    self.relist()
                self.watch_once()
                self.metrics.inc("watch_restarts_total", resource=self.res.plural, reason="closed")
                backoff = 0.0
                continue
            except WatchExpired:
                reason = "expired"
            except WatchBroken as err:
                reason = err.reason
                self.last_error = str(err)
            except ApiError as err:
                reason = "error"
                self.last_error = str(err)
            except Exception as err:
                reason = "unexpected"
                self.last_error = f"{type(err).__name__}: {err}"
                log.exception("informer %s: unexpected failure", self.name)
            if stop.is_set():
                return  # shutting down: the failure is the shutdown's
            self._needs_list = True
            self.metrics.inc("watch_restarts_total", resource=self.res.plural, reason=reason)
            if reason != "expired":
                self._failing()
                log.warning("informer %s: watch failed (%s): %s; relisting", self.name, reason, self.last_error)
            backoff = min(max(backoff * 2, 0.2), self.backoff_max)
            stop.wait(random.uniform(backoff / 2, backoff))

    def start(self, stop: threading.Event) -> threading.Thread:
        self.thread = threading.Thread(target=self.run, args=(stop,), name=f"informer {self.name}", daemon=True)
        self.thread.start()
        return self.thread

    def _opened(self, response: object) -> None:
        self._response = response
        self.failing_since = None

    def close_stream(self) -> None:
        """End the current watch now (from any thread); the run loop then sees its stop event."""
        response = getattr(self, "_response", None)
        if response is None:
            return
        with contextlib.suppress(Exception):  # the stream may be gone already
            getattr(response, "shutdown", response.close)()  # urllib3 >= 2.3: shutdown wakes a blocked read

    # --- health ---------------------------------------------------------------------------------

    def _failing(self) -> None:
        if self.failing_since is None:
            self.failing_since = self.clock()

    def failing_for(self) -> float:
        """Seconds since the informer last had a working list+watch (0 when it has one now)."""
        return 0.0 if self.failing_since is None else self.clock() - self.failing_since

    def alive(self) -> bool:
        return self.thread is None or self.thread.is_alive()


class InformerGroup:
    """The same resource over several namespaces (``--namespaces``) read as one cache."""

    def __init__(self, parts: Iterable[Informer]) -> None:
        self.parts = list(parts)

    def get(self, key: Key) -> Obj | None:
        for part in self.parts:
            if not part.namespace or part.namespace == key[0]:
                found = part.get(key)
                if found is not None:
                    return found
        return None

    def items(self) -> list[Obj]:
        out = [o for part in self.parts for o in part.items()]
        return sorted(out, key=ident)

    def replace_if_unchanged(self, key: Key, expected_rv: str, obj: Obj) -> bool:
        return any(
            p.replace_if_unchanged(key, expected_rv, obj)
            for p in self.parts
            if not p.namespace or p.namespace == key[0]
        )

    def synced(self) -> bool:
        return all(p.synced.is_set() for p in self.parts)


class NamedInformers:
    """One-object informers (``fieldSelector=metadata.name=…``) started the first time an object is asked for.

    As the kubelet's watch-based Secret manager does: only the objects something references are read and
    watched, never every Secret of a namespace. The first ``get`` lists synchronously (an ApiError
    propagates to the caller, which retries); later reads come from the cache. ``forget_unused`` stops
    the watches nothing asked for since a given time (the daemon calls it once per resync).
    """

    def __init__(
        self, make: Callable[[str, str], Informer], stop: threading.Event, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.make, self.stop, self.clock = make, stop, clock
        self._informers: dict[Key, tuple[Informer, threading.Event]] = {}
        self._used: dict[Key, float] = {}
        self._lock = threading.Lock()

    def get(self, namespace: str, name: str) -> Obj | None:
        key = (namespace, name)
        with self._lock:
            self._used[key] = self.clock()
            entry = self._informers.get(key)
        if entry is None:
            informer = self.make(namespace, name)
            informer.relist()
            own_stop = threading.Event()
            with self._lock:
                if key in self._informers:  # another thread won the race
                    return self._informers[key][0].get(key)
                self._informers[key] = (informer, own_stop)
            informer.start(_either(self.stop, own_stop))
            return informer.get(key)
        return entry[0].get(key)

    def forget_unused(self, since: float) -> int:
        """Stop and drop the informers no ``get`` used since ``since``; returns how many."""
        with self._lock:
            stale = [k for k, used in self._used.items() if used < since and k in self._informers]
            dropped = [self._informers.pop(key) for key in stale]
            for key in stale:
                del self._used[key]
        for informer, own_stop in dropped:
            own_stop.set()
            informer.close_stream()
        return len(stale)

    def informers(self) -> list[Informer]:
        with self._lock:
            return [informer for informer, _ in self._informers.values()]


class _Either(threading.Event):
    """Set when either of two events is: ``wait`` returns as soon as one of them is set."""

    def __init__(self, a: threading.Event, b: threading.Event) -> None:
        super().__init__()
        self.a, self.b = a, b

    def is_set(self) -> bool:
        return self.a.is_set() or self.b.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self.b.wait(min(0.2, left) if left is not None else 0.2)
        return True


def _either(a: threading.Event, b: threading.Event) -> threading.Event:
    return _Either(a, b)
