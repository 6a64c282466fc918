"""What the HTTP and gRPC front ends share: options, the model repository, the inference runner and the batchers.

Dynamic batching (``--max_batch_size`` > 1) gives each batchable model one Batcher, kept here by model name;
a model knows nothing of it, so whoever needs it (inference, Triton's model configuration, the statistics)
asks ``batcher_for(model)``. A batcher belongs to one instance: after a reload, requests that still hold the
old instance run unbatched on it.

Repository operations (KServe's ``ModelRepository`` load/unload, Triton's repository extension) are
atomic for clients: a (re)load builds and warms the new instance off the event loop and swaps it in
only when it is ready; requests that already hold the old instance finish on it; an unloaded model
answers 404 to new requests. Operations on the repository run one at a time.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from server.batcher import Batcher
from server.config import Options
from server.decode_pool import DecodePool
from server.errors import ModelNotReady
from server.model import OnnxModel, SessionSettings
from server.providers import default_providers
from server.repository import ModelRepository
from server.runner import InferenceRunner
from server.stats import ModelStats, StatsCollector

logger = logging.getLogger("server")

SERVER_NAME = "kserve-onnxserver"
SERVER_VERSION = "0.1.0"
EXTENSIONS = [
    "binary_tensor_data",
    "model_repository",
    "model_repository_extension",
    "model_configuration",
    "statistics",
]


def thaw_heap() -> None:
    """Undo main.freeze_heap: a model that leaves the repository may sit in reference cycles that only the
    cyclic collector frees, and it never visits frozen objects."""
    if gc.get_freeze_count():
        gc.unfreeze()


class ServerState:
    def __init__(self, options: Options) -> None:
        self.options = options
        settings = SessionSettings(
            providers=default_providers(options.device),
            intra_op_threads=options.intra_op_threads,
            inter_op_threads=options.inter_op_threads,
            warmup=options.warmup,
        )
        self.repository = ModelRepository(Path(options.model_dir), options.model_name, settings)
        self.runner: InferenceRunner | None = None
        self.batchers: dict[str, Batcher] = {}  # model name -> the batcher of its serving instance
        self._inline_us = options.inline_inference_us
        self._lock: asyncio.Lock | None = None
        self.closing = False  # stop() was called: repository loads answer 503
        self.collector = StatsCollector(self.model_stats)
        self.decode_pool = DecodePool(options.process_decode_bytes)

    def start(self) -> None:
        """Start the inference threads and batchers (in the serving process, after any fork/spawn)."""
        self.closing = False
        if self.runner is None:
            self.runner = InferenceRunner(self.options.max_threads)
        for model in self.repository.models.values():
            self._attach_batcher(model)

    def stop(self) -> None:
        self.closing = True
        if self.runner is not None:
            self.runner.close()
            self.runner = None
        self.decode_pool.close()

    def ready(self) -> bool:
        return all(m.ready for m in self.repository.models.values())

    def server_metadata(self) -> dict[str, object]:
        return {"name": SERVER_NAME, "version": SERVER_VERSION, "extensions": EXTENSIONS}

    def model_stats(self) -> Iterator[tuple[str, str, ModelStats]]:
        for name, model in sorted(self.repository.models.items()):
            yield name, model.version, model.stats

    def infer(self, model: OnnxModel, feeds: dict[str, np.ndarray], outputs: list[str]) -> asyncio.Future:
        """Schedule one inference off the event loop (through the model's batcher when batching is on)."""
        batcher = self.batcher_for(model)
        if batcher is not None:
            return batcher.submit(feeds, outputs)
        if model.estimate_us(feeds) < self._inline_us:
            # Cheaper than the thread hand-off itself (~20 µs of CPU): run on the loop.
            future = asyncio.get_running_loop().create_future()
            try:
                future.set_result(model.run(feeds, outputs))
            except Exception as exc:  # noqa: BLE001 - delivered to the awaiting handler
                future.set_exception(exc)
            return future
        assert self.runner is not None, "ServerState.start() was not called"
        return self.runner.submit(model.run, feeds, outputs)

    def batcher_for(self, model: OnnxModel) -> Batcher | None:
        """The dynamic batcher of this instance of ``model``, or None when it is not batched."""
        batcher = self.batchers.get(model.name)
        return batcher if batcher is not None and batcher.model is model else None

    def load_all(self) -> list[str]:
        """Load every model before serving (blocking); see ModelRepository.load_all."""
        return self.repository.load_all()

    # --- repository extension (serving) ----------------------------------------------------------
    def _repository_lock(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def load(self, name: str) -> OnnxModel:
        """Load or reload ``name``; the serving instance (if any) keeps serving until the new one is ready.

        Raises what ModelRepository.build raises (LoadRefused 400, ModelNotFound 404, ModelNotReady 503), and
        ModelNotReady while the server shuts down. Loads wait for one another (Triton's do too)."""
        repository = self.repository
        async with self._repository_lock():
            self._refuse_while_closing(name)
            try:
                model = await asyncio.get_running_loop().run_in_executor(None, repository.build, name)
            except ModelNotReady as exc:
                if name not in repository.models:
                    repository.failures[name] = exc.detail
                logger.error("model %s: load failed: %s", name, exc.detail)
                raise
            self._refuse_while_closing(name)  # stop() came while it was building
            if self.runner is not None:
                self._attach_batcher(model)
            repository.install(model)
            thaw_heap()
        logger.info("model %s: %s", name, model.summary())
        return model

    def _refuse_while_closing(self, name: str) -> None:
        if self.closing:
            raise ModelNotReady(name, "the server is shutting down")

    async def unload(self, name: str) -> None:
        async with self._repository_lock():
            self.repository.remove(name)
            self.batchers.pop(name, None)
            thaw_heap()
        logger.info("model %s: unloaded", name)

    def _attach_batcher(self, model: OnnxModel) -> None:
        if self.options.max_batch_size <= 1 or self.batcher_for(model) is not None:
            return
        assert self.runner is not None
        batcher = Batcher.for_model(
            model,
            self.runner,
            self.options.max_batch_size,
            self.options.max_batch_delay_ms / 1000.0,
            self._inline_us,
        )
        if batcher is None:
            self.batchers.pop(model.name, None)
        else:
            self.batchers[model.name] = batcher
