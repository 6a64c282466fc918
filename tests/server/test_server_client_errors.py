"""Client mistakes are 4xx with a message, never a 500, and no response body names a server path."""

from __future__ import annotations

from pathlib import Path

import grpc
import httpx
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException


def test_inputs_disagreeing_on_the_batch_dimension(http: httpx.Client) -> None:
    body = {
        "inputs": [
            {"name": "a", "shape": [2, 2], "datatype": "FP32", "data": [1, 2, 3, 4]},
            {"name": "b", "shape": [3, 2], "datatype": "FP32", "data": [1, 2, 3, 4, 5, 6]},
        ]
    }
    response = http.post("/v2/models/add/infer", json=body)
    assert response.status_code == 400, response.text
    assert "disagree on dimension 'batch'" in response.json()["error"] and "a[0]=2, b[0]=3" in response.json()["error"]
    v1 = http.post("/v1/models/add:predict", json={"inputs": {"a": [[1, 2]], "b": [[1, 2], [3, 4]]}})
    assert v1.status_code == 400 and "disagree" in v1.json()["error"]


def test_inconsistent_batch_over_grpc(server) -> None:  # type: ignore[no-untyped-def]
    client = grpcclient.InferenceServerClient(server.grpc)
    a, b = grpcclient.InferInput("a", [2, 2], "FP32"), grpcclient.InferInput("b", [3, 2], "FP32")
    a.set_data_from_numpy(np.zeros((2, 2), np.float32))
    b.set_data_from_numpy(np.zeros((3, 2), np.float32))
    with pytest.raises(InferenceServerException) as caught:
        client.infer("add", [a, b])
    client.close()
    assert caught.value.status() == str(grpc.StatusCode.INVALID_ARGUMENT) and "disagree" in caught.value.message()


def test_long_model_name_on_load_is_4xx_without_paths(http: httpx.Client, repository_dir: Path) -> None:
    name = "m" * 5000
    for path in (f"/v2/repository/models/{name}/load", f"/v2/repository/models/{name}/unload"):
        response = http.post(path)
        assert 400 <= response.status_code < 500, response.text
        assert str(repository_dir) not in response.text and "/tmp" not in response.text
    assert http.post(f"/v2/models/{name}/infer", json={}).status_code == 404


def test_requested_output_names_of_the_wrong_type(http: httpx.Client) -> None:
    for name in ([1], {"a": 1}, None, 3):
        body = {
            "inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}],
            "outputs": [{"name": name}],
        }
        response = http.post("/v2/models/mlp/infer", json=body)
        assert response.status_code == 400, (name, response.text)


def test_loading_a_broken_file_names_no_server_path(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from conftest import start_server, stop_server

    root = tmp_path / "models"
    (root / "broken").mkdir(parents=True)
    (root / "broken" / "model.onnx").write_bytes(b"junk")
    import server_models

    server_models.mlp(root / "ok" / "model.onnx")
    running = start_server(root, tmp_path / "log", "--enable_grpc", "false")
    try:
        response = httpx.post(running.http + "/v2/repository/models/broken/load")
    finally:
        stop_server(running)
    assert response.status_code == 400  # it cannot load until the file changes (test_server_load_errors.py)
    assert "broken/model.onnx" in response.json()["error"] and str(tmp_path) not in response.text


def test_junk_everywhere_is_never_a_500(http: httpx.Client) -> None:
    junk = [
        b"",
        b"null",
        b"[]",
        b"{}",
        b'{"inputs": {}}',
        b'{"inputs": [null]}',
        b'{"inputs": [{"name": []}]}',
        b'{"inputs": [{"name": "x", "shape": "1,4", "datatype": "FP32", "data": [1]}]}',
        b'{"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [[1, 2], [3]]}]}',
        b'{"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": ["a", "b", "c", "d"]}]}',
        b'{"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}], "outputs": "all"}',
        b'{"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}], "parameters": []}',
        b'{"instances": [[1, 2, 3, 4], [1, 2]]}',
        b'{"instances": [{"x": 1}, [1]]}',
        b"\xff\xfe",
    ]
    paths = [
        "/v2/models/mlp/infer",
        "/v2/models/mlp/versions/1/infer",
        "/v1/models/mlp:predict",
        "/v2/models/add/infer",
        "/v1/models/add:predict",
        "/v2/repository/index",
        "/v2/models/types/infer",
    ]
    for path in paths:
        for body in junk:
            response = http.post(path, content=body)
            assert response.status_code < 500, (path, body, response.text)
