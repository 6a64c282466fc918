"""The daemon's work queue: de-duplication, per-key exponential backoff, forget, requeue while processing."""

from __future__ import annotations

from kserve_compile.apply.workqueue import RateLimitedQueue


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_keys_are_deduplicated_and_fifo():
    q: RateLimitedQueue[str] = RateLimitedQueue()
    for key in ("a", "b", "a", "c", "b"):
        q.add(key)
    assert [q.get(timeout=0) for _ in range(4)] == ["a", "b", "c", None]


def test_failures_back_off_exponentially_per_key_and_forget_resets():
    clock = Clock()
    q: RateLimitedQueue[str] = RateLimitedQueue(base_delay=1.0, max_delay=5.0, clock=clock)
    assert [q.add_rate_limited("bad") for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    q.add("good")
    assert q.get(timeout=0) == "good"  # other keys are not held up
    q.done("good")
    assert q.get(timeout=0) is None  # "bad" is not due yet
    clock.now = 1.0
    assert q.get(timeout=0) == "bad"
    q.done("bad")
    assert q.failures("bad") == 5
    q.forget("bad")
    assert q.add_rate_limited("bad") == 1.0


def test_a_key_added_while_processing_comes_back_once_done():
    q: RateLimitedQueue[str] = RateLimitedQueue()
    q.add("k")
    assert q.get(timeout=0) == "k"
    q.add("k")  # a new event while the old one is being reconciled
    q.add("k")
    assert q.get(timeout=0) is None  # never two workers on one key
    assert len(q) == 0 and q.processing() == 1
    q.done("k")
    assert q.get(timeout=0) == "k" and q.get(timeout=0) is None
