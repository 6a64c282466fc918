"""Tensors in and out of the wire formats: V2 JSON, the binary tensor extension, gRPC raw contents, V1.

Everything here is on the request path, so it works on plain dicts/lists from orjson and numpy
buffers, and every malformed request surfaces as InvalidInput (400 / INVALID_ARGUMENT).
"""

from __future__ import annotations

import math
import struct

import numpy as np
import orjson

from server.datatypes import GRPC_CONTENTS_FIELD, V2_TO_NUMPY, v2_from_numpy
from server.errors import InvalidInput
from server.model import OnnxModel, TensorSpec

_NUMPY_OPT = orjson.OPT_SERIALIZE_NUMPY
_U32 = struct.Struct("<I")


class InferRequest:
    """A decoded V2 request: ONNX feeds plus which outputs to compute and how to send each."""

    __slots__ = ("binary", "feeds", "id", "outputs")

    def __init__(self, id: str | None, feeds: dict[str, np.ndarray], outputs: list[str], binary: list[bool]) -> None:
        self.id = id
        self.feeds = feeds
        self.outputs = outputs
        self.binary = binary


def error_body(message: str) -> bytes:
    return orjson.dumps({"error": message})


# --- shared checks ------------------------------------------------------------------------------
def check_input(
    model: OnnxModel, name: object, datatype: object, shape: object
) -> tuple[TensorSpec, tuple[int, ...], int]:
    """Validate one input's header against the model; returns (spec, shape, element count)."""
    spec = model.input_by_name.get(name) if type(name) is str else None
    if spec is None:
        raise InvalidInput(
            f"Unexpected input {name!r} for model {model.name!r}: inputs are {list(model.input_by_name)}"
        )
    if datatype != spec.datatype:
        raise InvalidInput(f"input {name!r}: datatype {datatype!r} does not match the model's {spec.datatype}")
    if type(shape) is not tuple:
        if type(shape) is not list:
            raise InvalidInput(f"input {name!r}: shape must be a list of non-negative integers, got {shape!r}")
        shape = tuple(shape)
    expected = spec.shape
    if len(shape) != len(expected):
        raise InvalidInput(f"input {name!r}: shape {list(shape)} does not match the model's {list(expected)}")
    for dim, want in zip(shape, expected):
        if type(dim) is not int or dim < 0:
            raise InvalidInput(f"input {name!r}: shape must be a list of non-negative integers, got {list(shape)}")
        if want >= 0 and want != dim:
            raise InvalidInput(f"input {name!r}: shape {list(shape)} does not match the model's {list(expected)}")
    return spec, shape, math.prod(shape)


def tensor_from_json(spec: TensorSpec, shape: tuple[int, ...], count: int, data: object) -> np.ndarray:
    """Row-major data (flat or nested lists) of ``count`` elements -> an array of ``shape``."""
    if type(data) is not list:
        data = [data]
    elif data and type(data[0]) is not list and len(data) != count:  # flat: the count is known before converting
        raise InvalidInput(f"input {spec.name!r}: shape {list(shape)} needs {count} elements, data has {len(data)}")
    try:
        array = np.array(data, dtype=spec.dtype)
    except (ValueError, TypeError, OverflowError) as exc:
        raise InvalidInput(f"input {spec.name!r}: data is not {spec.datatype}: {exc}") from None
    if array.size != count:
        raise InvalidInput(f"input {spec.name!r}: shape {list(shape)} needs {count} elements, data has {array.size}")
    if spec.datatype == "BYTES":
        flat = array.reshape(-1)
        for item in flat:
            if type(item) is not str:
                raise InvalidInput(f"input {spec.name!r}: BYTES data must be strings, got {item!r}")
    return array.reshape(shape)


