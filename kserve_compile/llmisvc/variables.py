"""``ReplaceVariables``: the merged config executed as one Go text/template.

Mirrors ``ReplaceVariables`` in ``pkg/controller/v1alpha2/llmisvc/config_merge.go``: the merged
LLMInferenceServiceConfig is marshalled to JSON, that JSON text is executed as a ``text/template`` (option
``missingkey=error``) whose data is the *LLMInferenceService* (Go field names: ``.ObjectMeta.Name``,
``.Spec.Parallelism.Tensor``, promoted ``.Name``/``.Namespace``) plus ``.GlobalConfig``, with the functions
``ChildName``, ``kvTransferConfig`` and ``shutdownTimeout``; the output is parsed back as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING
from functools import lru_cache
from typing import Any

import orjson

from ..errors import InputError
from ..gotemplate import GoPtr, GoTextTemplate, Struct, TemplateError, chain_digest
from ..kube.quantity import parse_quantity
from .llm_types import LLMService, Spec
from .names import child_name
from .spec_merge import Split

# Go struct schemas for the template data: JSON name → (Go field, nested schema, is a pointer to a scalar).
_S = dict[str, tuple[str, Any, bool]]
PARALLELISM: _S = {
    "tensor": ("Tensor", None, True),
    "pipeline": ("Pipeline", None, True),
    "data": ("Data", None, True),
    "dataLocal": ("DataLocal", None, True),
    "dataRPCPort": ("DataRPCPort", None, True),
    "expert": ("Expert", None, False),
}
KV_CACHE: _S = {
    "cpu": ("CPU", None, False),
    "evictionPolicy": ("EvictionPolicy", None, False),
    "secondary": ("Secondary", None, False),
}
ROLLOUT: _S = {"maxUnavailable": ("MaxUnavailable", None, True), "maxSurge": ("MaxSurge", None, True)}
WORKLOAD: _S = {
    "replicas": ("Replicas", None, True),
    "scaling": ("Scaling", "map", False),
    "parallelism": ("Parallelism", PARALLELISM, False),
    "labels": ("Labels", None, False),
    "annotations": ("Annotations", None, False),
    "template": ("Template", "pod", False),
    "worker": ("Worker", "pod", False),
    "kvCacheOffloading": ("KVCacheOffloading", KV_CACHE, False),
    "rolloutStrategy": ("RolloutStrategy", ROLLOUT, False),
}
MODEL: _S = {
    "uri": ("URI", None, False),
    "name": ("Name", None, True),
    "lora": ("LoRA", "map", False),
    "confidential": ("Confidential", "map", False),
}
SPEC: _S = {
    **WORKLOAD,
    "model": ("Model", MODEL, False),
    "storageInitializer": ("StorageInitializer", "map", False),
    "router": ("Router", "map", False),
    "prefill": ("Prefill", WORKLOAD, False),
    "tracing": ("Tracing", "map", False),
    "baseRefs": ("BaseRefs", None, False),
}
_NON_NIL = {"URI": "", "Expert": False, "EvictionPolicy": "", "Labels": None, "Annotations": None}


class PodStruct(Struct):
    """A ``*corev1.PodSpec`` in the template data. As a whole it is only ever handed to ``shutdownTimeout``, which
    reads the grace period, so that is what its cache digest holds; its fields read directly digest themselves."""

    def template_digest(self) -> Any:
        return ("pod", self.get("TerminationGracePeriodSeconds"))


def _go_name(key: str) -> str:
    return key[:1].upper() + key[1:]


def _struct(value: Any, schema: Any) -> Any:
    """JSON-shaped data as Go structs: every declared field exists (nil when absent), pointers wrapped."""
    if value is None:
        return None
    if schema is None:
        return value
    if schema in ("map", "pod"):
        if not isinstance(value, dict):
            return value
        kind = PodStruct if schema == "pod" else Struct
        return kind({_go_name(k): _struct(v, "map") for k, v in value.items()})
    out = Struct()
    for key, (go, nested, pointer) in schema.items():
        item = value.get(key) if isinstance(value, dict) else None
        if item is None:
            out[go] = _NON_NIL.get(go)
        elif pointer:
            out[go] = GoPtr(item)
        else:
            out[go] = _struct(item, nested)
    if "CPU" in out and out["CPU"] is None:
        out["CPU"] = "0"
    return out


@dataclass(frozen=True)
class GlobalConfig:
    """``templateGlobalConfig``: the controller settings a preset may read."""

    system_namespace: str
    ingress_gateway_name: str
    ingress_gateway_namespace: str
    enable_tls: bool
    model_based_routing_header_name: str


def template_data(svc: LLMService, spec: Spec, global_config: GlobalConfig, pool_namespaced_name: str) -> Struct:
    meta = Struct(
        Name=svc.name,
        Namespace=svc.namespace,
        Labels=dict(svc.labels),
        Annotations=dict(svc.annotations),
        GenerateName="",
        UID=svc.uid,
        ResourceVersion="",
        Generation=0,
    )
    return Struct(
        TypeMeta=Struct(Kind="LLMInferenceService", APIVersion="serving.kserve.io/v1alpha2"),
        Kind="LLMInferenceService",
        APIVersion="serving.kserve.io/v1alpha2",
        ObjectMeta=meta,
        **{k: meta[k] for k in ("Name", "Namespace", "Labels", "Annotations", "GenerateName", "UID")},
        Spec=_struct(spec, SPEC),
        Status=_struct(svc.status, "map") or Struct(),
        GlobalConfig=Struct(
            SystemNamespace=global_config.system_namespace,
            IngressGatewayName=global_config.ingress_gateway_name,
            IngressGatewayNamespace=global_config.ingress_gateway_namespace,
            EnableTLS=global_config.enable_tls,
            ModelBasedRoutingHeaderName=global_config.model_based_routing_header_name,
            InferencePoolNamespacedName=pool_namespaced_name,
        ),
    )


def _go_json(value: Any) -> str:
    """``json.Marshal``'s text: compact, ``<``, ``>``, ``&`` escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def kv_transfer_config(spec: Any) -> str:
    """``kvTransferConfig``: vLLM's ``--kv-transfer-config`` for CPU (and file-system) KV-cache offloading."""
    if not isinstance(spec, Struct):
        return ""
    cpu = int(parse_quantity(str(spec.get("CPU") or "0")).to_integral_value(rounding=ROUND_CEILING))
    extra: dict[str, Any] = {"spec_name": "TieringOffloadingSpec", "cpu_bytes_to_use": cpu}
    if spec.get("EvictionPolicy"):
        extra["eviction_policy"] = spec["EvictionPolicy"]
    tiers = [
        {"type": "fs", "root_dir": f"/mnt/kv-cache-{i}"}
        for i, tier in enumerate(spec.get("Secondary") or [])
        if isinstance(tier, dict) and tier.get("fileSystem") is not None
    ]
    if tiers:
        extra["secondary_tiers"] = tiers
    config = {"kv_connector": "OffloadingConnector", "kv_role": "kv_both", "kv_connector_extra_config": extra}
    text = json.dumps(config, separators=(",", ":"), sort_keys=True)
    return "--kv-transfer-config '" + text.replace('"', '\\\\\\"') + "'"


