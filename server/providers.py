"""Choosing ONNX Runtime execution providers: CUDA when a GPU is really usable, CPU otherwise.

ONNX Runtime logs a burst of errors when it is asked for the CUDA provider on a machine without a
working driver, so the GPU is probed first, quietly, through the CUDA driver API.
"""

from __future__ import annotations

import ctypes
import logging

logger = logging.getLogger("server.providers")

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
DEVICES = ("auto", "cpu", "cuda")


def cuda_device_count() -> int:
    """Number of CUDA devices the driver reports (honours CUDA_VISIBLE_DEVICES); 0 without a driver."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    try:
        if libcuda.cuInit(0) != 0 or libcuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
    except AttributeError:
        return 0
    return count.value


def select_providers(
    device: str,
    available: list[str],
    gpu_count: int,
    cuda_options: dict[str, str] | None = None,
) -> list[str | tuple[str, dict[str, str]]]:
    """The provider list for ``InferenceSession`` given the ``--device`` choice and what is present.

    ``auto`` uses CUDA when the installed ONNX Runtime has the provider and a GPU is visible;
    ``cuda`` insists on both (ValueError otherwise); ``cpu`` never touches the GPU.
    """
    if device not in DEVICES:
        raise ValueError(f"--device must be one of {', '.join(DEVICES)}, got {device!r}")
    cuda_possible = CUDA in available and gpu_count > 0
    if device == "cuda" and not cuda_possible:
        why = "onnxruntime has no CUDAExecutionProvider" if CUDA not in available else "no CUDA device is visible"
        raise ValueError(f"--device cuda requested but {why}")
    if device != "cpu" and cuda_possible:
        return [(CUDA, dict(cuda_options or {})), CPU]
    return [CPU]


def default_providers(device: str) -> list[str | tuple[str, dict[str, str]]]:
    """Probe this machine and select providers for ``device``."""
    import onnxruntime as ort

    available = ort.get_available_providers()
    # Only probe the driver when it could matter: the probe loads libcuda.
    gpus = cuda_device_count() if device != "cpu" and CUDA in available else 0
    providers = select_providers(device, available, gpus)
    logger.info("execution providers: %s", [p[0] if isinstance(p, tuple) else p for p in providers])
    return providers