def tensor_from_raw(spec: TensorSpec, shape: tuple[int, ...], count: int, raw: bytes | memoryview) -> np.ndarray:
    """Little-endian row-major bytes (BYTES: 4-byte length prefixes) -> an array of ``shape``."""
    if spec.datatype != "BYTES":
        expected = count * spec.dtype.itemsize
        if len(raw) != expected:
            raise InvalidInput(
                f"input {spec.name!r}: {len(raw)} bytes of {spec.datatype} data, shape {list(shape)} needs {expected}"
            )
        return np.frombuffer(raw, dtype=spec.dtype).reshape(shape)
    if len(raw) < 4 * count:  # every element has a 4-byte length prefix: too short without parsing
        raise InvalidInput(
            f"input {spec.name!r}: shape {list(shape)} needs {count} BYTES elements, at least {4 * count} bytes; "
            f"the data is {len(raw)} bytes"
        )
    items: list[str] = []
    view = memoryview(raw)
    offset, end = 0, len(view)
    while offset < end:
        if len(items) == count:
            raise InvalidInput(f"input {spec.name!r}: shape {list(shape)} needs {count} elements, data has more")
        if offset + 4 > end:
            raise InvalidInput(f"input {spec.name!r}: truncated BYTES length prefix at byte {offset}")
        (length,) = _U32.unpack_from(view, offset)
        offset += 4
        if offset + length > end:
            raise InvalidInput(
                f"input {spec.name!r}: BYTES element of {length} bytes runs past the data at byte {offset}"
            )
        try:
            items.append(str(view[offset : offset + length], "utf-8"))
        except UnicodeDecodeError:
            raise InvalidInput(
                f"input {spec.name!r}: BYTES element {len(items)} is not UTF-8 (ONNX strings are text)"
            ) from None
        offset += length
    if len(items) != count:
        raise InvalidInput(f"input {spec.name!r}: shape {list(shape)} needs {count} elements, data has {len(items)}")
    array = np.empty(count, dtype=object)
    array[:] = items
    return array.reshape(shape)


def raw_from_tensor(array: np.ndarray) -> bytes | memoryview:
    """An output as the binary extension / gRPC raw contents carry it."""
    if array.dtype.kind in "OSU":
        parts = []
        for item in array.reshape(-1):
            blob = item.encode("utf-8") if isinstance(item, str) else bytes(item)
            parts.append(_U32.pack(len(blob)))
            parts.append(blob)
        return b"".join(parts)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    # numpy's stubs declare ndarray.__buffer__ only for Python >= 3.12 (mypy checks as 3.11); arrays are buffers
    return memoryview(np.ascontiguousarray(array)).cast("B")  # type: ignore[arg-type]


def json_data(array: np.ndarray) -> object:
    """An output's flat ``data`` for JSON: numpy arrays serialize natively in orjson, strings as str."""
    if array.dtype.kind in "OSU":
        return [item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item) for item in array.reshape(-1)]
    return np.ascontiguousarray(array).reshape(-1)


def select_outputs(model: OnnxModel, requested: object, default_binary: bool) -> tuple[list[str], list[bool]]:
    """Requested outputs (in request order) with their binary flag; all outputs when none are named."""
    if not requested:
        names = model.output_names
        return names, [default_binary] * len(names)
    if type(requested) is not list:
        raise InvalidInput("'outputs' must be a list of {\"name\": ...} objects")
    names, binary = [], []
    for item in requested:
        if type(item) is not dict:
            raise InvalidInput("'outputs' must be a list of {\"name\": ...} objects")
        name = item.get("name")
        if type(name) is not str or name not in model.output_by_name:
            raise InvalidInput(f"Unexpected inference output {name!r} for model {model.name!r}")
        params = item.get("parameters")
        flag = params.get("binary_data", default_binary) if type(params) is dict else default_binary
        names.append(name)
        binary.append(bool(flag))
    return names, binary


def check_feeds(model: OnnxModel, feeds: dict[str, np.ndarray]) -> None:
    """Every input is there, and dimensions the graph names alike ("batch") have one size."""
    if len(feeds) != len(model.inputs):
        missing = [s.name for s in model.inputs if s.name not in feeds]
        raise InvalidInput(f"model {model.name!r} needs inputs {missing} as well")
    for symbol, places in model.shared_dims:
        sizes = {f"{name}[{axis}]": feeds[name].shape[axis] for name, axis in places}
        if len(set(sizes.values())) > 1:
            given = ", ".join(f"{where}={size}" for where, size in sizes.items())
            raise InvalidInput(f"inputs disagree on dimension {symbol!r}: {given}")


def _check_binary_sizes(inputs: list, available: int) -> None:
    """The declared binary_data_size values add up to the binary part, checked before any tensor is read."""
    total = 0
    for item in inputs:
        if type(item) is not dict:
            raise InvalidInput("every entry of 'inputs' must be an object with name, datatype, shape and data")
        params = item.get("parameters")
        size = params.get("binary_data_size") if type(params) is dict and item.get("data") is None else None
        if size is None:
            continue
        if type(size) is not int or size < 0:
            raise InvalidInput(
                f"input {item.get('name')!r}: binary_data_size must be a non-negative integer, got {size!r}"
            )
        total += size
    if total != available:
        raise InvalidInput(f"binary data is {available} bytes but the inputs declare {total}")


