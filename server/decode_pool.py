"""Very large JSON request bodies decoded in a helper process.

orjson holds the GIL for a whole parse (about a second for 60 MB), so a thread does not keep the event loop
responsive while such a body is decoded; a process does. Bodies from ``--process_decode_bytes`` up whose model has no
BYTES tensors (object arrays of strings would cost as much to send back as to parse) go to one helper process,
started on first use; the decoded arrays come back pickled (a memory copy). Binary-extension bodies are not parsed
element by element and stay on a thread. No KServe counterpart: KServe decodes every body on its event loop.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from server import codec
from server.model import ModelSignature, OnnxModel

logger = logging.getLogger("server")


def _decode_v2(signature: ModelSignature, body: bytes) -> codec.InferRequest:
    return codec.decode_v2(signature, body, None)  # type: ignore[arg-type]


def _decode_v1(signature: ModelSignature, body: bytes) -> dict[str, np.ndarray]:
    return codec.decode_v1(signature, body)  # type: ignore[arg-type]


class DecodePool:
    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        self._pool: ProcessPoolExecutor | None = None

    @property
    def started(self) -> bool:
        return self._pool is not None

    def wants(self, model: OnnxModel, size: int, header_length: str | None) -> bool:
        if not (0 < self.threshold <= size and header_length is None):
            return False
        signature = model.signature
        assert signature is not None  # requests reach loaded models only
        return not signature.has_strings

    async def decode_v2(self, model: OnnxModel, body: bytes) -> codec.InferRequest:
        return await self._run(_decode_v2, model, body)

    async def decode_v1(self, model: OnnxModel, body: bytes) -> dict[str, np.ndarray]:
        return await self._run(_decode_v1, model, body)

    async def _run(self, fn, model: OnnxModel, body: bytes):
        loop = asyncio.get_running_loop()
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
            logger.info("started the helper process for large JSON bodies")
        try:
            return await loop.run_in_executor(self._pool, fn, model.signature, body)
        except BrokenProcessPool:
            logger.warning("the helper process for large JSON bodies died; decoding this body on a thread")
            self.close()
            return await loop.run_in_executor(None, fn, model.signature, body)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