def shutdown_timeout(pod: Any, pre_stop: int) -> int:
    """``shutdownTimeout``: ``max(0, tgps − preStop − min(5, tgps))``, tgps defaulting to 60."""
    tgps = 60
    if isinstance(pod, Struct) and isinstance(pod.get("TerminationGracePeriodSeconds"), int):
        tgps = pod["TerminationGracePeriodSeconds"]
    return max(0, tgps - int(pre_stop) - min(5, tgps))


FUNCS = {"ChildName": child_name, "kvTransferConfig": kv_transfer_config, "shutdownTimeout": shutdown_timeout}


def replace_variables(config_spec: Spec, data: Struct) -> Spec:
    """The config spec with every template action executed; ``InputError`` with Go's wording on failure.

    KServe executes the JSON text of the whole config as one template. Here each JSON string holding an action is
    executed on its own (its escaped text, spliced back before the JSON is parsed), which is the same whenever
    every ``{{if}}`` closes inside the string it opens in — true of every shipped preset — and lets each distinct
    string be parsed once per process and rendered once per distinct set of values it reads. A document where that
    does not hold is executed whole, as KServe does.
    """
    text = orjson.dumps(config_spec).decode()
    if "{{" not in text:
        return config_spec
    digests: dict[str, Any] = {}
    parts: list[str] = []
    pos = 0
    try:
        for start, end in _templated_strings(text):
            parts += [text[pos:start], _render_escaped(text[start:end], data, digests)]
            pos = end
    except _Unbalanced:
        return _render_document(text, data)
    parts.append(text[pos:])
    return _load("".join(parts))


