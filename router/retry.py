"""Retrying a step's call: the ``retry`` (per step) and ``defaultRetry`` (per graph) fields of kserve/kserve PR #5386
(``RetryConfig`` in ``pkg/apis/serving/v1alpha1/inference_graph.go``, ``callServiceWithRetry`` in
``cmd/router/main.go``; open when this was written, so KServe's released router does not retry).

* The fields and defaults are the PR's: ``maxRetries`` (3, at most 10), ``initialDelayMs`` (100), ``maxDelayMs``
  (300000). A step's ``retry`` wins over the graph's ``defaultRetry``; with neither, no retry (KServe's behaviour).
* What is retried is narrower than the PR's "any 5xx": only failures where the step cannot have answered —
  the connection refused, reset or closed, or timed out, before any byte of an answer (``CallError.transient``) —
  and the statuses a proxy or an overloaded server gives for that: 502, 503, 504. A 500 is the model's own answer.
* Backoff: retry ``n`` waits ``min(maxDelayMs, initialDelayMs * 2**(n-1))``, jittered down by up to half (equal
  jitter: uniform in ``[d/2, d]``), so concurrent requests that failed together do not retry together, and no wait
  is longer than ``maxDelayMs``.
* A retry whose wait would end past the request's deadline (the graph's ``timeout`` or ``routerTimeouts.serverWrite``,
  whichever is shorter) is not made: the last failure stands.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_RETRIES = 3
DEFAULT_INITIAL_DELAY_MS = 100
DEFAULT_MAX_DELAY_MS = 300_000
MAX_RETRIES_LIMIT = 10
RETRY_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """A ``RetryConfig`` with the PR's defaults filled in."""

    max_retries: int = DEFAULT_MAX_RETRIES
    initial_delay_ms: int = DEFAULT_INITIAL_DELAY_MS
    max_delay_ms: int = DEFAULT_MAX_DELAY_MS

    @property
    def attempts(self) -> int:
        return 1 + self.max_retries

    def delay(self, retry: int, draw: float) -> float:
        """Seconds to wait before retry number ``retry`` (1 is the first); ``draw`` is uniform in [0, 1)."""
        capped = min(self.max_delay_ms, self.initial_delay_ms * (1 << min(retry - 1, 40)))
        return capped * (0.5 + 0.5 * draw) / 1000.0
