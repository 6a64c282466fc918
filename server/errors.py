"""Errors the protocol layers turn into ``{"error": ...}`` responses (REST) or status codes (gRPC)."""

from __future__ import annotations

import grpc


class ServerError(Exception):
    """Base class: ``status`` is the HTTP status, ``grpc_code`` the matching gRPC status code."""

    status: int = 500
    grpc_code: grpc.StatusCode = grpc.StatusCode.INTERNAL
    reason: str = "OTHER"  # Triton's failure reason label (nv_inference_request_failure)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(ServerError):
    """The request is malformed or does not fit the model (400 / INVALID_ARGUMENT)."""

    status = 400
    grpc_code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "REJECTED"


class ModelNotFound(ServerError):
    status = 404
    grpc_code = grpc.StatusCode.NOT_FOUND

    def __init__(self, name: str, version: str | None = None) -> None:
        what = f"{name} version {version}" if version else name
        super().__init__(f"Model with name {what} does not exist.")


class ModelNotReady(ServerError):
    status = 503
    grpc_code = grpc.StatusCode.UNAVAILABLE

    def __init__(self, name: str, detail: str = "") -> None:
        super().__init__(f"Model with name {name} is not ready." + (f" {detail}" if detail else ""))
        self.detail = detail


class LoadRefused(ModelNotReady):
    """A repository load that cannot succeed while ``model_dir`` holds what it holds (a corrupt or unservable file,
    a link out of the repository): 400 / INVALID_ARGUMENT with Triton's message, as Triton answers a failed load.
    A load that may succeed later (memory, open files, the server shutting down) stays a ModelNotReady (503)."""

    status = 400
    grpc_code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "REJECTED"

    def __init__(self, name: str, detail: str) -> None:
        ServerError.__init__(self, f"load failed for model '{name}': {detail}")
        self.detail = detail


class PayloadTooLarge(ServerError):
    status = 413
    grpc_code = grpc.StatusCode.RESOURCE_EXHAUSTED
    reason = "REJECTED"


class NotImplementedByServer(ServerError):
    status = 501
    grpc_code = grpc.StatusCode.UNIMPLEMENTED


class InferenceFailed(ServerError):
    """ONNX Runtime failed on input that passed validation (500; INVALID_ARGUMENT on gRPC like KServe)."""

    status = 500
    grpc_code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "BACKEND"


def internal_error_message(request_id: str | None) -> str:
    """What a client sees of a bug: no exception text (it may hold paths), a pointer to the log."""
    return f"Internal server error (request id {request_id or '-'}); the server log has the details."
