"""A check that repeated calls leave nothing behind (for the C extensions: every reference taken is given back)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable


def assert_no_growth(call: Callable[[], object], *, rounds: int = 300, limit: int = 20_000) -> None:
    """``call`` run ``rounds`` times (after a warm-up that fills caches) grows traced memory by under ``limit`` bytes."""
    for _ in range(20):
        call()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(rounds):
            call()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < limit, f"{grown} bytes kept after {rounds} calls"
