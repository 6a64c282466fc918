"""Triton compatibility: model configuration, statistics and the repository RPCs, through tritonclient's
HTTP and gRPC clients; Triton's request counters in /metrics; failure log lines; the startup summary."""

from __future__ import annotations

import httpx
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from prometheus_client.parser import text_string_to_metric_families
from tritonclient.utils import InferenceServerException


@pytest.fixture(scope="module")
def http_client(server):  # type: ignore[no-untyped-def]
    client = httpclient.InferenceServerClient(server.http.removeprefix("http://"))
    yield client
    client.close()


@pytest.fixture(scope="module")
def grpc_client(server):  # type: ignore[no-untyped-def]
    client = grpcclient.InferenceServerClient(server.grpc)
    yield client
    client.close()


def _mlp_input(module, rows: int = 1):  # type: ignore[no-untyped-def]
    tensor = module.InferInput("x", [rows, 4], "FP32")
    tensor.set_data_from_numpy(np.ones((rows, 4), np.float32))
    return tensor


def test_model_config_over_http_and_grpc(http_client, grpc_client) -> None:  # type: ignore[no-untyped-def]
    config = http_client.get_model_config("mlp")
    assert config["name"] == "mlp" and config["platform"] == "onnxruntime_onnx" and config["backend"] == "onnxruntime"
    assert config["max_batch_size"] == 0  # dynamic batching is off on this server
    assert config["input"] == [{"name": "x", "data_type": "TYPE_FP32", "dims": [-1, 4]}]
    assert {o["name"]: o["data_type"] for o in config["output"]} == {"label": "TYPE_INT64", "scores": "TYPE_FP32"}
    via_grpc = grpc_client.get_model_config("mlp", as_json=True)["config"]
    assert via_grpc["name"] == "mlp" and via_grpc["input"][0]["data_type"] == "TYPE_FP32"
    assert [int(d) for d in via_grpc["input"][0]["dims"]] == [-1, 4]
    types = http_client.get_model_config("types")
    assert {i["name"]: i["data_type"] for i in types["input"]}["in_BYTES"] == "TYPE_STRING"
    with pytest.raises(InferenceServerException) as caught:
        grpc_client.get_model_config("nope")
    assert "does not exist" in caught.value.message()


def test_statistics_count_successes_and_failures(http_client, grpc_client) -> None:  # type: ignore[no-untyped-def]
    def stats() -> dict:
        (row,) = http_client.get_inference_statistics("iris")["model_stats"]
        return row

    before = stats()
    x = httpclient.InferInput("X", [2, 4], "FP32")
    x.set_data_from_numpy(np.ones((2, 4), np.float32))
    http_client.infer("iris", [x])
    bad = httpclient.InferInput("X", [1, 3], "FP32")
    bad.set_data_from_numpy(np.ones((1, 3), np.float32))
    with pytest.raises(InferenceServerException):
        http_client.infer("iris", [bad])
    after = stats()
    assert after["name"] == "iris" and after["version"] == "1"
    inference = after["inference_stats"]
    assert inference["success"]["count"] == before["inference_stats"]["success"]["count"] + 1
    assert inference["fail"]["count"] == before["inference_stats"]["fail"]["count"] + 1
    assert inference["compute_infer"]["ns"] > before["inference_stats"]["compute_infer"]["ns"]
    assert after["execution_count"] == before["execution_count"] + 1
    assert after["last_inference"] > 0
    via_grpc = grpc_client.get_inference_statistics("iris", as_json=True)["model_stats"][0]
    assert int(via_grpc["inference_stats"]["success"]["count"]) == inference["success"]["count"]
    every = {row["name"] for row in grpc_client.get_inference_statistics(as_json=True)["model_stats"]}
    assert {"mlp", "iris", "types"} <= every


def test_grpc_repository_index_load_unload(grpc_client) -> None:  # type: ignore[no-untyped-def]
    index = {m.name: m for m in grpc_client.get_model_repository_index().models}
    assert index["mlp"].state == "READY" and index["types"].version == "3"
    grpc_client.unload_model("add")
    ready = {m.name for m in grpc_client.get_model_repository_index().models if m.state == "READY"}
    assert "add" not in ready
    grpc_client.load_model("add")
    assert grpc_client.is_model_ready("add")
    with pytest.raises(InferenceServerException) as caught:
        grpc_client.load_model("nope")
    assert "does not exist" in caught.value.message()


def test_metrics_count_requests_by_model_and_outcome(http: httpx.Client, server) -> None:  # type: ignore[no-untyped-def]
    body = {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
    http.post("/v2/models/mlp/infer", json=body)
    failed = http.post(
        "/v2/models/mlp/infer", json={"inputs": [{"name": "x"}]}, headers={"x-request-id": "req-broken-7"}
    )
    assert failed.status_code == 400
    text = http.get("/metrics").text
    assert "# TYPE nv_inference_request_success counter" in text
    success = _sample(text, 'nv_inference_request_success{model="mlp",version="1"}')
    rejected = _sample(text, 'nv_inference_request_failure{model="mlp",reason="REJECTED",version="1"}')
    assert success >= 1 and rejected >= 1
    assert _sample(text, 'nv_inference_exec_count{model="mlp",version="1"}') >= success
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["nv_inference_request_success"].type == "counter"
    openmetrics = http.get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}).text
    assert openmetrics.endswith("# EOF\n") and openmetrics.count("# EOF") == 1
    assert 'nv_inference_request_success{model="mlp",version="1"}' in openmetrics
    warnings = [line for line in server.output().splitlines() if "req-broken-7" in line]
    assert len(warnings) == 1 and " WARNING " in warnings[0] and "400" in warnings[0]


def _sample(text: str, series: str) -> float:
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{series} not in /metrics")


def test_startup_summary_line_per_model(server) -> None:  # type: ignore[no-untyped-def]
    log = server.output()
    for name in ("mlp", "iris", "types", "add", "failing"):
        lines = [line for line in log.splitlines() if f"model {name}: version " in line and " READY on " in line]
        assert len(lines) >= 1, name
