"""The daemon's counters and gauges, written in the Prometheus text format (no client library for a handful).

Names carry the ``kserve_compile_`` prefix when rendered; ``/metrics`` (``endpoints.py``) serves them.
"""

from __future__ import annotations

import threading

__all__ = ["Metrics"]


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counters: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}  # counts, and sums of seconds
        self.gauges: dict[str, float] = {}

    def inc(self, name: str, value: float = 1, **labels: str) -> None:
        key = (name, tuple(sorted(labels.items())))
        with self._lock:
            self.counters[key] = self.counters.get(key, 0) + value

    def set(self, name: str, value: float) -> None:
        with self._lock:
            self.gauges[name] = value

    def get(self, name: str, **labels: str) -> float:
        with self._lock:
            return self.counters.get((name, tuple(sorted(labels.items()))), 0)

    def total(self, name: str) -> float:
        with self._lock:
            return sum(v for (n, _), v in self.counters.items() if n == name)

    def render(self) -> str:
        lines = []
        with self._lock:
            for (name, labels), value in sorted(self.counters.items()):
                lab = ",".join(f'{k}="{v}"' for k, v in labels)
                lines.append(f"kserve_compile_{name}{{{lab}}} {value:g}" if lab else f"kserve_compile_{name} {value:g}")
            for name, value in sorted(self.gauges.items()):
                lines.append(f"kserve_compile_{name} {value:g}")
        return "\n".join(lines) + "\n"
