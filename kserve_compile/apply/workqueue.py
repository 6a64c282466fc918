"""A de-duplicating work queue with per-key, rate-limited retries.

Mirrors client-go's ``util/workqueue`` (``Type`` + ``DelayingInterface`` + ``ItemExponentialFailureRateLimiter``):
a key is queued at most once; a key being processed that is added again is queued once more when
``done``; a failed key comes back after ``base * 2**failures`` seconds (capped), and ``forget`` clears
its failure count once it succeeds. Other keys are never held up by a failing one.
"""

from __future__ import annotations

import collections
import heapq
import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class RateLimitedQueue(Generic[K]):
    def __init__(
        self, base_delay: float = 0.5, max_delay: float = 300.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.base_delay, self.max_delay, self.clock = base_delay, max_delay, clock
        self._cond = threading.Condition()
        self._queue: collections.deque[K] = collections.deque()
        self._queued: set[K] = set()
        self._processing: set[K] = set()
        self._dirty: set[K] = set()  # added while processing: queue again on done()
        self._waiting: list[tuple[float, int, K]] = []  # (due, seq, key) heap of delayed adds
        self._seq = 0
        self._failures: dict[K, int] = {}

    def add(self, key: K) -> None:
        with self._cond:
            self._add_locked(key)

    def _add_locked(self, key: K) -> None:
        if key in self._processing:
            self._dirty.add(key)
        elif key not in self._queued:
            self._queued.add(key)
            self._queue.append(key)
            self._cond.notify()

    def add_after(self, key: K, delay: float) -> None:
        if delay <= 0:
            return self.add(key)
        with self._cond:
            self._seq += 1
            heapq.heappush(self._waiting, (self.clock() + delay, self._seq, key))
            self._cond.notify()

    def add_rate_limited(self, key: K) -> float:
        """Queue ``key`` again after its backoff; returns the delay."""
        with self._cond:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
        delay = min(self.base_delay * (2**failures), self.max_delay)
        self.add_after(key, delay)
        return delay

    def forget(self, key: K) -> None:
        with self._cond:
            self._failures.pop(key, None)

    def failures(self, key: K) -> int:
        with self._cond:
            return self._failures.get(key, 0)

    def get(self, timeout: float | None = None) -> K | None:
        """The next key (now marked processing; call ``done``), or None after ``timeout`` seconds."""
        deadline = None if timeout is None else self.clock() + timeout
        with self._cond:
            while True:
                self._promote_due()
                if self._queue:
                    key = self._queue.popleft()
                    self._queued.discard(key)
                    self._processing.add(key)
                    return key
                wait = self._waiting[0][0] - self.clock() if self._waiting else None
                if deadline is not None:
                    left = deadline - self.clock()
                    if left <= 0:
                        return None
                    wait = left if wait is None else min(wait, left)
                self._cond.wait(wait)

    def done(self, key: K) -> None:
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty:
                self._dirty.discard(key)
                self._add_locked(key)

    def _promote_due(self) -> None:
        now = self.clock()
        while self._waiting and self._waiting[0][0] <= now:
            _, _, key = heapq.heappop(self._waiting)
            self._add_locked(key)

    def __len__(self) -> int:
        with self._cond:
            self._promote_due()
            return len(self._queue)

    def processing(self) -> int:
        """Keys taken by a worker and not yet done."""
        with self._cond:
            return len(self._processing)

    def delayed(self) -> int:
        with self._cond:
            return len(self._waiting)
