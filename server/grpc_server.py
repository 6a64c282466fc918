"""The Open Inference Protocol over gRPC (``inference.GRPCInferenceService``) on ``grpc.aio``."""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
from collections.abc import Awaitable, Callable

import grpc
import numpy as np

from server import codec
from server.datatypes import GRPC_CONTENTS_FIELD, v2_from_numpy
from server.errors import InvalidInput, ModelNotFound, ServerError
from server.hotpath import log_failure, observe
from server.model import OnnxModel
from server.proto import messages as pb
from server.state import ServerState
from server.stats import OTHER
from server.triton_config import model_config

logger = logging.getLogger("server.grpc")


def _request_id(request: object, context: grpc.aio.ServicerContext) -> str | None:
    given = getattr(request, "id", "")
    if given:
        return given
    for key, value in context.invocation_metadata() or ():
        if key == "x-request-id":
            return value
    return None


def _guarded(rpc: Callable[..., Awaitable[object]]) -> Callable[..., Awaitable[object]]:
    @functools.wraps(rpc)
    async def handler(request: object, context: grpc.aio.ServicerContext) -> object:
        try:
            return await rpc(request, context)
        except Exception as exc:  # noqa: BLE001 - never leak a traceback to the client
            _, message = log_failure(exc, _request_id(request, context), f"gRPC {rpc.__name__}")
            code = exc.grpc_code if isinstance(exc, ServerError) else grpc.StatusCode.INTERNAL
            await context.abort(code, message)
            raise AssertionError("unreachable: ServicerContext.abort raises") from exc  # grpc has no types to say so

    return handler


def _model(state: ServerState, name: str, version: str) -> OnnxModel:
    model = state.repository.get(name)
    if version and version != model.version:
        raise ModelNotFound(name, version)
    return model


def _tensor_metadata(spec: codec.TensorSpec) -> object:
    return pb.ModelMetadataResponse.TensorMetadata(name=spec.name, datatype=spec.datatype, shape=list(spec.shape))


def _payload_bytes(request) -> int:
    """About how many bytes of tensor data a ModelInferRequest carries (raw contents, or typed from the shapes)."""
    if request.raw_input_contents:
        return sum(len(blob) for blob in request.raw_input_contents)
    return 4 * sum(math.prod(tensor.shape) for tensor in request.inputs)


def build_handlers(state: ServerState) -> dict[str, grpc.RpcMethodHandler]:
    large = state.options.large_request_bytes

    async def ServerLive(request: object, context: object) -> object:
        return pb.ServerLiveResponse(live=True)

    async def ServerReady(request: object, context: object) -> object:
        return pb.ServerReadyResponse(ready=state.ready())

    async def ModelReady(request, context):
        model = state.repository.models.get(request.name)
        if model is None:
            raise ModelNotFound(request.name)
        return pb.ModelReadyResponse(ready=model.ready and (not request.version or request.version == model.version))

    async def ServerMetadata(request: object, context: object) -> object:
        meta = state.server_metadata()
        return pb.ServerMetadataResponse(name=meta["name"], version=meta["version"], extensions=meta["extensions"])

    async def ModelMetadata(request, context):
        model = _model(state, request.name, request.version)
        return pb.ModelMetadataResponse(
            name=model.name,
            versions=[model.version],
            platform=model.metadata()["platform"],
            inputs=[_tensor_metadata(s) for s in model.inputs],
            outputs=[_tensor_metadata(s) for s in model.outputs],
        )

    async def ModelInfer(request, context):
        model = _model(state, request.model_name, request.model_version)
        started = time.perf_counter()
        raw = len(request.raw_input_contents) > 0
        big = _payload_bytes(request) >= large
        try:
            if not big:
                feeds, outputs = decode_infer(model, request)
            else:  # as over HTTP: a big request is decoded, and answered, off the event loop
                feeds, outputs = await asyncio.get_running_loop().run_in_executor(None, decode_infer, model, request)
            decoded_at = time.perf_counter()
            results = await state.infer(model, feeds, outputs)
            predicted_at = time.perf_counter()
            if not big:
                response = encode_infer(model, request, outputs, results, raw)
            else:
                response = await asyncio.get_running_loop().run_in_executor(
                    None, encode_infer, model, request, outputs, results, raw
                )
        except Exception as exc:
            model.stats.failure(getattr(exc, "reason", OTHER), time.perf_counter() - started)
            raise
        observe(model, feeds, state.batcher_for(model) is not None, started, decoded_at, predicted_at)
        return response

    async def ModelConfig(request, context):
        model = _model(state, request.name, request.version)
        return pb.ModelConfigResponse(config=model_config(model, state.batcher_for(model)))

    async def ModelStatistics(request, context):
        if request.name:
            model = _model(state, request.name, request.version)
            rows = [model.stats.triton(model.name, model.version)]
        else:
            rows = [stats.triton(name, version) for name, version, stats in state.model_stats()]
        return pb.ModelStatisticsResponse(
            model_stats=[{k: v for k, v in r.items() if k != "batch_stats"} for r in rows]
        )

    async def RepositoryIndex(request, context):
        return pb.RepositoryIndexResponse(models=state.repository.index(ready_only=request.ready))

    async def RepositoryModelLoad(request, context):
        await state.load(request.model_name)
        return pb.RepositoryModelLoadResponse()

    async def RepositoryModelUnload(request, context):
        await state.unload(request.model_name)
        return pb.RepositoryModelUnloadResponse()

    handlers = {}
    for fn in (
        ServerLive,
        ServerReady,
        ModelReady,
        ServerMetadata,
        ModelMetadata,
        ModelInfer,
        ModelConfig,
        ModelStatistics,
        RepositoryIndex,
        RepositoryModelLoad,
        RepositoryModelUnload,
    ):
        request_cls, response_cls = pb.RPCS[fn.__name__]
        handlers[fn.__name__] = grpc.unary_unary_rpc_method_handler(
            _guarded(fn),
            request_deserializer=request_cls.FromString,
            response_serializer=response_cls.SerializeToString,
        )
    return handlers


