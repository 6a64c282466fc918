"""Plan, step 4 — choose the ServingRuntime for a model predictor, as KServe does.

Explicit ``model.runtime``: the namespaced ServingRuntime of that name, else the ClusterServingRuntime; then the
disabled / protocol / format checks (``components/predictor.go`` reconcileModel). Auto-selection
(``api/predictor_model.go`` GetSupportingRuntimes): namespaced candidates before cluster ones, each list sorted by
lowest protocol, newest creationTimestamp, name; then a stable sort by the format's priority, highest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .. import constants as C
from ..errors import InputError
from ..inputs.serving_types import ModelSpec, ServingRuntime, ServingRuntimeSpec, model_type

UNRANKED_PROTOCOL = 5


class Selected(NamedTuple):
    runtime: ServingRuntime
    # True when model.runtime named it (autoSelect is then ignored for the format match)
    explicit: bool

    @property
    def name(self) -> str:
        return self.runtime.metadata.name

    @property
    def spec(self) -> ServingRuntimeSpec:
        return self.runtime.spec


def model_protocol(model: ModelSpec) -> str:
    """The isvc's protocol for matching: ``protocolVersion`` or v1."""
    return model.protocol_version or C.PROTOCOL_V1


def supports_protocol(spec: ServingRuntimeSpec, protocol: str) -> bool:
    return not spec.protocol_versions or protocol in spec.protocol_versions


def lowest_protocol(spec: ServingRuntimeSpec) -> str:
    """``GetProtocolVersionPriority``: the runtime's lowest-ranked protocol (v1 < v2 < grpc-v1 < grpc-v2)."""
    # min() keeps the first of equally ranked protocols, as the stable sort KServe uses does
    return min(spec.protocol_versions, key=_protocol_rank) if spec.protocol_versions else C.PROTOCOL_V1


def _protocol_rank(protocol: str) -> int:
    return C.PROTOCOL_RANK.get(protocol, UNRANKED_PROTOCOL)


def supports_model(spec: ServingRuntimeSpec, model: ModelSpec, explicit: bool) -> bool:
    auto, every = spec.model_type_labels
    return model_type(model.model_format.name, model.model_format.version) in (every if explicit else auto)


def _priority(spec: ServingRuntimeSpec, format_name: str) -> int | None:
    for fmt in spec.supported_model_formats or []:
        if fmt.name == format_name:
            return fmt.priority
    return None


def _sort_key(rt: ServingRuntime) -> tuple:
    # newest first: ISO-8601 timestamps sort lexically, so invert by sorting on the negated ordinal string
    created = rt.metadata.creation_timestamp or ""
    return (_protocol_rank(lowest_protocol(rt.spec)), _Desc(created), rt.metadata.name)


class _Desc(str):
    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)


def select_runtime(
    model: ModelSpec,
    namespace: str,
    runtimes: Sequence[ServingRuntime],
    *,
    multi_node: bool,
    path: str = "spec.predictor.model",
) -> Selected:
    """The runtime KServe would use; ``InputError`` with KServe's message when there is none."""
    if model.runtime:
        return _explicit(model, namespace, runtimes, path)
    fmt = model.model_format
    candidates = _candidates(runtimes, namespace, fmt.name, fmt.version, model_protocol(model), multi_node)
    if not candidates:
        version = f'"{model.model_format.version}"' if model.model_format.version else "<nil>"
        raise InputError(
            f"no runtime found to support predictor with model type: {{{model.model_format.name} {version}}}",
            f"{path}.modelFormat",
        )
    return Selected(candidates[0], explicit=False)


# The candidates depend only on the runtimes and these few facts of the model, and a repository's isvcs share both:
# the answers for the last runtime tuple are kept (with the tuple itself, so its identity can be trusted).
_memo: tuple[tuple[ServingRuntime, ...], dict[tuple, tuple[ServingRuntime, ...]]] | None = None


def _candidates(
    runtimes: Sequence[ServingRuntime], namespace: str, name: str, version: str | None, protocol: str, multi_node: bool
) -> tuple[ServingRuntime, ...]:
    global _memo
    if not isinstance(runtimes, tuple):  # a list may change between calls
        return _auto_candidates(runtimes, namespace, name, version, protocol, multi_node)
    memo = _memo
    if memo is None or memo[0] is not runtimes:
        memo = _memo = (runtimes, {})
    key = (namespace, name, version, protocol, multi_node)
    found = memo[1].get(key)
    if found is None:
        found = memo[1][key] = _auto_candidates(runtimes, namespace, name, version, protocol, multi_node)
    return found


def _auto_candidates(
    runtimes: Sequence[ServingRuntime], namespace: str, name: str, version: str | None, protocol: str, multi_node: bool
) -> tuple[ServingRuntime, ...]:
    wanted = model_type(name, version)

    def eligible(listed: list[ServingRuntime]) -> list[ServingRuntime]:
        out = [
            r
            for r in listed
            if not r.spec.disabled
            and not r.spec.multi_model
            and wanted in r.spec.model_type_labels[0]
            and supports_protocol(r.spec, protocol)
            and (r.spec.worker_spec is not None) == multi_node
        ]
        # filtering first keeps the order sorting first would give (stable sorts); only the few eligible are keyed
        out.sort(key=_sort_key)
        # stable: a runtime with a priority for the format beats one without; higher beats lower
        out.sort(key=lambda r: _neg_priority(_priority(r.spec, name)))
        return out

    namespaced = [r for r in runtimes if not r.is_cluster and r.metadata.namespace == namespace]
    cluster = [r for r in runtimes if r.is_cluster]
    # each list is priority-sorted on its own, so every namespaced runtime precedes every cluster one
    return (*eligible(namespaced), *eligible(cluster))


def _neg_priority(priority: int | None) -> tuple[int, int]:
    return (1, 0) if priority is None else (0, -priority)


def _explicit(model: ModelSpec, namespace: str, runtimes: Sequence[ServingRuntime], path: str) -> Selected:
    name = model.runtime
    found = next(
        (r for r in runtimes if not r.is_cluster and r.metadata.name == name and r.metadata.namespace == namespace),
        None,
    )
    found = found or next((r for r in runtimes if r.is_cluster and r.metadata.name == name), None)
    if found is None:
        raise InputError(f"No ServingRuntimes or ClusterServingRuntimes with the name: {name}", f"{path}.runtime")
    if found.spec.disabled:
        raise InputError(f"specified runtime {name} is disabled", f"{path}.runtime")
    if model.protocol_version and not supports_protocol(found.spec, model.protocol_version):
        raise InputError(
            f"specified runtime {name} does not support specified protocol version", f"{path}.protocolVersion"
        )
    if not supports_model(found.spec, model, explicit=True):
        raise InputError(
            f"specified runtime {name} does not support specified framework/version", f"{path}.modelFormat"
        )
    return Selected(found, explicit=True)
