"""V2 request bodies (JSON and the binary tensor extension) for a benchmark model, as wrk sends them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import orjson

from serve.models import BenchModel


@dataclass(frozen=True)
class Body:
    data: bytes
    content_type: str
    header_length: int | None  # Inference-Header-Content-Length, for binary bodies

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": self.content_type}
        if self.header_length is not None:
            headers["Inference-Header-Content-Length"] = str(self.header_length)
        return headers


def v2_json(model: BenchModel, rows: np.ndarray) -> Body:
    request = {
        "inputs": [
            {"name": model.input_name, "shape": list(rows.shape), "datatype": "FP32", "data": rows.reshape(-1).tolist()}
        ]
    }
    return Body(orjson.dumps(request), "application/json", None)


def v2_binary(model: BenchModel, rows: np.ndarray) -> Body:
    raw = np.ascontiguousarray(rows, dtype="<f4").tobytes()
    request = {
        "inputs": [
            {
                "name": model.input_name,
                "shape": list(rows.shape),
                "datatype": "FP32",
                "parameters": {"binary_data_size": len(raw)},
            }
        ],
        "parameters": {"binary_data_output": True},
    }
    head = orjson.dumps(request)
    return Body(head + raw, "application/octet-stream", len(head))


def body(model: BenchModel, rows: np.ndarray, binary: bool) -> Body:
    return v2_binary(model, rows) if binary else v2_json(model, rows)


_NUMPY = {"FP32": np.float32, "FP64": np.float64, "INT64": np.int64, "INT32": np.int32}


def decode_response(payload: bytes, header_length: str | None) -> dict[str, np.ndarray]:
    """A V2 response (JSON or binary) -> {output name: array}."""
    if header_length is None:
        head, blob = orjson.loads(payload), b""
    else:
        size = int(header_length)
        head, blob = orjson.loads(payload[:size]), payload[size:]
    arrays = {}
    offset = 0
    for out in head["outputs"]:
        dtype = _NUMPY[out["datatype"]]
        params = out.get("parameters") or {}
        if "data" in out and out["data"] is not None:
            array = np.asarray(out["data"], dtype=dtype)
        else:
            size = params["binary_data_size"]
            array = np.frombuffer(blob[offset : offset + size], dtype=np.dtype(dtype).newbyteorder("<"))
            offset += size
        arrays[out["name"]] = array.reshape(out["shape"])
    return arrays