def _templated_strings(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of the contents of every JSON string in ``text`` holding ``{{`` (quotes excluded)."""
    pos = text.find("{{")
    while pos != -1:
        start = _string_start(text, pos)
        end = _string_end(text, pos)
        yield start, end
        pos = text.find("{{", end + 1)


def _escaped(text: str, quote: int) -> bool:
    backslashes = 0
    while quote - 1 - backslashes >= 0 and text[quote - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _string_start(text: str, pos: int) -> int:
    quote = text.rfind('"', 0, pos)
    while _escaped(text, quote):
        quote = text.rfind('"', 0, quote)
    return quote + 1


def _string_end(text: str, pos: int) -> int:
    quote = text.find('"', pos)
    while _escaped(text, quote):
        quote = text.find('"', quote + 1)
    return quote


class Unbalanced(Exception):
    """A template string that cannot be executed on its own (an ``{{if}}`` closing in another string)."""


_Unbalanced = Unbalanced


# --- per-config rendering ---------------------------------------------------------------------------------------
# Executing each config's strings before the merge gives the merged result of executing them after it (the
# merge never looks inside strings, except for a templated merge key, which falls back to the whole document), and
# lets every config keep, across services, the list of places its templates sit and the field chains they read.
_Path = tuple[str | int, ...]
_GROUP_DEPTH = 3  # subtrees this deep (e.g. template.containers[0]) are rebuilt, and cached, as a whole


@dataclass(frozen=True)
class _Group:
    """A subtree holding templates: where it sits, its templated strings (path, escaped text), the chains they read."""

    prefix: _Path
    entries: tuple[tuple[_Path, str], ...]
    chains: tuple[str, ...]


_PLANS: dict[
    tuple[int, _Path], tuple[Any, tuple[_Group, ...]]
] = {}  # the value is kept with its plan: its id stays its own
_SUBTREES: dict[tuple[int, _Path, tuple[Any, ...]], tuple[Any, Any]] = {}  # likewise
_NOT_YET = object()


def _templated_paths(value: Any, path: _Path, out: list[tuple[_Path, str]]) -> None:
    if isinstance(value, str):
        if "{{" in value:
            out.append((path, _go_json(value)[1:-1]))
    elif isinstance(value, dict):
        for key, item in value.items():
            if "{{" in key:
                raise _Unbalanced  # a templated key: merge keys may change, render the merged document instead
            _templated_paths(item, (*path, key), out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _templated_paths(item, (*path, i), out)


def _plan(value: Any, root: _Path) -> tuple[_Group, ...]:
    """Every template of ``value`` (found at ``root``), grouped by subtree, each template parsed (so parse errors come
    before execution errors, as in Go)."""
    found: list[tuple[_Path, str]] = []
    _templated_paths(value, root, found)
    groups: dict[_Path, list[tuple[_Path, str]]] = {}
    for path, escaped in found:
        groups.setdefault(path[:_GROUP_DEPTH], []).append((path, escaped))
    return tuple(
        _Group(prefix, tuple(entries), tuple(sorted({c for _, text in entries for c in _parsed(text).chains})))
        for prefix, entries in groups.items()
    )


def _shared_plan(value: Any, root: _Path) -> tuple[_Group, ...]:
    entry = _PLANS.get((id(value), root))
    if entry is not None and entry[0] is value:
        return entry[1]
    plan = _plan(value, root)
    if len(_PLANS) >= 1024:
        _PLANS.clear()
    _PLANS[(id(value), root)] = (value, plan)
    return plan


def _own_plan(value: Any, root: _Path) -> tuple[_Group, ...]:
    try:
        if b"{{" not in orjson.dumps(value):  # JSON never escapes braces: no templated string or key anywhere
            return ()
    except (TypeError, ValueError):
        pass
    return _plan(value, root)


def render_spec(spec: Spec, data: Struct, digests: dict[str, Any], *, shared: bool = True) -> Spec:
    """``spec`` with its template strings executed; unchanged parts are shared, not copied.

    A ``shared`` spec is a config that nothing mutates and that many services render: where its templates sit is
    worked out once, and each subtree holding templates (``template.containers[0]``, ``router.scheduler.pool`` …)
    is rebuilt once per distinct set of values its templates read and shared between services after that (nothing
    mutates a rendered config: callers copy what they take). A service's own spec (``shared=False``) is rendered
    afresh and nothing of it is kept. Raises ``Unbalanced`` when a string cannot be executed on its own (see
    :func:`replace_variables`)."""
    plan = _shared_plan(spec, ()) if shared else _own_plan(spec, ())
    return _render_at(spec, (), plan, shared, data, digests)


def render_fields(fields: Mapping[str, tuple[Any, bool]], data: Struct, digests: dict[str, Any]) -> Spec:
    """A spec given field by field, each top-level field's value with whether it is ``shared`` (as in
    :func:`render_spec`), rendered; the result shares what did not change with the values given. A :class:`Split`
    field is rendered from its base side (shared) and its own side merged over the result."""
    plans = {
        key: _shared_plan(value.base, (key,))
        if isinstance(value, Split)
        else (_shared_plan if shared else _own_plan)(value, (key,))
        for key, (value, shared) in fields.items()
    }
    out: Spec = {}
    for key, (value, shared) in fields.items():
        if isinstance(value, Split):
            out[key] = value.merge(_render_at(value.base, (key,), plans[key], True, data, digests))
        else:
            out[key] = _render_at(value, (key,), plans[key], shared, data, digests)
    return out


def _render_at(
    value: Any, root: _Path, plan: tuple[_Group, ...], shared: bool, data: Struct, digests: dict[str, Any]
) -> Any:
    tree: dict[Any, Any] = {}
    for group in plan:
        if shared:
            subtree = _shared_subtree(value, root, group, data, digests)
        else:
            subtree = _render_group(value, root, group, data, digests)
        where = group.prefix[len(root) :]
        if not where:
            return subtree  # ``value`` itself is the one group: a templated string
        node = tree
        for part in where[:-1]:
            node = node.setdefault(part, {})
        node[where[-1]] = _Leaf(subtree)
    return _apply(value, tree) if tree else value


def _shared_subtree(value: Any, root: _Path, group: _Group, data: Struct, digests: dict[str, Any]) -> Any:
    key = (id(value), group.prefix, tuple(_chain_digest(chain, data, digests) for chain in group.chains))
    hit = _SUBTREES.get(key)
    if hit is not None and hit[0] is value:
        return hit[1]
    subtree = _render_group(value, root, group, data, digests)
    if len(_SUBTREES) > 16384:
        _SUBTREES.clear()
    _SUBTREES[key] = (value, subtree)
    return subtree


def _chain_digest(chain: str, data: Struct, digests: dict[str, Any]) -> Any:
    """What ``chain`` reads from ``data``, as a hashable digest (computed once per service)."""
    found = digests.get(chain, _NOT_YET)
    if found is _NOT_YET:
        found = digests[chain] = chain_digest(chain, data)
    return found


def _render_group(value: Any, root: _Path, group: _Group, data: Struct, digests: dict[str, Any]) -> Any:
    prefix = group.prefix
    node: Any = value
    for part in prefix[len(root) :]:
        node = node[part]
    tree: dict[Any, Any] = {}
    for path, escaped in group.entries:
        text = _render_escaped(escaped, data, digests)
        try:
            value = json.loads('"' + text + '"') if "\\" in text or '"' in text else text
        except json.JSONDecodeError:
            raise Unbalanced from None  # output that is not a JSON string body: only the whole document decides
        rest = path[len(prefix) :]
        if not rest:
            return value
        leaf = tree
        for part in rest[:-1]:
            leaf = leaf.setdefault(part, {})
        leaf[rest[-1]] = _Leaf(value)
    return _apply(node, tree)


class _Leaf:
    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value


def _apply(node: Any, tree: dict[Any, Any]) -> Any:
    """A copy of ``node`` along the paths in ``tree`` only, with the leaves set."""
    copy: Any = dict(node) if isinstance(node, dict) else list(node)
    for key, sub in tree.items():
        copy[key] = sub.value if isinstance(sub, _Leaf) else _apply(node[key], sub)
    return copy


@lru_cache(maxsize=4096)
def _parsed(escaped: str) -> GoTextTemplate:
    try:
        return GoTextTemplate(escaped, FUNCS, name="config")
    except TemplateError:
        # An {{if}} closing in another string, or a real error: KServe parses the whole document, and so does the
        # fallback, whose error (if any) is Go's for the document.
        raise _Unbalanced from None


_RENDERED: dict[tuple[str, tuple[Any, ...]], str] = {}
_RENDERED_MAX = 65536


def _render_escaped(escaped: str, data: Struct, digests: dict[str, Any]) -> str:
    template = _parsed(escaped)
    key = (escaped, tuple(_chain_digest(chain, data, digests) for chain in template.chains))
    hit = _RENDERED.get(key)
    if hit is None:
        if len(_RENDERED) >= _RENDERED_MAX:
            _RENDERED.clear()
        _RENDERED[key] = hit = _execute(template, data)
    return hit


def _execute(template: GoTextTemplate, data: Struct) -> str:
    try:
        return template.render(data)
    except TemplateError as exc:
        raise InputError(f"failed to merge config: {exc}", "spec") from None


def _load(text: str) -> Spec:
    try:
        out = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"failed to unmarshal config from template: {exc}", "spec") from None
    return out if isinstance(out, dict) else {}


def _render_document(text: str, data: Struct) -> Spec:
    try:
        template = GoTextTemplate(text, FUNCS, name="config")
    except TemplateError as exc:
        raise InputError(f"failed to parse template config: {exc}", "spec") from None
    return _load(_execute(template, data))
