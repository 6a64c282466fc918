"""What a graph step with ``serviceName`` needs from the InferenceService it names.

KServe's graph controller fills such a step's ``serviceUrl`` from the live isvc (``GetPredictorEndpoint``,
``pkg/controller/v1beta1/inferenceservice/utils/utils.go``): ``status.address.url`` plus the predict path of the
model name and protocol. :func:`isvc_target` computes the same from a (defaulted) isvc of the same run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import constants as C
from ..inputs.serving_types import InferenceService, ServingRuntime
from ..plan.components import is_multi_model

ARG_MODEL_NAME = "--model_name"
ENV_MLSERVER_MODEL_NAME = "MLSERVER_MODEL_NAME"
ENV_PROTOCOL = "PROTOCOL"


@dataclass(frozen=True)
class IsvcTarget:
    """A referenced isvc: its ``status.address.url``, the protocol of its predict path and its model name.

    ``protocol`` other than ``v1``/``v2`` (or None) gives no path, as KServe does for a multi-model predictor.
    ``error`` is KServe's reconcile error for this isvc (e.g. a runtime without v1/v2); a step naming it fails.
    """

    url: str
    protocol: str | None
    model_name: str
    error: str | None = None

    @property
    def service_url(self) -> str:
        return self.url + predict_path(self.model_name, self.protocol)


def predict_path(model_name: str, protocol: str | None) -> str:
    """``constants.PredictPath``."""
    if protocol == C.PROTOCOL_V1:
        return f"/v1/models/{model_name}:predict"
    if protocol == C.PROTOCOL_V2:
        return f"/v2/models/{model_name}/infer"
    return ""


def model_name_from_args(args: Sequence[str] | None) -> str:
    """``getModelNameFromArgs``: ``--model_name=<n>`` or ``--model_name <n>``; the last match wins."""
    args = list(args or [])
    name = ""
    for i, arg in enumerate(args):
        if not arg.startswith(ARG_MODEL_NAME):
            continue
        parts = arg.split("=")
        if len(parts) == 2:
            name = parts[1]
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            name = args[i + 1]
    return name


def _env(container: dict, name: str) -> str | None:
    for entry in container.get("env") or []:
        if entry.get("name") == name:
            return str(entry.get("value") or "")
    return None


def model_name(isvc: InferenceService) -> str:
    """``GetModelName``: transformer args, MLServer env, model/container args, else the isvc name."""
    spec = isvc.spec
    if spec.transformer is not None and spec.transformer.containers:
        found = model_name_from_args(spec.transformer.containers[0].get("args"))
        if found:
            return found
    model = spec.predictor.model
    if model is not None:
        env = model.k8s.get("env") or []
        for entry in env:
            if entry.get("name") == ENV_MLSERVER_MODEL_NAME:
                return str(entry.get("value") or "")
        found = model_name_from_args(model.k8s.get("args"))
        if found:
            return found
    elif spec.predictor.containers:
        found = model_name_from_args(spec.predictor.containers[0].get("args"))
        if found:
            return found
    return isvc.metadata.name


def _custom_protocol(containers: list[dict], *, collocated: bool) -> str:
    if collocated:
        for container in containers:
            if container.get("name") == C.CONTAINER_TRANSFORMER:
                return _env(container, ENV_PROTOCOL) or C.PROTOCOL_V1
    if containers:
        value = _env(containers[0], ENV_PROTOCOL)
        if value is not None:
            return value
    return C.PROTOCOL_V1


def isvc_target(isvc: InferenceService, address_url: str, runtimes: Sequence[ServingRuntime]) -> IsvcTarget:
    """The :class:`IsvcTarget` KServe derives from ``isvc`` (after defaulting) whose address is ``address_url``.

    ``runtimes`` are the ServingRuntimes and ClusterServingRuntimes of the run (an explicit ``model.runtime`` decides
    the protocol by its first v1/v2 entry).
    """
    name = model_name(isvc)
    spec = isvc.spec
    if spec.transformer is not None:
        return IsvcTarget(address_url, _custom_protocol(spec.transformer.containers, collocated=False), name)
    if is_multi_model(spec.predictor):
        return IsvcTarget(address_url, None, name)
    model = spec.predictor.model
    if model is None:
        return IsvcTarget(address_url, _custom_protocol(spec.predictor.containers, collocated=True), name)
    protocol = model.protocol_version or C.PROTOCOL_V1
    if model.runtime:
        runtime = _find_runtime(model.runtime, isvc.metadata.namespace or "default", runtimes)
        if runtime is None:
            return IsvcTarget(
                address_url, None, name, f"No ServingRuntimes or ClusterServingRuntimes with the name: {model.runtime}"
            )
        versions = runtime.spec.protocol_versions or []
        if versions:
            usable = [v for v in versions if v in (C.PROTOCOL_V1, C.PROTOCOL_V2)]
            if not usable:
                return IsvcTarget(
                    address_url, None, name, "the runtime does not support a protocol compatible with Inference Graphs"
                )
            protocol = usable[0]
    return IsvcTarget(address_url, protocol, name)


def _find_runtime(name: str, namespace: str, runtimes: Sequence[ServingRuntime]) -> ServingRuntime | None:
    for rt in runtimes:
        if not rt.is_cluster and rt.metadata.name == name and (rt.metadata.namespace or "default") == namespace:
            return rt
    for rt in runtimes:
        if rt.is_cluster and rt.metadata.name == name:
            return rt
    return None
