"""In-process units: command line, provider selection, repository layouts, codec edge cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import server_models

from server.codec import decode_v2, encode_v2, raw_from_tensor, tensor_from_raw
from server.config import parse_options
from server.errors import InvalidInput, LoadRefused, ModelNotFound
from server.model import SessionSettings
from server.providers import CPU, CUDA, select_providers
from server.repository import ModelRepository, RepositoryError

CPU_ONLY = SessionSettings(providers=[CPU], warmup=False)


def test_kserve_flags_with_underscores_or_dashes() -> None:
    a = parse_options(
        [
            "--model_name",
            "m",
            "--model_dir",
            "/d",
            "--http_port",
            "9000",
            "--grpc_port",
            "9001",
            "--workers",
            "2",
            "--max_threads",
            "3",
        ]
    )
    b = parse_options(
        [
            "--model-name",
            "m",
            "--model-dir",
            "/d",
            "--http-port",
            "9000",
            "--grpc-port",
            "9001",
            "--workers",
            "2",
            "--max-threads",
            "3",
        ]
    )
    assert a == b
    assert (a.model_name, a.http_port, a.grpc_port, a.workers, a.max_threads) == ("m", 9000, 9001, 2, 3)
    c = parse_options(
        [
            "--model_dir=/d",
            "--enable_grpc",
            "false",
            "--predictor_host",
            "x",
            "--event-loop",
            "asyncio",
            "--timeout-keep-alive",
            "7",
        ]
    )
    assert c.enable_grpc is False and c.event_loop == "asyncio" and c.timeout_keep_alive == 7
    assert parse_options(["--model_dir", "/d", "--access_log_format", "%(h)s"]).enable_access_log


def test_limits_take_durations() -> None:
    options = parse_options(
        ["--model_dir", "/d", "--header_timeout", "500ms", "--body_timeout", "2m", "--max_header_size", "4096"]
    )
    assert (options.header_timeout, options.body_timeout) == (0.5, 120.0)
    limits = options.limits()
    assert (limits.max_header_bytes, limits.header_timeout, limits.body_timeout) == (4096, 0.5, 120.0)
    assert parse_options(["--model_dir", "/d", "--header-timeout", "0"]).header_timeout == 0.0
    assert 16 <= limits.connection_cap()
    with pytest.raises(SystemExit):
        parse_options(["--model_dir", "/d", "--header_timeout", "soon"])


def test_bad_flags_exit() -> None:
    with pytest.raises(SystemExit):
        parse_options(["--model_dir", "/d", "--enable_grpc", "maybe"])
    with pytest.raises(SystemExit):
        parse_options([])  # --model_dir is required


def test_provider_selection() -> None:
    both = [CUDA, CPU]
    assert select_providers("auto", both, gpu_count=1)[0][0] == CUDA
    assert select_providers("auto", both, gpu_count=1)[1] == CPU
    assert select_providers("auto", both, gpu_count=0) == [CPU]
    assert select_providers("auto", [CPU], gpu_count=2) == [CPU]
    assert select_providers("cpu", both, gpu_count=1) == [CPU]
    assert select_providers("cuda", both, gpu_count=1, cuda_options={"device_id": "0"})[0] == (CUDA, {"device_id": "0"})
    with pytest.raises(ValueError, match="no CUDA device"):
        select_providers("cuda", both, gpu_count=0)
    with pytest.raises(ValueError, match="no CUDAExecutionProvider"):
        select_providers("cuda", [CPU], gpu_count=1)
    with pytest.raises(ValueError, match="--device"):
        select_providers("tpu", both, gpu_count=1)


def test_single_model_layouts(tmp_path: Path) -> None:
    server_models.mlp(tmp_path / "one" / "model.onnx")
    repo = ModelRepository(tmp_path / "one", "fraud", CPU_ONLY)
    assert list(repo.available()) == ["fraud"]
    server_models.mlp(tmp_path / "other" / "classifier.onnx")
    assert repo.available()["fraud"][1] == "1"
    other = ModelRepository(tmp_path / "other", "m", CPU_ONLY)
    assert other.available()["m"][0].name == "classifier.onnx"
    server_models.mlp(tmp_path / "other" / "second.onnx")
    with pytest.raises(RepositoryError, match="several .onnx files"):
        ModelRepository(tmp_path / "other", "m", CPU_ONLY)
    with pytest.raises(RepositoryError, match="no such directory"):
        ModelRepository(tmp_path / "missing", "m", CPU_ONLY)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RepositoryError, match="holds no model.onnx"):
        ModelRepository(empty, "m", CPU_ONLY).load_all()


def test_repository_is_confined_to_model_dir(tmp_path: Path) -> None:
    server_models.mlp(tmp_path / "outside" / "model.onnx")
    root = tmp_path / "repo"
    server_models.mlp(root / "a" / "model.onnx")
    (root / "link").symlink_to(tmp_path / "outside")
    repo = ModelRepository(root, "unused", CPU_ONLY)
    assert list(repo.available()) == ["a"]  # the symlink leads outside model_dir
    assert "outside the model repository" in repo.failures["link"]
    for name in ("../outside", "..", "a/../a", ""):
        with pytest.raises(ModelNotFound):
            repo.load(name)
    with pytest.raises(LoadRefused, match="outside the model repository"):
        repo.load("link")
    repo.load("a")
    assert repo.get("a").ready
    repo.unload("a")
    with pytest.raises(ModelNotFound):
        repo.get("a")


def test_broken_model_file_is_not_ready(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "model.onnx").write_bytes(b"not onnx")
    with pytest.raises(LoadRefused, match="loading bad/model.onnx failed") as caught:
        ModelRepository(tmp_path, "unused", CPU_ONLY).load("bad")
    assert str(tmp_path) not in caught.value.message  # no server path for clients


@pytest.fixture(scope="module")
def types_model(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    path = server_models.identity_all_types(tmp_path_factory.mktemp("types") / "model.onnx")
    repo = ModelRepository(path.parent, "types", CPU_ONLY)
    repo.load_all()
    return repo.get("types")


def test_raw_codec_round_trip(types_model) -> None:  # type: ignore[no-untyped-def]
    strings = np.array([["é", "", "a" * 70000]], dtype=object)
    spec = types_model.input_by_name["in_BYTES"]
    assert tensor_from_raw(spec, (1, 3), 3, raw_from_tensor(strings)).tolist() == strings.tolist()
    with pytest.raises(InvalidInput, match="not UTF-8"):
        tensor_from_raw(spec, (1, 1), 1, b"\x02\x00\x00\x00\xff\xfe")
    with pytest.raises(InvalidInput, match="needs 3 BYTES elements, at least 12 bytes"):
        tensor_from_raw(spec, (1, 3), 3, raw_from_tensor(strings[:, :2]))
    with pytest.raises(InvalidInput, match="needs 2 elements, data has more"):
        tensor_from_raw(spec, (1, 2), 2, raw_from_tensor(strings))
    big_endian = np.array([1, 2], dtype=">i4")
    assert bytes(raw_from_tensor(big_endian)) == np.array([1, 2], dtype="<i4").tobytes()


def test_json_outputs_and_binary_flags(types_model) -> None:  # type: ignore[no-untyped-def]
    import orjson

    body = orjson.dumps(
        {
            "parameters": {"binary_data_output": True},
            "inputs": [
                {
                    "name": f"in_{dt}",
                    "shape": [1, 3],
                    "datatype": dt,
                    "data": ["a", "b", "c"] if dt == "BYTES" else [1, 0, 1],
                }
                for dt in (
                    "BOOL",
                    "UINT8",
                    "UINT16",
                    "UINT32",
                    "UINT64",
                    "INT8",
                    "INT16",
                    "INT32",
                    "INT64",
                    "FP16",
                    "FP32",
                    "FP64",
                    "BYTES",
                )
            ],
            "outputs": [
                {"name": "out_BOOL", "parameters": {"binary_data": False}},
                {"name": "out_INT8"},
                {"name": "out_BYTES", "parameters": {"binary_data": False}},
            ],
        }
    )
    request = decode_v2(types_model, body, None)
    assert request.outputs == ["out_BOOL", "out_INT8", "out_BYTES"] and request.binary == [False, True, False]
    payload, json_length = encode_v2(
        types_model, request, [request.feeds["in_BOOL"], request.feeds["in_INT8"], request.feeds["in_BYTES"]]
    )
    assert json_length is not None
    head = orjson.loads(payload[:json_length])
    assert head["outputs"][0]["data"] == [True, False, True]
    assert head["outputs"][1]["parameters"] == {"binary_data_size": 3}
    assert head["outputs"][2]["data"] == ["a", "b", "c"]
    assert payload[json_length:] == bytes([1, 0, 1])


def test_cost_estimate_decides_inline_runs(tmp_path: Path) -> None:
    server_models.mlp(tmp_path / "m" / "model.onnx")
    repo = ModelRepository(tmp_path / "m", "m", SessionSettings(providers=[CPU], warmup=True))
    repo.load_all()
    model = repo.get("m")
    assert model.us_per_element is not None  # measured by the warm-up
    small = {"x": np.zeros((1, 4), np.float32)}
    large = {"x": np.zeros((1000, 4), np.float32)}
    assert model.estimate_us(large) == pytest.approx(1000 * model.estimate_us(small))
    cold = ModelRepository(tmp_path / "m", "m", CPU_ONLY)
    cold.load_all()
    assert cold.get("m").estimate_us(small) == float("inf")  # unknown cost: never inline


def test_onnxruntime_input_checks_are_client_errors(tmp_path: Path) -> None:
    server_models.mlp(tmp_path / "m" / "model.onnx")
    repo = ModelRepository(tmp_path / "m", "m", CPU_ONLY)
    repo.load_all()
    model = repo.get("m")
    with pytest.raises(InvalidInput, match="model m rejected the input"):
        model.run({"x": np.zeros((1, 5), np.float32)}, ["label"])  # past the codec: ORT's InvalidArgument