# --- V2 REST ------------------------------------------------------------------------------------
def _json_object(raw: bytes | memoryview, what: str) -> dict:
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"Unrecognized request format: {what} is not valid JSON: {exc}") from None
    if type(obj) is not dict:
        raise InvalidInput(f"Unrecognized request format: {what} must be a JSON object")
    return obj


def decode_v2(model: OnnxModel, body: bytes, header_length: str | None) -> InferRequest:
    """Parse ``POST .../infer``: plain JSON, or JSON + binary tensors when the length header is set."""
    binary_part: memoryview | None = None
    if header_length is None:
        obj = _json_object(body, "the body")
    else:
        try:
            json_length = int(header_length)
        except ValueError:
            raise InvalidInput(f"Inference-Header-Content-Length must be an integer, got {header_length!r}") from None
        if not 0 <= json_length <= len(body):
            raise InvalidInput(
                f"Inference-Header-Content-Length {json_length} is outside the body of {len(body)} bytes"
            )
        view = memoryview(body)
        obj = _json_object(view[:json_length], "the inference header")
        binary_part = view[json_length:]

    inputs = obj.get("inputs")
    if type(inputs) is not list or not inputs:
        raise InvalidInput("'inputs' must be a non-empty list of tensors")
    params = obj.get("parameters")
    if params is not None and type(params) is not dict:
        raise InvalidInput("'parameters' must be an object")
    request_id = obj.get("id")
    if request_id is not None and type(request_id) is not str:
        raise InvalidInput("'id' must be a string")

    if binary_part is not None:
        _check_binary_sizes(inputs, len(binary_part))
    feeds: dict[str, np.ndarray] = {}
    offset = 0
    for item in inputs:
        if type(item) is not dict:
            raise InvalidInput("every entry of 'inputs' must be an object with name, datatype, shape and data")
        spec, shape, count = check_input(model, item.get("name"), item.get("datatype"), item.get("shape"))
        name = spec.name  # the name given (check_input found the model's input by it)
        if name in feeds:
            raise InvalidInput(f"input {name!r} is given twice")
        data = item.get("data")
        if data is not None:
            feeds[name] = tensor_from_json(spec, shape, count, data)
            continue
        in_params = item.get("parameters")
        size = in_params.get("binary_data_size") if type(in_params) is dict else None
        if size is None:
            raise InvalidInput(f"input {name!r} has neither 'data' nor a 'binary_data_size' parameter")
        if binary_part is None:
            raise InvalidInput(
                f"input {name!r} has binary data but the Inference-Header-Content-Length header is missing"
            )
        if type(size) is not int or size < 0 or offset + size > len(binary_part):
            raise InvalidInput(
                f"input {name!r}: binary_data_size {size!r} runs past the {len(binary_part)} bytes of binary data"
            )
        feeds[name] = tensor_from_raw(spec, shape, count, binary_part[offset : offset + size])
        offset += size
    if binary_part is not None and offset != len(binary_part):
        raise InvalidInput(f"binary data is {len(binary_part)} bytes but the inputs declare {offset}")
    check_feeds(model, feeds)

    default_binary = bool(params.get("binary_data_output", False)) if params else False
    outputs, binary = select_outputs(model, obj.get("outputs"), default_binary)
    return InferRequest(request_id, feeds, outputs, binary)


def encode_v2(model: OnnxModel, request: InferRequest, results: list[np.ndarray]) -> tuple[bytes, int | None]:
    """The response body and, when any output is binary, the length of its JSON part."""
    outputs = []
    blobs: list[bytes | memoryview] = []
    for name, binary, array in zip(request.outputs, request.binary, results):
        entry: dict[str, object] = {
            "name": name,
            "datatype": v2_from_numpy(array.dtype),
            "shape": list(array.shape),
        }
        if binary:
            blob = raw_from_tensor(array)
            entry["parameters"] = {"binary_data_size": len(blob)}
            blobs.append(blob)
        else:
            entry["data"] = json_data(array)
        outputs.append(entry)
    response: dict[str, object] = {"model_name": model.name, "model_version": model.version}
    if request.id is not None:
        response["id"] = request.id
    response["outputs"] = outputs
    head = orjson.dumps(response, option=_NUMPY_OPT)
    if not blobs:
        return head, None
    return b"".join([head, *blobs]), len(head)


