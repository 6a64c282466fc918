"""The Open Inference Protocol over gRPC: tritonclient.grpc, plus typed contents through our own messages."""

from __future__ import annotations

from pathlib import Path

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from conftest import reference
from test_server_v2_http import SAMPLES
from tritonclient.utils import InferenceServerException

from server.proto import messages as pb


@pytest.fixture(scope="module")
def client(server):  # type: ignore[no-untyped-def]
    triton = grpcclient.InferenceServerClient(server.grpc)
    yield triton
    triton.close()


@pytest.fixture(scope="module")
def channel(server):  # type: ignore[no-untyped-def]
    with grpc.insecure_channel(server.grpc) as ch:
        yield ch


def call(channel: grpc.Channel, rpc: str, request: object) -> object:
    request_cls, response_cls = pb.RPCS[rpc]
    stub = channel.unary_unary(
        f"/{pb.SERVICE_NAME}/{rpc}",
        request_serializer=request_cls.SerializeToString,
        response_deserializer=response_cls.FromString,
    )
    return stub(request, timeout=30)


def test_health_and_metadata(client) -> None:  # type: ignore[no-untyped-def]
    assert client.is_server_live() and client.is_server_ready()
    assert client.is_model_ready("mlp")
    meta = client.get_model_metadata("types", as_json=True)
    assert meta["versions"] == ["3"] and meta["platform"] == "onnxruntime_onnx"
    assert {i["name"]: (i["datatype"], i["shape"]) for i in meta["inputs"]}["in_FP16"] == ("FP16", ["-1", "3"])
    assert "binary_tensor_data" in client.get_server_metadata(as_json=True)["extensions"]
    with pytest.raises(InferenceServerException) as caught:
        client.get_model_metadata("nope")
    assert caught.value.status() == "StatusCode.NOT_FOUND"


def test_every_datatype_raw(client) -> None:  # type: ignore[no-untyped-def]
    inputs = []
    for datatype, array in SAMPLES.items():
        tensor = grpcclient.InferInput(f"in_{datatype}", list(array.shape), datatype)
        tensor.set_data_from_numpy(array)
        inputs.append(tensor)
    result = client.infer("types", inputs, request_id="g-1")
    assert result.get_response().id == "g-1"
    for datatype, array in SAMPLES.items():
        got = result.as_numpy(f"out_{datatype}")
        if datatype == "BYTES":
            assert [x.decode() for x in got.reshape(-1)] == list(array.reshape(-1))
        else:
            np.testing.assert_array_equal(got, array, err_msg=datatype)
            assert got.dtype == array.dtype


def test_classifier_and_output_selection(client, repository_dir: Path, iris_x: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    tensor = grpcclient.InferInput("X", list(iris_x.shape), "FP32")
    tensor.set_data_from_numpy(iris_x)
    result = client.infer("iris", [tensor], outputs=[grpcclient.InferRequestedOutput("probabilities")])
    assert [o.name for o in result.get_response().outputs] == ["probabilities"]
    (probabilities,) = reference(repository_dir / "iris" / "model.onnx", {"X": iris_x}, ["probabilities"])
    np.testing.assert_allclose(result.as_numpy("probabilities"), probabilities, rtol=1e-6)


def test_status_codes(client) -> None:  # type: ignore[no-untyped-def]
    tensor = grpcclient.InferInput("x", [1, 5], "FP32")
    tensor.set_data_from_numpy(np.zeros((1, 5), dtype=np.float32))
    with pytest.raises(InferenceServerException) as caught:
        client.infer("mlp", [tensor])
    assert caught.value.status() == "StatusCode.INVALID_ARGUMENT" and "shape [1, 5]" in caught.value.message()
    with pytest.raises(InferenceServerException) as caught:
        client.infer("nope", [tensor])
    assert caught.value.status() == "StatusCode.NOT_FOUND"
    with pytest.raises(InferenceServerException) as caught:
        client.is_model_ready("nope")
    assert caught.value.status() == "StatusCode.NOT_FOUND"


def test_large_message_above_grpc_default(client, repository_dir: Path) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(1).standard_normal((300_000, 4)).astype(np.float32)  # 4.8 MB > grpc's 4 MiB
    tensor = grpcclient.InferInput("x", list(x.shape), "FP32")
    tensor.set_data_from_numpy(x)
    result = client.infer("mlp", [tensor], outputs=[grpcclient.InferRequestedOutput("label")])
    (label,) = reference(repository_dir / "mlp" / "model.onnx", {"x": x}, ["label"])
    np.testing.assert_array_equal(result.as_numpy("label"), label)


def test_typed_contents_in_typed_contents_out(channel: grpc.Channel) -> None:
    request = pb.ModelInferRequest(model_name="add", id="typed")
    for name, values in (("a", [1.0, 2.0]), ("b", [0.5, 0.25])):
        tensor = request.inputs.add(name=name, datatype="FP32", shape=[1, 2])
        tensor.contents.fp32_contents.extend(values)
    response = call(channel, "ModelInfer", request)
    assert response.id == "typed" and not response.raw_output_contents
    assert list(response.outputs[0].contents.fp32_contents) == [1.5, 2.25]
    assert list(response.outputs[0].shape) == [1, 2]


def test_typed_strings_and_mixed_raw_rejected(channel: grpc.Channel) -> None:
    request = pb.ModelInferRequest(model_name="types")
    for datatype, array in SAMPLES.items():
        tensor = request.inputs.add(name=f"in_{datatype}", datatype=datatype, shape=list(array.shape))
        if datatype == "FP16":
            continue
        field = {
            "BOOL": "bool_contents",
            "BYTES": "bytes_contents",
            "FP32": "fp32_contents",
            "FP64": "fp64_contents",
            "INT64": "int64_contents",
            "UINT64": "uint64_contents",
        }.get(datatype, "uint_contents" if datatype.startswith("UINT") else "int_contents")
        values = [x.encode() for x in array.reshape(-1)] if datatype == "BYTES" else array.reshape(-1).tolist()
        getattr(tensor.contents, field).extend(values)
    with pytest.raises(grpc.RpcError) as caught:  # FP16 has no typed field
        call(channel, "ModelInfer", request)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "raw_input_contents" in caught.value.details()
    request.inputs[9].ClearField("contents")
    del request.inputs[9]
    request.outputs.add(name="out_BYTES")
    request.outputs.add(name="out_INT8")
    with pytest.raises(grpc.RpcError) as caught:
        call(channel, "ModelInfer", request)
    assert "needs inputs ['in_FP16']" in caught.value.details()


def test_raw_count_mismatch(channel: grpc.Channel) -> None:
    request = pb.ModelInferRequest(model_name="mlp")
    request.inputs.add(name="x", datatype="FP32", shape=[1, 4])
    request.raw_input_contents.append(b"\0" * 16)
    request.raw_input_contents.append(b"\0" * 16)
    with pytest.raises(grpc.RpcError) as caught:
        call(channel, "ModelInfer", request)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_proto_descriptor_is_up_to_date() -> None:
    from server.proto import generate

    assert generate.render(generate.serialized_descriptor()) == generate.TARGET.read_text()
