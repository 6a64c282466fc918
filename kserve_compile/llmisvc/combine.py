"""``combineBaseRefsConfig``: presets chosen from the topology, then ``baseRefs``, then the service's own spec.

Mirrors ``combineBaseRefsConfig`` and its post-merge fix-ups in ``pkg/controller/v1alpha2/llmisvc/config_merge.go``
(selection order, ``MergeSpecs``, the default pool selector and scheduler ServiceAccount, ``ReplaceVariables``,
gateway parentRefs, backendRef rewrites, scheduler ConfigMap resolution, the endpoint-picker port default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..datacopy import clone
from ..errors import InputError
from . import presets as P
from .dra import enabled as dra_enabled
from .dra import inject as inject_managed_dra
from .llm_types import LLMService, Spec, get_path, is_data_parallel, is_pipeline_parallel, pool_has_ref
from .names import POOL_GROUP_V1ALPHA2, child_name, workload_selector, workload_service
from .options import LLMOptions
from .presets import ConfigStore
from .spec_merge import merge_specs, merged_configs, overlay
from .variables import (
    GlobalConfig,
    Unbalanced,
    render_fields,
    replace_variables,
    template_data,
)

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
CONFIG_TEXT_FLAGS = ("--config-text", "-config-text", "--configText", "-configText")
CONFIG_FLAGS = (*CONFIG_TEXT_FLAGS, "--config-file", "-config-file", "--configFile", "-configFile")
TOKEN_PRODUCER = "token-producer"
PRECISE_PREFIX = "precise-prefix-cache-scorer"
LATENCY_PRODUCER = "predicted-latency-producer"


@dataclass
class Combined:
    """The merged spec the controller builds every object from, and what it records in status."""

    spec: Spec
    applied: list[dict[str, str]] = field(default_factory=list)
    scheduler_configmap: tuple[str, str] | None = None
    given_configs: bool = False  # an input LLMInferenceServiceConfig was merged (not only KServe's shipped presets)


def scheduler_config_flag(containers: Any) -> list[str] | None:
    """``configFlagFromContainers``: a config flag and its value in the ``main`` container's args."""
    for container in containers or []:
        if isinstance(container, dict) and container.get("name") == "main":
            args = container.get("args") or []
            for i in range(len(args) - 1):
                if args[i] in CONFIG_FLAGS:
                    return [args[i], args[i + 1]]
            return None
    return None


def inline_config_text(spec: Spec) -> str | None:
    """``inlineSchedulerConfigBytes``: inline config, else a ``--config-text`` already in the template."""
    scheduler = get_path(spec, "router", "scheduler")
    if not isinstance(scheduler, dict):
        return None
    inline = get_path(scheduler, "config", "inline")
    if inline is not None:
        return raw_text(inline)
    pair = scheduler_config_flag(get_path(scheduler, "template", "containers"))
    return pair[1] if pair and pair[0] in CONFIG_TEXT_FLAGS else None


def raw_text(inline: Any) -> str:
    """A RawExtension's bytes: the JSON of what was written (a string stays a string, a mapping becomes JSON)."""
    if isinstance(inline, str):
        return inline
    import json

    return json.dumps(inline, separators=(",", ":"), sort_keys=True)


def has_plugin(spec: Spec, plugin: str) -> bool:
    text = inline_config_text(spec)
    if text is None:
        return False
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError:
        return False
    plugins = data.get("plugins") if isinstance(data, dict) else None
    return isinstance(plugins, list) and any(isinstance(p, dict) and p.get("type") == plugin for p in plugins)


def tokenizer_enabled(spec: Spec) -> bool:
    """``isTokenizerEnabled``."""
    scheduler = get_path(spec, "router", "scheduler")
    if not isinstance(scheduler, dict):
        return False
    return (
        scheduler.get("tokenizer") is not None or has_plugin(spec, TOKEN_PRODUCER) or has_plugin(spec, PRECISE_PREFIX)
    )


def _topology_presets(spec: Spec) -> list[str]:
    """The single-node / data-parallel / pipeline-parallel template(s) for decode and prefill."""

    def pick(workload: Mapping[str, Any], single: str, dp: str, pp: str) -> list[str]:
        if workload.get("worker") is None:
            return [single]
        if is_data_parallel(workload.get("parallelism")):
            return [dp]
        if is_pipeline_parallel(workload.get("parallelism")):
            return [pp]
        return []

    prefill = spec.get("prefill")
    if isinstance(prefill, dict):
        return pick(prefill, P.PREFILL_TEMPLATE, P.PREFILL_WORKER_DP, P.PREFILL_WORKER_PP) + pick(
            spec, P.DECODE_TEMPLATE, P.DECODE_WORKER_DP, P.DECODE_WORKER_PP
        )
    return pick(spec, P.TEMPLATE, P.WORKER_DP, P.WORKER_PP)


