"""V1 protocol and error handling over plain HTTP (httpx, raw sockets)."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import numpy as np
import orjson
from conftest import reference


def infer_body(**overrides: object) -> dict:
    body = {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
    body.update(overrides)
    return body


# --- V1 ---------------------------------------------------------------------------------------
def test_v1_model_list_and_status(http: httpx.Client) -> None:
    assert http.get("/").json() == {"status": "alive"}
    assert set(http.get("/v1/models").json()["models"]) >= {"mlp", "iris", "types"}
    assert http.get("/v1/models/mlp").json() == {"name": "mlp", "ready": True}
    missing = http.get("/v1/models/nope")
    assert missing.status_code == 404 and missing.json() == {"error": "Model with name nope does not exist."}


def test_v1_predict_instances_and_inputs(http: httpx.Client, repository_dir: Path, iris_x: np.ndarray) -> None:
    rows = iris_x[:7]
    (label,) = reference(repository_dir / "iris" / "model.onnx", {"X": rows}, ["label"])
    for key in ("instances", "inputs"):
        response = http.post("/v1/models/iris:predict", json={key: rows.tolist()})
        assert response.status_code == 200, response.text
        assert response.json() == {"predictions": label.tolist()}
    # "inputs" wins when both are present
    both = http.post("/v1/models/iris:predict", json={"inputs": rows[:1].tolist(), "instances": rows.tolist()})
    assert len(both.json()["predictions"]) == 1


def test_v1_multi_input_rows_as_objects(http: httpx.Client) -> None:
    response = http.post(
        "/v1/models/add:predict", json={"instances": [{"a": [1, 2], "b": [10, 20]}, {"a": [0, 0], "b": [1, 1]}]}
    )
    assert response.json() == {"predictions": [[11.0, 22.0], [1.0, 1.0]]}
    ambiguous = http.post("/v1/models/add:predict", json={"instances": [[1, 2]]})
    assert ambiguous.status_code == 400 and "objects keyed by input name" in ambiguous.json()["error"]


def test_v1_errors(http: httpx.Client) -> None:
    not_list = http.post("/v1/models/mlp:predict", json={"instances": 3})
    assert not_list.status_code == 400 and not_list.json() == {"error": 'Expected "instances" to be a list'}
    bad_json = http.post("/v1/models/mlp:predict", content=b"{nope")
    assert bad_json.status_code == 400 and bad_json.json()["error"].startswith("Unrecognized request format")
    wrong_width = http.post("/v1/models/mlp:predict", json={"instances": [[1, 2, 3]]})
    assert wrong_width.status_code == 400 and "[-1, 4]" in wrong_width.json()["error"]
    explain = http.post("/v1/models/mlp:explain", json={"instances": [[1, 2, 3, 4]]})
    assert explain.status_code == 501 and "explainer" in explain.json()["error"]
    assert http.post("/v1/models/nope:explain", json={}).status_code == 404
    assert http.get("/v1/models/mlp:predict").status_code == 404  # a model named "mlp:predict"


# --- V2 over plain JSON -------------------------------------------------------------------------
def test_v2_plain_json_infer_echoes_id(http: httpx.Client, repository_dir: Path) -> None:
    response = http.post("/v2/models/mlp/infer", json=infer_body(id="req-7"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["model_name"] == "mlp" and body["id"] == "req-7"
    label, scores = reference(repository_dir / "mlp" / "model.onnx", {"x": np.array([[1, 2, 3, 4]], dtype=np.float32)})
    assert body["outputs"][0] == {"name": "label", "datatype": "INT64", "shape": [1], "data": label.tolist()}
    np.testing.assert_allclose(body["outputs"][1]["data"], scores.reshape(-1), rtol=1e-6)
    nested = http.post(
        "/v2/models/mlp/infer",
        json=infer_body(inputs=[{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [[1, 2, 3, 4]]}]),
    )
    assert nested.json()["outputs"] == body["outputs"]


def test_v2_versioned_routes(http: httpx.Client) -> None:
    assert http.get("/v2/models/types/versions/3").json()["versions"] == ["3"]
    assert http.get("/v2/models/types/versions/3/ready").json() == {"name": "types", "ready": True}
    old = http.get("/v2/models/types/versions/1")
    assert old.status_code == 404 and "version 1" in old.json()["error"]
    assert http.post("/v2/models/mlp/versions/1/infer", json=infer_body()).status_code == 200


def test_v2_health_and_model_routes(http: httpx.Client) -> None:
    assert http.get("/v2/health/live").json() == {"live": True}
    assert http.get("/v2/health/ready").json() == {"ready": True}
    assert http.get("/v2/models/mlp/ready").json() == {"name": "mlp", "ready": True}
    assert http.get("/v2/models/nope/ready").status_code == 404
    assert "mlp" in http.get("/v2/models").json()["models"]
    unknown = http.get("/v2/nothing/here")
    assert unknown.status_code == 404 and "error" in unknown.json()
    wrong_method = http.get("/v2/models/mlp/infer")
    assert wrong_method.status_code == 405 and "error" in wrong_method.json()


def test_v2_bad_requests_are_400(http: httpx.Client) -> None:
    x = {"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}
    cases = {
        "malformed": (b"{", "not valid JSON"),
        "no inputs": (orjson.dumps({}), "'inputs'"),
        "unknown input": (orjson.dumps(infer_body(inputs=[{**x, "name": "y"}])), "Unexpected input 'y'"),
        "wrong datatype": (orjson.dumps(infer_body(inputs=[{**x, "datatype": "FP64"}])), "datatype 'FP64'"),
        "unknown datatype": (orjson.dumps(infer_body(inputs=[{**x, "datatype": "FP128"}])), "datatype 'FP128'"),
        "wrong rank": (orjson.dumps(infer_body(inputs=[{**x, "shape": [4]}])), "shape [4]"),
        "count": (orjson.dumps(infer_body(inputs=[{**x, "data": [1, 2, 3]}])), "needs 4 elements"),
        "not numbers": (orjson.dumps(infer_body(inputs=[{**x, "data": ["a", "b", "c", "d"]}])), "not FP32"),
        "negative dim": (orjson.dumps(infer_body(inputs=[{**x, "shape": [-1, 4]}])), "non-negative"),
        "twice": (orjson.dumps(infer_body(inputs=[x, x])), "given twice"),
        "unknown output": (orjson.dumps(infer_body(outputs=[{"name": "zzz"}])), "Unexpected inference output 'zzz'"),
        "no data": (orjson.dumps(infer_body(inputs=[{k: v for k, v in x.items() if k != "data"}])), "neither 'data'"),
        "binary without header": (
            orjson.dumps(
                infer_body(
                    inputs=[{**{k: v for k, v in x.items() if k != "data"}, "parameters": {"binary_data_size": 16}}]
                )
            ),
            "header is missing",
        ),
        "missing input": (
            orjson.dumps({"inputs": [{"name": "a", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]}]}),
            "needs inputs ['b']",
        ),
    }
    for label, (body, message) in cases.items():
        model = "add" if label == "missing input" else "mlp"
        response = http.post(f"/v2/models/{model}/infer", content=body)
        assert response.status_code == 400, (label, response.text)
        assert message in response.json()["error"], (label, response.json())


def test_v2_binary_framing_errors(http: httpx.Client) -> None:
    header = orjson.dumps(
        {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "parameters": {"binary_data_size": 16}}]}
    )
    data = np.arange(4, dtype=np.float32).tobytes()

    def post(body: bytes, length: str) -> httpx.Response:
        return http.post("/v2/models/mlp/infer", content=body, headers={"Inference-Header-Content-Length": length})

    assert post(header + data, str(len(header))).status_code == 200
    # decided by the header, not by Content-Type
    typed = http.post(
        "/v2/models/mlp/infer",
        content=header + data,
        headers={"Inference-Header-Content-Length": str(len(header)), "Content-Type": "application/json"},
    )
    assert typed.status_code == 200
    for body, length, message in [
        (header + data[:12], str(len(header)), "binary data is 12 bytes but the inputs declare 16"),
        (header + data + b"xx", str(len(header)), "declare 16"),
        (header + data, str(len(header) + 100), "outside the body"),
        (header + data, "abc", "must be an integer"),
        (header + data, str(len(header) - 1), "not valid JSON"),
    ]:
        response = post(body, length)
        assert response.status_code == 400, (length, response.text)
        assert message in response.json()["error"]
    strings = orjson.dumps(
        {"inputs": [{"name": "in_BYTES", "shape": [1, 3], "datatype": "BYTES", "parameters": {"binary_data_size": 14}}]}
    )
    bad_prefix = (1).to_bytes(4, "little") + b"a" + (1).to_bytes(4, "little") + b"b" + (100).to_bytes(4, "little")
    response = http.post(
        "/v2/models/types/infer",
        content=strings + bad_prefix,
        headers={"Inference-Header-Content-Length": str(len(strings))},
    )
    assert response.status_code == 400 and "runs past" in response.json()["error"]


def test_inference_failure_is_500_and_unknown_model_404(http: httpx.Client) -> None:
    body = {"inputs": [{"name": "x", "shape": [2, 4], "datatype": "FP32", "data": list(range(8))}]}
    failed = http.post("/v2/models/failing/infer", json=body)
    assert failed.status_code == 500 and "inference failed for model failing" in failed.json()["error"]
    one = {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
    assert http.post("/v2/models/failing/infer", json=one).status_code == 200
    missing = http.post("/v2/models/nope/infer", json=body)
    assert missing.status_code == 404 and missing.json() == {"error": "Model with name nope does not exist."}


def test_request_size_limit(http: httpx.Client) -> None:
    big = b"[" + b"1," * (600 * 1024) + b"1]"
    response = http.post("/v2/models/mlp/infer", content=big)
    assert response.status_code == 413 and "exceeds the limit" in response.json()["error"]


def _exchange(sock: socket.socket, request: bytes) -> bytes:
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    while len(rest) < length:
        rest += sock.recv(65536)
    return head.split(b"\r\n")[0]


def test_errors_keep_the_connection_alive(server) -> None:  # type: ignore[no-untyped-def]
    good = orjson.dumps(infer_body())
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=10) as sock:
        for body, status in [
            (b"{broken", b"400"),
            (good, b"200"),
            (b'{"inputs": [{"name": 1}]}', b"400"),
            (good, b"200"),
        ]:
            request = (
                b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: t\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
            assert status in _exchange(sock, request)
        failing = orjson.dumps({"inputs": [{"name": "x", "shape": [2, 4], "datatype": "FP32", "data": list(range(8))}]})
        assert b"500" in _exchange(
            sock,
            b"POST /v2/models/failing/infer HTTP/1.1\r\nHost: t\r\nContent-Length: "
            + str(len(failing)).encode()
            + b"\r\n\r\n"
            + failing,
        )
        assert b"200" in _exchange(
            sock,
            b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: t\r\nContent-Length: "
            + str(len(good)).encode()
            + b"\r\n\r\n"
            + good,
        )


def test_metrics_use_kserve_names(http: httpx.Client) -> None:
    http.post("/v2/models/mlp/infer", json=infer_body())
    text = http.get("/metrics").text
    for name in ("request_preprocess_seconds", "request_predict_seconds", "request_postprocess_seconds"):
        assert f'{name}_count{{model_name="mlp"}}' in text
    openmetrics = http.get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert openmetrics.headers["content-type"].startswith("application/openmetrics-text")