# --- V1 -----------------------------------------------------------------------------------------
def _v1_array(spec: TensorSpec, rows: object) -> np.ndarray:
    try:
        array = np.array(rows, dtype=spec.dtype)
    except (ValueError, TypeError, OverflowError) as exc:
        raise InvalidInput(f"input {spec.name!r}: instances are not {spec.datatype} of one shape: {exc}") from None
    expected = spec.shape
    if array.ndim != len(expected) or any(e >= 0 and e != d for e, d in zip(expected, array.shape)):
        raise InvalidInput(
            f"input {spec.name!r}: instances have shape {list(array.shape)}, the model expects {list(expected)}"
        )
    if spec.datatype == "BYTES" and not all(type(x) is str for x in array.reshape(-1)):
        raise InvalidInput(f"input {spec.name!r}: BYTES instances must be strings")
    return array


def decode_v1(model: OnnxModel, body: bytes) -> dict[str, np.ndarray]:
    """``{"instances": [...]}`` or ``{"inputs": [...]}`` -> feeds; rows may be dicts keyed by input name."""
    obj = _json_object(body, "the body")
    rows = obj["inputs"] if "inputs" in obj else obj.get("instances")
    key = "inputs" if "inputs" in obj else "instances"
    if rows is None:
        raise InvalidInput('Expected "instances" or "inputs" in the request body')
    if type(rows) is dict:  # columnar: {"inputs": {"x": [...], "y": [...]}}
        columns = rows
    elif type(rows) is not list:
        raise InvalidInput(f'Expected "{key}" to be a list')
    elif rows and type(rows[0]) is dict:
        try:
            columns = {spec.name: [row[spec.name] for row in rows] for spec in model.inputs}
        except (KeyError, TypeError) as exc:
            raise InvalidInput(f"every instance must be an object with every model input; missing {exc}") from None
    elif len(model.inputs) == 1:
        return {model.inputs[0].name: _v1_array(model.inputs[0], rows)}
    else:
        raise InvalidInput(
            f"model {model.name!r} has inputs {list(model.input_by_name)}: send instances as objects keyed by input name"
        )
    feeds = {}
    for spec in model.inputs:
        if spec.name not in columns:
            raise InvalidInput(f"model {model.name!r} needs input {spec.name!r}")
        feeds[spec.name] = _v1_array(spec, columns[spec.name])
    check_feeds(model, feeds)
    return feeds


def encode_v1(result: np.ndarray) -> bytes:
    if result.dtype.kind in "OSU":
        return orjson.dumps({"predictions": result.tolist()})
    return orjson.dumps({"predictions": np.ascontiguousarray(result)}, option=_NUMPY_OPT)


def decode_grpc_tensor(
    model: OnnxModel, name: str, datatype: str, shape: tuple[int, ...], contents: object, raw: bytes | None
) -> np.ndarray:
    """One gRPC input from raw contents or the typed ``InferTensorContents`` field."""
    spec, shape, count = check_input(model, name, datatype, shape)
    if raw is not None:
        return tensor_from_raw(spec, shape, count, raw)
    field = GRPC_CONTENTS_FIELD.get(datatype)
    if field is None:
        raise InvalidInput(f"input {name!r}: {datatype} can only be sent in raw_input_contents")
    values = getattr(contents, field)
    if len(values) != count:
        raise InvalidInput(f"input {name!r}: shape {list(shape)} needs {count} elements, contents have {len(values)}")
    if datatype == "BYTES":
        try:
            items = [bytes(v).decode("utf-8") for v in values]
        except UnicodeDecodeError:
            raise InvalidInput(f"input {name!r}: BYTES contents are not UTF-8 (ONNX strings are text)") from None
        array = np.empty(count, dtype=object)
        array[:] = items
        return array.reshape(shape)
    try:
        return np.array(values, dtype=V2_TO_NUMPY[datatype]).reshape(shape)
    except (ValueError, OverflowError) as exc:
        raise InvalidInput(f"input {name!r}: contents do not fit {datatype}: {exc}") from None
