"""Whether a model that failed to load may load if asked again: the line between a refused repository load (400 /
INVALID_ARGUMENT, as Triton answers a failed load) and one worth retrying (503 / UNAVAILABLE).

The file's own faults never go away by waiting: ONNX Runtime's parse and graph errors (``INVALID_PROTOBUF``,
``INVALID_GRAPH``, ``FAIL`` for a type error or an unknown opset, ``NOT_IMPLEMENTED`` for an unknown operator, ...)
and the server's (a graph whose inputs or outputs are not tensors: ValueError). The machine's may: memory (ONNX
Runtime's ``RUNTIME_EXCEPTION: ... std::bad_alloc``), open-file limits (``FAIL: ... system error number 24``), I/O
errors, a failing execution provider. A failure of a kind not listed here counts as the machine's, so that a client
is never told to give up on a load that could work.

Triton (core ``model_repository_manager.cc``, ``LoadUnloadModel``) reports every failed load as INVALID_ARG, out of
memory included; KServe's Python server (``kserve/protocol/model_repository_extension.py``) every one as 503.
"""

from __future__ import annotations

import errno
import re

# errno values of a passing condition (resources, interrupted or stale I/O); others (EACCES, ELOOP, ...) stay
TRANSIENT_ERRNOS = frozenset(
    {
        errno.EAGAIN,
        errno.EBUSY,
        errno.EINTR,
        errno.EIO,
        errno.EMFILE,
        errno.ENFILE,
        errno.ENOBUFS,
        errno.ENOMEM,
        errno.ESTALE,
        errno.ETIMEDOUT,
    }
)
# ONNX Runtime's exception classes (onnxruntime.capi.onnxruntime_pybind11_state) -> may a retry succeed?
ORT_RETRYABLE: dict[str, bool] = {
    "Fail": False,
    "InvalidArgument": False,
    "InvalidGraph": False,
    "InvalidProtobuf": False,
    "ModelRequiresCompilation": False,
    "NoModel": False,
    "NoSuchFile": False,
    "NotFound": False,
    "NotImplemented": False,
    "DeviceReset": True,
    "EPFail": True,
    "EngineError": True,
    "ModelLoadCanceled": True,
    "RuntimeException": True,
}
_OUT_OF_MEMORY = re.compile(r"bad_alloc|bad allocation|out of memory|failed to allocate|cannot allocate", re.I)
_SYSTEM_ERROR = re.compile(r"system error number (\d+)")


def may_succeed_later(exc: BaseException) -> bool:
    """True when ``exc``, raised while loading a model, may not recur on the next attempt."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError):
        return exc.errno in TRANSIENT_ERRNOS
    text = str(exc)
    if _OUT_OF_MEMORY.search(text):
        return True
    system_error = _SYSTEM_ERROR.search(text)
    if system_error:
        return int(system_error.group(1)) in TRANSIENT_ERRNOS
    if isinstance(exc, (ValueError, TypeError)):
        return False
    if type(exc).__module__.startswith("onnxruntime"):
        return ORT_RETRYABLE.get(type(exc).__name__, True)
    return True