def decode_infer(model: OnnxModel, request) -> tuple[dict[str, np.ndarray], list[str]]:
    raw = request.raw_input_contents
    if raw and len(raw) != len(request.inputs):
        raise InvalidInput(f"raw_input_contents has {len(raw)} entries for {len(request.inputs)} inputs")
    feeds: dict[str, np.ndarray] = {}
    for index, tensor in enumerate(request.inputs):
        if raw and tensor.HasField("contents"):
            raise InvalidInput(f"input {tensor.name!r}: contents and raw_input_contents are both set")
        if tensor.name in feeds:
            raise InvalidInput(f"input {tensor.name!r} is given twice")
        feeds[tensor.name] = codec.decode_grpc_tensor(
            model, tensor.name, tensor.datatype, tuple(tensor.shape), tensor.contents, raw[index] if raw else None
        )
    codec.check_feeds(model, feeds)
    if not request.outputs:
        return feeds, model.output_names
    outputs = []
    for requested in request.outputs:
        if requested.name not in model.output_by_name:
            raise InvalidInput(f"Unexpected inference output {requested.name!r} for model {model.name!r}")
        outputs.append(requested.name)
    return feeds, outputs


def encode_infer(model: OnnxModel, request, outputs: list[str], results: list[np.ndarray], raw: bool):
    response = pb.ModelInferResponse(model_name=model.name, model_version=model.version, id=request.id)
    datatypes = [v2_from_numpy(array.dtype) for array in results]
    # Raw contents must line up 1:1 with outputs, so one datatype without a typed field makes all raw.
    raw = raw or any(dt not in GRPC_CONTENTS_FIELD for dt in datatypes)
    for name, datatype, array in zip(outputs, datatypes, results):
        tensor = response.outputs.add(name=name, datatype=datatype, shape=array.shape)
        if raw:
            response.raw_output_contents.append(bytes(codec.raw_from_tensor(array)))
        elif datatype == "BYTES":
            tensor.contents.bytes_contents.extend(
                item.encode("utf-8") if isinstance(item, str) else bytes(item) for item in array.reshape(-1)
            )
        else:
            getattr(tensor.contents, GRPC_CONTENTS_FIELD[datatype]).extend(array.reshape(-1).tolist())
    return response


def build_grpc_server(state: ServerState) -> grpc.aio.Server:
    """The gRPC server, bound. One process binds its port alone (no SO_REUSEPORT sharing with another
    server); ``--workers`` processes share it on purpose, after the parent checked it was free."""
    options = state.options
    server = grpc.aio.server(
        options=[
            ("grpc.max_send_message_length", options.grpc_max_send_message_length),
            ("grpc.max_receive_message_length", options.grpc_max_receive_message_length),
            ("grpc.so_reuseport", 1 if options.workers > 1 else 0),
        ]
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(pb.SERVICE_NAME, build_handlers(state)),))
    address = f"{options.bind_address}:{options.grpc_port}"
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError:
        bound = 0
    if bound == 0:
        raise ValueError(f"--grpc_port {options.grpc_port}: cannot listen on {address}: address already in use")
    logger.info("gRPC listening on %s", address)
    return server