def preset_refs(svc: LLMService, resolved: Spec, options: LLMOptions) -> list[str]:
    """The well-known configs the resolved spec enables, in KServe's order (names pinned where pinned)."""

    def name(suffix: str) -> str:
        return P.pinned_name(svc, suffix, options)

    scheduler = get_path(resolved, "router", "scheduler")
    route = get_path(resolved, "router", "route")
    refs: list[str] = []
    if scheduler is not None and not pool_has_ref(resolved):
        refs.append(name(P.SCHEDULER))
    if scheduler is not None and tokenizer_enabled(resolved):
        refs.append(name(P.TOKENIZER))
    if has_plugin(resolved, LATENCY_PRODUCER):
        refs.append(name(P.LATENCY_PREDICTOR))
    if route is not None and not get_path(route, "http", "refs"):
        refs.append(options.config_prefix + P.ROUTER_ROUTE)  # never pinned: it follows the Gateway API provider
    if resolved.get("tracing") is not None:
        refs.append(name(P.TRACING))
    return refs + [name(s) for s in _topology_presets(resolved)]


def combine(
    svc: LLMService, store: ConfigStore, options: LLMOptions, configmaps: Mapping[tuple[str, str], dict[str, Any]]
) -> Combined:
    base_refs = [str((r or {}).get("name", "")) for r in svc.spec.get("baseRefs") or []]
    resolved = clone(svc.spec)
    for ref in base_refs:
        resolved = merge_specs(resolved, store.get(ref, svc.namespace).spec)
    model_name = get_path(resolved, "model", "name")
    if model_name:  # a baseRef's model.name replaces the defaulted one before anything renders (KServe quirk)
        svc.spec.setdefault("model", {})["name"] = model_name
    wells = preset_refs(svc, resolved, options)
    configs = [store.get(ref, svc.namespace) for ref in wells + base_refs]
    applied = [
        {"name": c.name, "namespace": c.namespace, "source": "Preset" if i < len(wells) else "UserRef"}
        for i, c in enumerate(configs)
    ]
    specs = [c.spec for c in configs] + [svc.spec]
    global_config = GlobalConfig(
        options.system_namespace,
        options.gateway_name,
        options.gateway_namespace,
        options.enable_tls,
        options.routing_header,
    )
    data = template_data(svc, svc.spec, global_config, f"{svc.namespace}/{_pool_name(specs, svc.name)}")
    spec = _merge_rendered(specs, data, keep_shared=not dra_enabled(svc))
    _default_pool_and_sa(svc, spec)
    inject_managed_dra(svc, spec)
    _fix_route(svc, spec)
    cm = _resolve_scheduler_config(svc, spec, configmaps)
    picker = get_path(spec, "router", "scheduler", "pool", "spec", "endpointPickerRef")
    if (
        isinstance(picker, dict)
        and not get_path(picker, "port", "number")
        and picker.get("kind", "") in ("Service", "")
    ):
        picker["port"] = {"number": 9002}
    return Combined(spec, applied, cm, given_configs=any(not c.embedded for c in configs))


def _pool_name(specs: list[Spec], name: str) -> str:
    """``InferencePoolName`` of the merged config: the last ``pool.ref.name`` set, else ``<name>-inference-pool``."""
    ref = ""
    for spec in specs:
        ref = str(get_path(spec, "router", "scheduler", "pool", "ref", "name") or ref)
    return ref or child_name(name, "-inference-pool")


def _merge_rendered(specs: list[Spec], data: Any, *, keep_shared: bool = False) -> Spec:
    """``MergeSpecs`` then ``ReplaceVariables``, as KServe orders them: the configs are merged once (shared by every
    service on the same configs), the service's spec over them field by field (a merged field shared by the services
    whose field is the same), then each field is rendered and the result copied for this service (see
    :func:`_own_copy`). Rendering string by string is the same as rendering the whole document whenever every string
    can be executed on its own (see ``render_spec``), else the whole document is."""
    *configs, own = specs
    try:
        fields = overlay(merged_configs(configs) if configs else {}, own)
        return _own_copy(render_fields(fields, data, {}), keep_shared)
    except Unbalanced:
        return replace_variables(merge_specs(*specs), data)


# Parts of the rendered spec left shared with the render caches (None: the value as a whole; a mapping: some of its
# fields): nothing changes them in place — every builder copies the pod or route it builds from, and ``_fix_route``
# copies the route before changing it.
_READ_ONLY: dict[str, Any] = {
    "template": None,
    "worker": None,
    "prefill": {"template": None, "worker": None},
    "router": {"route": None},
}


