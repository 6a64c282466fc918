"""Open Inference Protocol gRPC messages, built in a private descriptor pool.

The message classes come from ``grpc_predict_v2_descriptor.py``, the serialized descriptor of
``grpc_predict_v2.proto`` (regenerate with ``python -m server.proto.generate``). A private pool keeps
these ``inference.*`` names from clashing with another copy of the same protocol (tritonclient's,
KServe's) loaded into the same interpreter, and works with any protobuf runtime since 4.25.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from server.proto.grpc_predict_v2_descriptor import SERIALIZED_FILE

SERVICE_NAME = "inference.GRPCInferenceService"

_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(descriptor_pb2.FileDescriptorProto.FromString(SERIALIZED_FILE))


def _message(name: str) -> Any:
    """The class of message ``inference.<name>``: built at run time, so its fields are unknown to a type checker."""
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"inference.{name}"))


ServerLiveRequest = _message("ServerLiveRequest")
ServerLiveResponse = _message("ServerLiveResponse")
ServerReadyRequest = _message("ServerReadyRequest")
ServerReadyResponse = _message("ServerReadyResponse")
ModelReadyRequest = _message("ModelReadyRequest")
ModelReadyResponse = _message("ModelReadyResponse")
ServerMetadataRequest = _message("ServerMetadataRequest")
ServerMetadataResponse = _message("ServerMetadataResponse")
ModelMetadataRequest = _message("ModelMetadataRequest")
ModelMetadataResponse = _message("ModelMetadataResponse")
ModelInferRequest = _message("ModelInferRequest")
ModelInferResponse = _message("ModelInferResponse")
ModelConfigRequest = _message("ModelConfigRequest")
ModelConfigResponse = _message("ModelConfigResponse")
ModelStatisticsRequest = _message("ModelStatisticsRequest")
ModelStatisticsResponse = _message("ModelStatisticsResponse")
RepositoryIndexRequest = _message("RepositoryIndexRequest")
RepositoryIndexResponse = _message("RepositoryIndexResponse")
RepositoryModelLoadRequest = _message("RepositoryModelLoadRequest")
RepositoryModelLoadResponse = _message("RepositoryModelLoadResponse")
RepositoryModelUnloadRequest = _message("RepositoryModelUnloadRequest")
RepositoryModelUnloadResponse = _message("RepositoryModelUnloadResponse")
InferParameter = _message("InferParameter")
InferTensorContents = _message("InferTensorContents")

# rpc name -> (request class, response class), in the order of the service definition.
RPCS: dict[str, tuple[Any, Any]] = {
    "ServerLive": (ServerLiveRequest, ServerLiveResponse),
    "ServerReady": (ServerReadyRequest, ServerReadyResponse),
    "ModelReady": (ModelReadyRequest, ModelReadyResponse),
    "ServerMetadata": (ServerMetadataRequest, ServerMetadataResponse),
    "ModelMetadata": (ModelMetadataRequest, ModelMetadataResponse),
    "ModelInfer": (ModelInferRequest, ModelInferResponse),
    "ModelConfig": (ModelConfigRequest, ModelConfigResponse),
    "ModelStatistics": (ModelStatisticsRequest, ModelStatisticsResponse),
    "RepositoryIndex": (RepositoryIndexRequest, RepositoryIndexResponse),
    "RepositoryModelLoad": (RepositoryModelLoadRequest, RepositoryModelLoadResponse),
    "RepositoryModelUnload": (RepositoryModelUnloadRequest, RepositoryModelUnloadResponse),
}
