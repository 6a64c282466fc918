"""Errors the protocol layers turn into ``{"error": ...}`` responses (REST) or status codes (gRPC)."""

from __future__ import annotations

import grpc


class ServerError(Exception):
    """Base class: ``status`` is the HTTP status, ``grpc_code`` the matching gRPC status code."""

    status: int = 500
    grpc_code: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(ServerError):
    """The request is malformed or does not fit the model (400 / INVALID_ARGUMENT)."""

    status = 400
    grpc_code = grpc.StatusCode.INVALID_ARGUMENT


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


class PayloadTooLarge(ServerError):
    status = 413
    grpc_code = grpc.StatusCode.RESOURCE_EXHAUSTED


class NotImplementedByServer(ServerError):
    status = 501
    grpc_code = grpc.StatusCode.UNIMPLEMENTED


class InferenceFailed(ServerError):
    """ONNX Runtime failed on input that passed validation (500; INVALID_ARGUMENT on gRPC like KServe)."""

    status = 500
    grpc_code = grpc.StatusCode.INVALID_ARGUMENT
