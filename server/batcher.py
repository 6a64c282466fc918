"""Opt-in dynamic batching (``--max_batch_size``, ``--max_batch_delay_ms``), like Triton's dynamic batcher.

Requests for one model that ask for the same outputs with the same per-row shapes are concatenated
along dimension 0 into one ONNX Runtime call and the outputs are split back by row. A group runs
when it reaches ``max_batch_size`` rows or when its oldest request has waited ``max_delay`` seconds.
Models whose inputs or outputs do not all have a dynamic first dimension are never batched, and a
merged run whose outputs do not have one row per input row is redone request by request.

A run whose predicted time is below ``inline_us`` (the server's ``--inline_inference_us``) is done
on the event loop, as unbatched requests are: for small models on one core, handing a merged batch
to a pool thread costs more than running it (GIL hand-offs; see docs/performance.md).
"""

from __future__ import annotations

import asyncio
import logging

import numpy as np
from prometheus_client import Histogram

from server.model import OnnxModel
from server.runner import InferenceRunner

logger = logging.getLogger("server.batcher")

BATCH_ROWS = Histogram(
    "onnxserver_batch_rows",
    "rows in each merged ONNX Runtime call of the dynamic batcher",
    ["model_name"],
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
)

_Key = tuple[tuple[str, ...], tuple[tuple[str, tuple[int, ...], str], ...]]


class _Group:
    __slots__ = ("items", "rows", "timer")

    def __init__(self) -> None:
        self.items: list[tuple[dict[str, np.ndarray], int, asyncio.Future]] = []
        self.rows = 0
        self.timer: asyncio.TimerHandle | None = None


class Batcher:
    def __init__(
        self, model: OnnxModel, runner: InferenceRunner, max_batch_size: int, max_delay: float, inline_us: float = 0.0
    ) -> None:
        self.model = model
        self.runner = runner
        self.max_batch_size = max_batch_size
        self.max_delay = max_delay
        self.inline_us = inline_us
        self.groups: dict[_Key, _Group] = {}
        self.rows_metric = BATCH_ROWS.labels(model.name)

    @classmethod
    def for_model(
        cls, model: OnnxModel, runner: InferenceRunner, max_batch_size: int, max_delay: float, inline_us: float = 0.0
    ) -> Batcher | None:
        batchable = all(s.shape and s.shape[0] == -1 for s in model.inputs + model.outputs)
        if not batchable:
            logger.info("model %s: not batched (a tensor has no dynamic first dimension)", model.name)
            return None
        return cls(model, runner, max_batch_size, max_delay, inline_us)

    def _start(self, feeds: dict[str, np.ndarray], outputs: list[str]) -> asyncio.Future:
        """One ONNX Runtime run: inline when predicted cheap, else on the runner's threads."""
        if self.model.estimate_us(feeds) >= self.inline_us:
            return self.runner.submit(self.model.run, feeds, outputs)
        future = asyncio.get_running_loop().create_future()
        try:
            future.set_result(self.model.run(feeds, outputs))
        except Exception as exc:  # noqa: BLE001 - delivered to the awaiting request(s)
            future.set_exception(exc)
        return future

    def submit(self, feeds: dict[str, np.ndarray], outputs: list[str]) -> asyncio.Future:
        rows = {a.shape[0] for a in feeds.values()}
        if len(rows) != 1 or next(iter(rows)) >= self.max_batch_size:
            return self._start(feeds, outputs)
        (count,) = rows
        key: _Key = (tuple(outputs), tuple(sorted((n, a.shape[1:], a.dtype.str) for n, a in feeds.items())))
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        group = self.groups.get(key)
        if group is not None and group.rows + count > self.max_batch_size:
            self._flush(key)
            group = None
        if group is None:
            group = self.groups[key] = _Group()
            group.timer = loop.call_later(self.max_delay, self._flush, key)
        group.items.append((feeds, count, future))
        group.rows += count
        if group.rows >= self.max_batch_size:
            self._flush(key)
        return future

    def _flush(self, key: _Key) -> None:
        group = self.groups.pop(key, None)
        if group is None:
            return
        if group.timer is not None:
            group.timer.cancel()
        outputs = list(key[0])
        self.rows_metric.observe(group.rows)
        if len(group.items) == 1:
            feeds, _, future = group.items[0]
            _chain(self._start(feeds, outputs), future)
            return
        names = list(group.items[0][0])
        merged = {n: np.concatenate([feeds[n] for feeds, _, _ in group.items]) for n in names}
        done = self._start(merged, outputs)
        done.add_done_callback(lambda f: self._split(f, group, outputs))

    def _split(self, done: asyncio.Future, group: _Group, outputs: list[str]) -> None:
        if done.cancelled() or done.exception() is not None:
            # one bad request must not fail its neighbours: rerun each on its own
            for feeds, _, future in group.items:
                _chain(self._start(feeds, outputs), future)
            return
        results: list[np.ndarray] = done.result()
        if any(r.ndim == 0 or r.shape[0] != group.rows for r in results):
            for feeds, _, future in group.items:
                _chain(self._start(feeds, outputs), future)
            return
        start = 0
        for _, count, future in group.items:
            if not future.cancelled():
                future.set_result([r[start : start + count] for r in results])
            start += count


def _chain(source: asyncio.Future, target: asyncio.Future) -> None:
    def copy(done: asyncio.Future) -> None:
        if target.cancelled():
            return
        if done.cancelled():
            target.cancel()
        elif done.exception() is not None:
            target.set_exception(done.exception())  # type: ignore[arg-type]
        else:
            target.set_result(done.result())

    source.add_done_callback(copy)
