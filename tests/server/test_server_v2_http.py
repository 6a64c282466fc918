"""V2 REST with tritonclient.http (binary extension and JSON), outputs checked against ONNX Runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as httpclient
from conftest import reference
from tritonclient.utils import InferenceServerException

SAMPLES = {
    "BOOL": np.array([[True, False, True], [False, False, True]]),
    "UINT8": np.array([[0, 7, 255], [1, 2, 3]], dtype=np.uint8),
    "UINT16": np.array([[0, 7, 65535], [1, 2, 3]], dtype=np.uint16),
    "UINT32": np.array([[0, 7, 2**32 - 1], [1, 2, 3]], dtype=np.uint32),
    "UINT64": np.array([[0, 7, 2**64 - 1], [1, 2, 3]], dtype=np.uint64),
    "INT8": np.array([[-128, 0, 127], [1, -2, 3]], dtype=np.int8),
    "INT16": np.array([[-32768, 0, 32767], [1, -2, 3]], dtype=np.int16),
    "INT32": np.array([[-(2**31), 0, 2**31 - 1], [1, -2, 3]], dtype=np.int32),
    "INT64": np.array([[-(2**63), 2**53 + 1, 2**63 - 1], [1, -2, 3]], dtype=np.int64),
    "FP16": np.array([[0.5, -1.25, 65504], [1e-3, 2, 3]], dtype=np.float16),
    "FP32": np.array([[0.1, -1e-30, 3.4e38], [1, 2, 3]], dtype=np.float32),
    "FP64": np.array([[0.1, -1e-300, 1.7e308], [1, 2, 3]], dtype=np.float64),
    "BYTES": np.array([["a", "", "naïve"], ["x" * 300, "b", "日本"]], dtype=object),
}


@pytest.fixture(scope="module")
def client(server):  # type: ignore[no-untyped-def]
    with_client = httpclient.InferenceServerClient(server.http.removeprefix("http://"))
    yield with_client
    with_client.close()


def test_health_and_server_metadata(client) -> None:  # type: ignore[no-untyped-def]
    assert client.is_server_live()
    assert client.is_server_ready()
    assert client.is_model_ready("mlp")
    assert not client.is_model_ready("nope")
    meta = client.get_server_metadata()
    assert "binary_tensor_data" in meta["extensions"]
    assert meta["name"] and meta["version"]


def test_model_metadata_types_and_dynamic_dims(client) -> None:  # type: ignore[no-untyped-def]
    meta = client.get_model_metadata("types")
    assert meta["versions"] == ["3"]  # the highest version directory is served
    assert meta["platform"] == "onnxruntime_onnx"
    assert {i["name"]: i["datatype"] for i in meta["inputs"]} == {f"in_{dt}": dt for dt in SAMPLES}
    assert all(i["shape"] == [-1, 3] for i in meta["inputs"] + meta["outputs"])
    mlp = client.get_model_metadata("mlp")
    assert [(o["name"], o["datatype"], o["shape"]) for o in mlp["outputs"]] == [
        ("label", "INT64", [-1]),
        ("scores", "FP32", [-1, 3]),
    ]


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "json"])
def test_every_datatype_round_trips(client, binary: bool) -> None:  # type: ignore[no-untyped-def]
    inputs = []
    for datatype, array in SAMPLES.items():
        tensor = httpclient.InferInput(f"in_{datatype}", list(array.shape), datatype)
        # tritonclient refuses FP16 as JSON, so FP16 always goes binary
        tensor.set_data_from_numpy(array, binary_data=binary or datatype == "FP16")
        inputs.append(tensor)
    outputs = [httpclient.InferRequestedOutput(f"out_{dt}", binary_data=binary or dt == "FP16") for dt in SAMPLES]
    result = client.infer("types", inputs, outputs=outputs, request_id="rt-1")
    assert result.get_response()["id"] == "rt-1"
    for datatype, array in SAMPLES.items():
        got = result.as_numpy(f"out_{datatype}")
        assert got.shape == array.shape, datatype
        if datatype == "BYTES":
            assert [x.decode() if isinstance(x, bytes) else x for x in got.reshape(-1)] == list(array.reshape(-1))
        else:
            assert got.dtype == array.dtype, datatype
            np.testing.assert_array_equal(got, array, err_msg=datatype)


def test_mlp_matches_onnxruntime(client, repository_dir: Path) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32)
    tensor = httpclient.InferInput("x", [5, 4], "FP32")
    tensor.set_data_from_numpy(x)
    result = client.infer("mlp", [tensor])
    label, scores = reference(repository_dir / "mlp" / "model.onnx", {"x": x})
    np.testing.assert_array_equal(result.as_numpy("label"), label)
    np.testing.assert_array_equal(result.as_numpy("scores"), scores)


def test_output_selection_order_and_json_mode(client, repository_dir: Path) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((2, 4), dtype=np.float32)
    tensor = httpclient.InferInput("x", [2, 4], "FP32")
    tensor.set_data_from_numpy(x, binary_data=False)  # pure JSON request, no Content-Type header
    result = client.infer("mlp", [tensor], outputs=[httpclient.InferRequestedOutput("scores", binary_data=False)])
    response = result.get_response()
    assert [o["name"] for o in response["outputs"]] == ["scores"]
    assert "data" in response["outputs"][0]
    (scores,) = reference(repository_dir / "mlp" / "model.onnx", {"x": x}, ["scores"])
    np.testing.assert_allclose(result.as_numpy("scores"), scores, rtol=1e-6)


def test_sklearn_classifier(client, repository_dir: Path, iris_x: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    tensor = httpclient.InferInput("X", list(iris_x.shape), "FP32")
    tensor.set_data_from_numpy(iris_x)
    result = client.infer("iris", [tensor])
    label, probabilities = reference(repository_dir / "iris" / "model.onnx", {"X": iris_x})
    np.testing.assert_array_equal(result.as_numpy("label"), label)
    np.testing.assert_allclose(result.as_numpy("probabilities"), probabilities, rtol=1e-6)


def test_errors_reach_the_client_with_the_message(client) -> None:  # type: ignore[no-untyped-def]
    tensor = httpclient.InferInput("x", [1, 5], "FP32")
    tensor.set_data_from_numpy(np.zeros((1, 5), dtype=np.float32))
    with pytest.raises(InferenceServerException) as caught:
        client.infer("mlp", [tensor])
    assert caught.value.status() == "400"
    assert "shape [1, 5]" in caught.value.message()
    with pytest.raises(InferenceServerException) as caught:
        client.infer("nope", [tensor])
    assert caught.value.status() == "404"


def test_repository_index_unload_load(client, repository_dir: Path) -> None:  # type: ignore[no-untyped-def]
    index = {row["name"]: row for row in client.get_model_repository_index()}
    assert set(index) == {"mlp", "types", "add", "failing", "iris"}
    assert index["types"]["version"] == "3" and index["types"]["state"] == "READY"
    client.unload_model("add")
    assert not client.is_model_ready("add")
    states = {row["name"]: row["state"] for row in client.get_model_repository_index()}
    assert states["add"] == "UNAVAILABLE"
    client.load_model("add")
    assert client.is_model_ready("add")
    with pytest.raises(InferenceServerException) as caught:
        client.load_model("../mlp")
    assert caught.value.status() == "404"