def _own_copy(spec: Spec, keep_shared: bool) -> Spec:
    """A copy of ``spec`` for one service to change; with ``keep_shared`` the ``_READ_ONLY`` parts stay shared (the
    managed-DRA injection, which changes the PodSpecs in place, asks for a full copy)."""
    return _copy_except(spec, _READ_ONLY) if keep_shared else clone(spec)


def _copy_except(node: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    """``node`` copied in one go but for the ``kept`` fields (field order kept)."""
    copied = clone({k: v for k, v in node.items() if k not in kept})
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in kept:
            out[key] = copied[key]
        elif kept[key] is None:
            out[key] = value
        else:
            out[key] = _copy_except(value, kept[key]) if isinstance(value, dict) else clone(value)
    return out


def _default_pool_and_sa(svc: LLMService, spec: Spec) -> None:
    pool_spec = get_path(spec, "router", "scheduler", "pool", "spec")
    if isinstance(pool_spec, dict) and not get_path(pool_spec, "selector", "matchLabels"):
        pool_spec.setdefault("selector", {})["matchLabels"] = workload_selector(svc.name)
    template = get_path(spec, "router", "scheduler", "template")
    if isinstance(template, dict) and not template.get("serviceAccountName"):
        template["serviceAccountName"] = child_name(svc.name, "-epp-sa")


def _backend_refs(spec: Spec) -> list[dict[str, Any]]:
    rules = get_path(spec, "router", "route", "http", "spec", "rules") or []
    return [
        ref
        for rule in rules
        if isinstance(rule, dict)
        for ref in rule.get("backendRefs") or []
        if isinstance(ref, dict)
    ]


def is_default_pool_ref(ref: Mapping[str, Any], name: str) -> bool:
    return ref.get("kind") == "InferencePool" and ref.get("name") == child_name(name, "-inference-pool")


def _fix_route(svc: LLMService, spec: Spec) -> None:
    route_spec = get_path(spec, "router", "route", "http", "spec")
    if not isinstance(route_spec, dict):
        return
    gateways = get_path(spec, "router", "gateway", "refs")
    scheduler = get_path(spec, "router", "scheduler")
    rewrite = scheduler is None or pool_has_ref(spec)
    if not gateways and not (rewrite and any(is_default_pool_ref(r, svc.name) for r in _backend_refs(spec))):
        return
    spec["router"]["route"] = clone(spec["router"]["route"])  # shared with the render caches until now
    route_spec = spec["router"]["route"]["http"]["spec"]
    if gateways:
        route_spec["parentRefs"] = [_parent_ref(g) for g in gateways if isinstance(g, dict)]
    for ref in _backend_refs(spec):
        if not is_default_pool_ref(ref, svc.name):
            continue
        if scheduler is None:
            ref.update(group="", kind="Service", name=workload_service(svc.name))
        elif pool_has_ref(spec):
            ref["name"] = get_path(spec, "router", "scheduler", "pool", "ref", "name")


def _parent_ref(ref: Mapping[str, Any]) -> dict[str, Any]:
    """``ToParentRefs``: a Gateway parentRef; namespace only when the ref names one."""
    out: dict[str, Any] = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": ref.get("name", "")}
    if ref.get("namespace"):
        out["namespace"] = ref["namespace"]
    if ref.get("sectionName"):
        out["sectionName"] = ref["sectionName"]
    return out


def _resolve_scheduler_config(
    svc: LLMService, spec: Spec, configmaps: Mapping[tuple[str, str], dict[str, Any]]
) -> tuple[str, str] | None:
    config = get_path(spec, "router", "scheduler", "config")
    ref = config.get("ref") if isinstance(config, dict) else None
    if not isinstance(ref, dict):
        return None
    name = str(ref.get("name", ""))
    found = configmaps.get((svc.namespace, name))
    if found is None and name.startswith("config-scheduler-"):
        found = configmaps.get((P.SYSTEM_NAMESPACE, name))
    if found is None:
        where = f"[{svc.namespace} {P.SYSTEM_NAMESPACE}]" if name.startswith("config-scheduler-") else svc.namespace
        raise InputError(
            f"ConfigMap {name!r} (scheduler config) not found in namespaces {where}: give it as an input",
            "spec.router.scheduler.config.ref.name",
        )
    key = str(ref.get("key") or "epp")
    meta = found.get("metadata") or {}
    data = found.get("data") or {}
    if key not in data:
        raise InputError(
            f"ConfigMap {meta.get('namespace', svc.namespace)}/{name} doesn't have key {key!r} in data",
            "spec.router.scheduler.config.ref.key",
        )
    config["inline"] = str(data[key])
    config.pop("ref", None)
    return (str(meta.get("namespace") or svc.namespace), name)


__all__ = ["POOL_GROUP_V1ALPHA2", "Combined", "combine"]
