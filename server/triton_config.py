"""A model as Triton's model configuration describes it (``GET /v2/models/{m}/config``, gRPC ModelConfig).

Mirrors Triton's ``model_config.proto`` for an ONNX Runtime model: ``platform`` / ``backend``,
``max_batch_size`` (0 unless dynamic batching is on; when it is > 0, ``dims`` leave the batch
dimension out, as in Triton), ``input`` / ``output`` with ``TYPE_*`` data types and ``-1`` for a
dynamic dimension, ``dynamic_batching.max_queue_delay_microseconds`` and the version policy.
"""

from __future__ import annotations

from server.batcher import Batcher
from server.model import PLATFORM, OnnxModel, TensorSpec

BACKEND = "onnxruntime"
# V2 datatype -> Triton's DataType enum (name, number)
DATA_TYPES: dict[str, tuple[str, int]] = {
    "BOOL": ("TYPE_BOOL", 1),
    "UINT8": ("TYPE_UINT8", 2),
    "UINT16": ("TYPE_UINT16", 3),
    "UINT32": ("TYPE_UINT32", 4),
    "UINT64": ("TYPE_UINT64", 5),
    "INT8": ("TYPE_INT8", 6),
    "INT16": ("TYPE_INT16", 7),
    "INT32": ("TYPE_INT32", 8),
    "INT64": ("TYPE_INT64", 9),
    "FP16": ("TYPE_FP16", 10),
    "FP32": ("TYPE_FP32", 11),
    "FP64": ("TYPE_FP64", 12),
    "BYTES": ("TYPE_STRING", 13),
    "BF16": ("TYPE_BF16", 14),
}


def _tensor(spec: TensorSpec, batched: bool) -> dict[str, object]:
    dims = list(spec.shape[1:] if batched else spec.shape)
    return {"name": spec.name, "data_type": DATA_TYPES[spec.datatype][0], "dims": dims}


def model_config(model: OnnxModel, batcher: Batcher | None) -> dict[str, object]:
    """Triton's JSON model configuration of ``model``, served through ``batcher`` (None: not batched)."""
    batched = batcher is not None
    config: dict[str, object] = {
        "name": model.name,
        "platform": PLATFORM,
        "backend": BACKEND,
        "version_policy": {"latest": {"num_versions": 1}},
        "max_batch_size": batcher.max_batch_size if batcher is not None else 0,
        "input": [_tensor(s, batched) for s in model.inputs],
        "output": [_tensor(s, batched) for s in model.outputs],
        "default_model_filename": model.path.name,
    }
    if batcher is not None:
        config["dynamic_batching"] = {"max_queue_delay_microseconds": int(batcher.max_delay * 1e6)}
    return config
