"""Running ONNX Runtime off the event loop.

A small pool of threads takes ``fn(*args)`` jobs (a model's ``run``) from a queue and resolves asyncio
futures with ``call_soon_threadsafe``; this is ``run_in_executor`` without the concurrent.futures
layer, which matters when a request is ~100 µs in total. ONNX Runtime releases the GIL while it runs.
"""

from __future__ import annotations

import asyncio
import queue
import threading


def _settle(future: asyncio.Future, ok: bool, value: object) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)  # type: ignore[arg-type]


class InferenceRunner:
    def __init__(self, threads: int) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"inference-{i}", daemon=True) for i in range(max(1, threads))
        ]
        for thread in self._threads:
            thread.start()

    def _work(self) -> None:
        jobs = self._jobs
        while True:
            job = jobs.get()
            if job is None:
                return
            loop, future, fn, args = job
            try:
                value, ok = fn(*args), True
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                value, ok = exc, False
            try:
                loop.call_soon_threadsafe(_settle, future, ok, value)
            except RuntimeError:  # the loop closed while this job ran
                pass

    def submit(self, fn, *args) -> asyncio.Future:
        """Run ``fn(*args)`` on a pool thread; await the returned future for its result."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((loop, future, fn, args))
        return future

    def close(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)
