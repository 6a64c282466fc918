"""Dynamic batching: merged runs give exactly the unbatched results."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import numpy as np
import pytest
import server_models
from conftest import reference, start_server, stop_server

from server.batcher import Batcher
from server.errors import InferenceFailed
from server.model import SessionSettings
from server.providers import CPU
from server.repository import ModelRepository
from server.runner import InferenceRunner


class CountingRunner(InferenceRunner):
    def __init__(self) -> None:
        super().__init__(1)
        self.calls: list[int] = []

    def submit(self, fn, *args):  # type: ignore[no-untyped-def]
        feeds = args[0]
        self.calls.append(next(iter(feeds.values())).shape[0])
        return super().submit(fn, *args)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("batch")
    server_models.mlp(root / "mlp" / "model.onnx")
    server_models.failing(root / "failing" / "model.onnx")
    repo = ModelRepository(root, "unused", SessionSettings(providers=[CPU], warmup=False))
    repo.load_all()
    return root, repo


def test_requests_merge_into_one_run_and_split_back(models) -> None:  # type: ignore[no-untyped-def]
    root, repo = models
    model = repo.get("mlp")
    batches = [np.random.default_rng(i).standard_normal((i + 1, 4)).astype(np.float32) for i in range(4)]  # 10 rows

    async def scenario() -> tuple[list[list[np.ndarray]], list[int]]:
        runner = CountingRunner()
        batcher = Batcher.for_model(model, runner, max_batch_size=10, max_delay=60.0)
        assert batcher is not None
        # the fourth request fills the batch: no timer is involved
        futures = [batcher.submit({"x": x}, model.output_names) for x in batches]
        results = await asyncio.gather(*futures)
        runner.close()
        return results, runner.calls

    results, calls = asyncio.run(scenario())
    assert calls == [10]
    for x, (label, scores) in zip(batches, results):
        expected_label, expected_scores = reference(root / "mlp" / "model.onnx", {"x": x})
        np.testing.assert_array_equal(label, expected_label)
        np.testing.assert_array_equal(scores, expected_scores)


def test_oversized_and_failing_requests(models) -> None:  # type: ignore[no-untyped-def]
    _, repo = models

    async def scenario() -> list[int]:
        runner = CountingRunner()
        mlp = Batcher.for_model(repo.get("mlp"), runner, max_batch_size=4, max_delay=0.001)
        assert mlp is not None
        big = await mlp.submit({"x": np.zeros((6, 4), np.float32)}, ["label"])  # larger than a batch: alone
        assert big[0].shape == (6,)
        failing = Batcher.for_model(repo.get("failing"), runner, max_batch_size=4, max_delay=60.0)
        assert failing is None  # its output has a fixed first dimension
        runner.close()
        return runner.calls

    assert asyncio.run(scenario()) == [6]


def test_one_bad_request_does_not_fail_its_batch(models, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _, repo = models
    model = repo.get("mlp")
    original = model.run

    def run(feeds, outputs):  # type: ignore[no-untyped-def]
        if np.isnan(feeds["x"]).any():
            raise InferenceFailed("nan input")
        return original(feeds, outputs)

    monkeypatch.setattr(model, "run", run)

    async def scenario():  # type: ignore[no-untyped-def]
        runner = CountingRunner()
        batcher = Batcher.for_model(model, runner, max_batch_size=2, max_delay=60.0)
        good = batcher.submit({"x": np.ones((1, 4), np.float32)}, ["label"])
        bad = batcher.submit({"x": np.full((1, 4), np.nan, np.float32)}, ["label"])
        outcome = await asyncio.gather(good, bad, return_exceptions=True)
        runner.close()
        return outcome, runner.calls

    (good, bad), calls = asyncio.run(scenario())
    assert calls == [2, 1, 1]  # merged, then each alone
    assert good[0].shape == (1,) and isinstance(bad, InferenceFailed)


def test_server_with_batching_answers_like_onnxruntime(tmp_path: Path) -> None:
    server_models.mlp(tmp_path / "mlp" / "model.onnx")
    running = start_server(
        tmp_path, tmp_path / "log", "--max_batch_size", "16", "--max_batch_delay_ms", "500", "--enable_grpc", "false"
    )
    try:
        inputs = [np.random.default_rng(i).standard_normal((2, 4)).astype(np.float32) for i in range(8)]

        async def fire() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=running.http, timeout=30) as client:
                return await asyncio.gather(
                    *[
                        client.post(
                            "/v2/models/mlp/infer",
                            json={
                                "inputs": [
                                    {"name": "x", "shape": [2, 4], "datatype": "FP32", "data": x.reshape(-1).tolist()}
                                ]
                            },
                        )
                        for x in inputs
                    ]
                )

        responses = asyncio.run(fire())
        for x, response in zip(inputs, responses):
            label, scores = reference(tmp_path / "mlp" / "model.onnx", {"x": x})
            outputs = {o["name"]: o for o in response.json()["outputs"]}
            assert outputs["label"]["data"] == label.tolist()
            assert outputs["scores"]["shape"] == [2, 3]
            np.testing.assert_array_equal(np.array(outputs["scores"]["data"], np.float32), scores.reshape(-1))
        metrics = httpx.get(running.http + "/metrics").text
        assert 'onnxserver_batch_rows_sum{model_name="mlp"} 16.0' in metrics
        count = float(
            next(
                line.split()[-1]
                for line in metrics.splitlines()
                if line.startswith('onnxserver_batch_rows_count{model_name="mlp"}')
            )
        )
        assert count < 8  # some of the 8 concurrent requests were merged
    finally:
        stop_server(running)
