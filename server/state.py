"""What the HTTP and gRPC front ends share: options, the model repository and the inference runner."""

from __future__ import annotations

import asyncio
import logging

import numpy as np

from server.config import Options
from server.model import OnnxModel, SessionSettings
from server.providers import default_providers
from server.repository import ModelRepository
from server.runner import InferenceRunner

logger = logging.getLogger("server")

SERVER_NAME = "kserve-onnxserver"
SERVER_VERSION = "0.1.0"
EXTENSIONS = ["binary_tensor_data", "model_repository", "model_repository_extension"]


class ServerState:
    def __init__(self, options: Options) -> None:
        from pathlib import Path

        self.options = options
        settings = SessionSettings(
            providers=default_providers(options.device),
            intra_op_threads=options.intra_op_threads,
            inter_op_threads=options.inter_op_threads,
            warmup=options.warmup,
        )
        self.repository = ModelRepository(Path(options.model_dir), options.model_name, settings)
        self.runner: InferenceRunner | None = None
        self._inline_us = options.inline_inference_us

    def start(self) -> None:
        """Start the inference threads (in the serving process, after any fork/spawn)."""
        if self.runner is None:
            self.runner = InferenceRunner(self.options.max_threads)

    def stop(self) -> None:
        if self.runner is not None:
            self.runner.close()
            self.runner = None

    def ready(self) -> bool:
        return all(m.ready for m in self.repository.models.values())

    def server_metadata(self) -> dict[str, object]:
        return {"name": SERVER_NAME, "version": SERVER_VERSION, "extensions": EXTENSIONS}

    def infer(self, model: OnnxModel, feeds: dict[str, np.ndarray], outputs: list[str]) -> asyncio.Future:
        """Schedule one inference off the event loop (through the model's batcher when batching is on)."""
        batcher = model.batcher
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

    async def load(self, name: str) -> OnnxModel:
        loop = asyncio.get_running_loop()
        model = await loop.run_in_executor(None, self.repository.load, name)
        self._attach_batcher(model)
        return model

    async def load_all(self) -> list[str]:
        loop = asyncio.get_running_loop()
        names = await loop.run_in_executor(None, self.repository.load_all)
        for name in names:
            self._attach_batcher(self.repository.models[name])
        return names

    async def unload(self, name: str) -> None:
        self.repository.unload(name)

    def _attach_batcher(self, model: OnnxModel) -> None:
        if self.options.max_batch_size > 1:
            from server.batcher import Batcher

            assert self.runner is not None
            model.batcher = Batcher.for_model(
                model, self.runner, self.options.max_batch_size, self.options.max_batch_delay_ms / 1000.0,
                self._inline_us,
            )
