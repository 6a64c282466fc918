"""Open Inference Protocol datatypes and their numpy / ONNX counterparts."""

from __future__ import annotations

import numpy as np

# V2 datatype -> numpy dtype (little-endian, as on the wire). BYTES are object arrays of str.
V2_TO_NUMPY: dict[str, np.dtype] = {
    "BOOL": np.dtype(np.bool_),
    "UINT8": np.dtype("<u1"),
    "UINT16": np.dtype("<u2"),
    "UINT32": np.dtype("<u4"),
    "UINT64": np.dtype("<u8"),
    "INT8": np.dtype("<i1"),
    "INT16": np.dtype("<i2"),
    "INT32": np.dtype("<i4"),
    "INT64": np.dtype("<i8"),
    "FP16": np.dtype("<f2"),
    "FP32": np.dtype("<f4"),
    "FP64": np.dtype("<f8"),
    "BYTES": np.dtype(object),
}

# ONNX Runtime's type strings (``NodeArg.type``) -> V2 datatype.
ONNX_TO_V2: dict[str, str] = {
    "tensor(bool)": "BOOL",
    "tensor(uint8)": "UINT8",
    "tensor(uint16)": "UINT16",
    "tensor(uint32)": "UINT32",
    "tensor(uint64)": "UINT64",
    "tensor(int8)": "INT8",
    "tensor(int16)": "INT16",
    "tensor(int32)": "INT32",
    "tensor(int64)": "INT64",
    "tensor(float16)": "FP16",
    "tensor(float)": "FP32",
    "tensor(double)": "FP64",
    "tensor(string)": "BYTES",
}

# numpy dtype -> V2 datatype; dtype objects hash and compare by value, so lookups stay cheap.
_FROM_NUMPY: dict[np.dtype, str] = {dt: name for name, dt in V2_TO_NUMPY.items() if name != "BYTES"}
_FROM_NUMPY.update({dt.newbyteorder(">"): name for dt, name in list(_FROM_NUMPY.items()) if dt.itemsize > 1})

# gRPC InferTensorContents field holding each datatype in typed (non-raw) form; FP16 has none.
GRPC_CONTENTS_FIELD: dict[str, str] = {
    "BOOL": "bool_contents",
    "UINT8": "uint_contents",
    "UINT16": "uint_contents",
    "UINT32": "uint_contents",
    "UINT64": "uint64_contents",
    "INT8": "int_contents",
    "INT16": "int_contents",
    "INT32": "int_contents",
    "INT64": "int64_contents",
    "FP32": "fp32_contents",
    "FP64": "fp64_contents",
    "BYTES": "bytes_contents",
}


def v2_from_numpy(dtype: np.dtype) -> str:
    """The V2 datatype of a numpy array ONNX Runtime returned (object/str arrays are BYTES)."""
    found = _FROM_NUMPY.get(dtype)
    if found is not None:
        return found
    if dtype.kind in "OSU":
        return "BYTES"
    raise ValueError(f"numpy dtype {dtype} has no Open Inference Protocol datatype")
