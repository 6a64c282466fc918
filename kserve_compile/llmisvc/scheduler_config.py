"""The endpoint picker's ``--config-text``: KServe's default EndpointPickerConfig and its version-gated migrations.

Mirrors ``schedulerConfigText``, ``preserveSchedulerConfig`` and ``schedulerTransform`` (with the migrations it
runs: plugin renames, ``hashBlockSize`` removal, disagg decider migration, core-metrics-extractor and
metrics-data-source injection, prefix-cache-scorer parameter cleanup, the ``llm-d.ai`` API version) in
``pkg/controller/v1alpha2/llmisvc/scheduler.go``. A parseable config text is always written back as
``sigs.k8s.io/yaml`` writes it: keys sorted, block style.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import yaml

from ..errors import InputError

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Mutator = Callable[[dict[str, Any]], None]
LORA_SCORER = "lora-affinity-scorer"
CORE_METRICS_OLD, CORE_METRICS = "model-server-protocol-metrics", "core-metrics-extractor"
METRICS_DATA_SOURCE = "metrics-data-source"
PREFIX_CACHE_SCORER = "prefix-cache-scorer"
PRECISE_PREFIX = "precise-prefix-cache-scorer"
DEPRECATED_METRIC_FLAGS = {
    "total-queued-requests-metric": "queuedRequestsSpec",
    "total-running-requests-metric": "runningRequestsSpec",
    "kv-cache-usage-percentage-metric": "kvUsageSpec",
    "lora-info-metric": "loraSpec",
    "cache-info-metric": "cacheInfoSpec",
}
MODEL_SERVER_METRIC_FLAGS = ("model-server-metrics-scheme", "model-server-metrics-path", "model-server-metrics-port",
                             "model-server-metrics-https-insecure-skip-verify")  # fmt: skip
TEXT_FLAGS = ("--config-text", "-config-text", "--configText", "-configText")


def default_config_text(pd: bool, lora: bool) -> str:
    """``schedulerConfigText`` with no inline config: the single-profile or the prefill/decode default."""
    lora_plugin = f"- type: {LORA_SCORER}\n" if lora else ""
    lora_entry = f"  - pluginRef: {LORA_SCORER}\n    weight: 4\n" if lora else ""
    if pd:
        return (
            "\napiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n- type: disagg-headers-handler\n"
            "- type: prefill-filter\n- type: decode-filter\n- type: queue-scorer\n- type: kv-cache-utilization-scorer\n"
            "- type: active-request-scorer\n- type: prefix-cache-scorer\n- type: max-score-picker\n"
            "- type: always-disagg-pd-decider\n- type: disagg-profile-handler\n  parameters:\n    deciders:\n"
            f"      prefill: always-disagg-pd-decider\n{lora_plugin}schedulingProfiles:\n- name: prefill\n  plugins:\n"
            f"  - pluginRef: prefill-filter\n{lora_entry}  - pluginRef: prefix-cache-scorer\n    weight: 3\n"
            "  - pluginRef: queue-scorer\n    weight: 2\n  - pluginRef: kv-cache-utilization-scorer\n    weight: 2\n"
            f"  - pluginRef: max-score-picker\n- name: decode\n  plugins:\n  - pluginRef: decode-filter\n{lora_entry}"
            "  - pluginRef: active-request-scorer\n    weight: 2\n  - pluginRef: prefix-cache-scorer\n    weight: 3\n"
            "  - pluginRef: max-score-picker\n"
        )
    return (
        "\napiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n- type: single-profile-handler\n"
        "- type: queue-scorer\n- type: kv-cache-utilization-scorer\n- type: prefix-cache-scorer\n- type: no-hit-lru-scorer\n"
        f"- type: max-score-picker\n{lora_plugin}schedulingProfiles:\n- name: default\n  plugins:\n{lora_entry}"
        "  - pluginRef: queue-scorer\n    weight: 2\n  - pluginRef: kv-cache-utilization-scorer\n    weight: 2\n"
        "  - pluginRef: prefix-cache-scorer\n    weight: 3\n  - pluginRef: no-hit-lru-scorer\n    weight: 2\n"
        "  - pluginRef: max-score-picker\n"
    )


# --- sigs.k8s.io/yaml output --------------------------------------------------------------------------------------
class _GoYamlDumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    resolved = dumper.resolve(yaml.ScalarNode, value, (True, False))
    style = '"' if resolved != "tag:yaml.org,2002:str" else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_GoYamlDumper.add_representer(str, _str)


def go_yaml(value: Any) -> str:
    return yaml.dump(value, Dumper=_GoYamlDumper, default_flow_style=False, sort_keys=True, allow_unicode=True)


# --- migrations ---------------------------------------------------------------------------------------------------
def _plugins(cfg: dict[str, Any]) -> list[Any]:
    value = cfg.get("plugins")
    return value if isinstance(value, list) else []


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def rename_plugin(old: str, new: str) -> Mutator:
    def mutate(cfg: dict[str, Any]) -> None:
        for plugin in _plugins(cfg):
            if isinstance(plugin, dict):
                for key in ("type", "name"):
                    if plugin.get(key) == old:
                        plugin[key] = new
        for profile in _list(cfg.get("schedulingProfiles")):
            for ref in _list(profile.get("plugins")) if isinstance(profile, dict) else []:
                if isinstance(ref, dict) and ref.get("pluginRef") == old:
                    ref["pluginRef"] = new

    return mutate


def remove_hash_block_size(cfg: dict[str, Any]) -> None:
    for plugin in _plugins(cfg):
        params = plugin.get("parameters") if isinstance(plugin, dict) else None
        if isinstance(params, dict):
            params.pop("hashBlockSize", None)


def migrate_disagg_params(cfg: dict[str, Any]) -> None:
    """``WithMigrateDisaggProfileParams``: ``deciderPluginName``/``threshold`` become a ``deciders`` map."""
    plugins = _plugins(cfg)
    inject: list[dict[str, Any]] = []
    handler = -1
    for i, plugin in enumerate(plugins):
        if not isinstance(plugin, dict) or plugin.get("type") not in ("disagg-profile-handler", "pd-profile-handler"):
            continue
        handler = i if handler == -1 else handler
        params = plugin.get("parameters") if isinstance(plugin.get("parameters"), dict) else None
        if params is None or "deciders" in params:
            continue
        if "deciderPluginName" in params:
            params["deciders"] = {"prefill": params.pop("deciderPluginName")}
            params.pop("threshold", None)
        elif "threshold" in params:
            threshold = params.pop("threshold")
            if str(threshold) == "0":
                params["deciders"] = {"prefill": "always-disagg-pd-decider"}
                inject.append({"type": "always-disagg-pd-decider"})
            else:
                params["deciders"] = {"prefill": "prefix-based-pd-decider"}
                inject.append(
                    {"type": "prefix-based-pd-decider", "parameters": {"nonCachedTokens": _non_cached(threshold)}}
                )
    inserted = 0
    for entry in inject:
        if not any(isinstance(p, dict) and p.get("type") == entry["type"] for p in plugins):
            plugins.insert(handler + inserted, entry)
            inserted += 1


def _non_cached(value: Any) -> int:
    try:
        return max(1, math.ceil(float(value) / 4.0))
    except (TypeError, ValueError):
        return 1


def remove_prefix_cache_params(cfg: dict[str, Any]) -> None:
    for plugin in _plugins(cfg):
        if (
            not isinstance(plugin, dict)
            or plugin.get("type") != PREFIX_CACHE_SCORER
            or not isinstance(plugin.get("parameters"), dict)
        ):
            continue
        params = {k: v for k, v in plugin["parameters"].items() if k == "prefixMatchInfoProducerName"}
        if params:
            plugin["parameters"] = params
        else:
            del plugin["parameters"]


def migrate_api_version(cfg: dict[str, Any]) -> None:
    if cfg.get("apiVersion") == "inference.networking.x-k8s.io/v1alpha1":
        cfg["apiVersion"] = "llm-d.ai/v1alpha1"


def add_core_metrics_plugin(extracted: dict[str, str]) -> Mutator:
    def mutate(cfg: dict[str, Any]) -> None:
        if not extracted or any(
            isinstance(p, dict) and p.get("type") in (CORE_METRICS_OLD, CORE_METRICS) for p in _plugins(cfg)
        ):
            return
        engine = {
            "name": "vllm",
            **{field: extracted[flag] for flag, field in DEPRECATED_METRIC_FLAGS.items() if flag in extracted},
        }
        params = {
            "defaultEngine": "vllm",
            "engineConfigs": [engine],
            "engineLabelKey": "inference.networking.k8s.io/engine-type",
        }
        cfg["plugins"] = [*_plugins(cfg), {"name": CORE_METRICS_OLD, "parameters": params, "type": CORE_METRICS_OLD}]

    return mutate


def add_metrics_data_source(params: dict[str, Any]) -> Mutator:
    def mutate(cfg: dict[str, Any]) -> None:
        if not any(isinstance(p, dict) and p.get("type") == METRICS_DATA_SOURCE for p in _plugins(cfg)):
            cfg["plugins"] = [*_plugins(cfg), {"parameters": params, "type": METRICS_DATA_SOURCE}]

    return mutate


def filter_flags(args: list[str], names: Any) -> tuple[list[str], dict[str, str]]:
    """``filterArgs``: drop ``--name[=value]`` (and a following bare value) for each name; return what was dropped."""
    kept: list[str] = []
    found: dict[str, str] = {}
    i = 0
    while i < len(args):
        name = args[i].lstrip("-")
        name, eq, value = name.partition("=")
        if name not in names:
            kept.append(args[i])
            i += 1
            continue
        if not eq and i + 1 < len(args) and not args[i + 1].startswith("-"):
            value = args[i + 1]
            i += 1
        found[name] = value
        i += 1
    return kept, found


def _version(text: str) -> tuple[int, int, int]:
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", text)
    if not match:
        raise InputError(
            f'failed to parse version "{text}"', "spec.router.scheduler.annotations[app.kubernetes.io/version]"
        )
    return int(match[1]), int(match[2]), int(match[3])


def transform(pod: dict[str, Any], version_text: str, deployment_name: str, tokenizer_url: str | None = None) -> None:
    """``schedulerTransform``: run the migrations for the EPP version on the ``main`` container's config text
    (``tokenizer_url``: the tokenizer Service when the tokenizer is enabled)."""
    version = _version(version_text or "0.0.0")
    if version < (0, 7, 0):
        return
    main = next((c for c in pod.get("containers") or [] if c.get("name") == "main"), None)
    args = (main or {}).get("args") or []
    writable = any(args[i] in TEXT_FLAGS for i in range(len(args) - 1))
    if not writable and _has_flags(pod, DEPRECATED_METRIC_FLAGS):
        raise InputError(f"scheduler deployment {deployment_name} uses deprecated metric flags but has no inline --config-text; "
                         "automatic migration to core-metrics-extractor plugin is not possible — convert to --config-text "
                         "or remove the deprecated flags manually", "spec.router.scheduler.template")  # fmt: skip
    deprecated = _strip_flags(pod, DEPRECATED_METRIC_FLAGS, ("args",)) if writable else {}
    source: dict[str, Any] = {}
    if version >= (0, 10, 0):
        params = _strip_flags(pod, MODEL_SERVER_METRIC_FLAGS, ("command", "args"))
        params.pop("model-server-metrics-port", None)
        if params and not writable:
            flags = ", ".join(sorted("--" + k for k in params))
            raise InputError(
                f"scheduler deployment {deployment_name} sets deprecated {flags} but has no inline --config-text; "
                "automatic migration to the metrics-data-source plugin is not possible",
                "spec.router.scheduler.template",
            )
        source = _data_source_params(params)
    if main is None or not writable:
        return
    args = main["args"]
    for i in range(len(args) - 1):
        if args[i] in TEXT_FLAGS:
            migrated = migrate_config_text(args[i + 1], version, tuple(sorted(deprecated.items())), tuple(sorted(source.items())),
                                           tokenizer_url)  # fmt: skip
            if migrated is None:
                return
            args[i + 1], keeps_tokenizer = migrated
            if version >= (0, 9, 0) and not keeps_tokenizer:
                pod["containers"] = [c for c in pod.get("containers") or [] if c.get("name") != "tokenizer"]


@lru_cache(maxsize=256)
def migrate_config_text(text: str, version: tuple[int, int, int], deprecated: tuple[tuple[str, str], ...],
                        source: tuple[tuple[str, Any], ...], tokenizer_url: str | None = None) -> tuple[str, bool] | None:  # fmt: skip
    """The migrated text, and whether the precise-prefix scorer (which needs the tokenizer sidecar) is configured;
    None when the text is no YAML object (left as written)."""
    try:
        cfg = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError:
        return None
    if not isinstance(cfg, dict):
        return None
    mutators: list[Mutator] = [rename_plugin("prefill-header-handler", "disagg-headers-handler"),
                               rename_plugin("pd-profile-handler", "disagg-profile-handler"), migrate_disagg_params,
                               remove_hash_block_size, add_core_metrics_plugin(dict(deprecated))]  # fmt: skip
    if version >= (0, 8, 0):
        mutators.append(rename_plugin(CORE_METRICS_OLD, CORE_METRICS))
    precise = [True]  # the tokenizer sidecar stays unless the 0.9 migration finds no precise-prefix scorer

    def probe(config: dict[str, Any]) -> None:
        precise[0] = any(isinstance(p, dict) and p.get("type") == PRECISE_PREFIX for p in _plugins(config))

    if version >= (0, 9, 0):
        mutators += [remove_prefix_cache_params, probe, migrate_api_version]
        if tokenizer_url is not None:
            mutators += [decompose_precise_prefix(tokenizer_url), inject_token_producer(tokenizer_url)]
    if source:
        mutators.append(add_metrics_data_source(dict(source)))
    for mutate in mutators:
        mutate(cfg)
    return go_yaml(cfg), precise[0]


TOKEN_PRODUCER = "token-producer"
PRECISE_PREFIX_PRODUCER = "precise-prefix-cache-producer"
TOKENIZER_MODEL = "/mnt/models/base"


def inject_token_producer(url: str) -> Mutator:
    """``withInjectTokenProducerConfig``: a token-producer's model name and tokenizer URL, unless already set."""

    def mutate(cfg: dict[str, Any]) -> None:
        for plugin in _plugins(cfg):
            if not isinstance(plugin, dict) or plugin.get("type") != TOKEN_PRODUCER:
                continue
            params = plugin["parameters"] = given if isinstance(given := plugin.get("parameters"), dict) else {}
            params.setdefault("modelName", TOKENIZER_MODEL)
            vllm = params["vllm"] = found if isinstance(found := params.get("vllm"), dict) else {}
            vllm.setdefault("url", url)

    return mutate


def _producer_params(old: dict[str, Any]) -> dict[str, Any] | None:
    """``migrateProducerParams``: the old scorer's parameters minus the tokenizer pool; tokenProcessorConfig promoted."""
    params = given if isinstance(given := old.get("parameters"), dict) else {}
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key != "indexerConfig":
            out[key] = value
            continue
        if not isinstance(value, dict):
            continue
        cleaned = {k: v for k, v in value.items() if k not in ("tokenizersPoolConfig", "tokenProcessorConfig")}
        if "tokenProcessorConfig" in value and "tokenProcessorConfig" not in params:
            out["tokenProcessorConfig"] = value["tokenProcessorConfig"]
        if cleaned:
            out[key] = cleaned
    return out or None


def decompose_precise_prefix(url: str) -> Mutator:
    """``withDecomposePrecisePrefixCacheScorer``: the monolithic scorer becomes token-producer,
    precise-prefix-cache-producer and prefix-cache-scorer, in its place; profiles refer to the scorer once."""

    def mutate(cfg: dict[str, Any]) -> None:
        plugins = _plugins(cfg)
        idx = next((i for i, p in enumerate(plugins) if isinstance(p, dict) and p.get("type") == PRECISE_PREFIX), -1)
        if idx < 0:
            return
        producer: dict[str, Any] = {"type": PRECISE_PREFIX_PRODUCER}
        params = _producer_params(plugins[idx])
        if params:
            producer["parameters"] = params
        new = [{"type": TOKEN_PRODUCER, "parameters": {"modelName": TOKENIZER_MODEL, "vllm": {"url": url}}}, producer,
               {"type": PREFIX_CACHE_SCORER, "parameters": {"prefixMatchInfoProducerName": PRECISE_PREFIX_PRODUCER}}]  # fmt: skip
        remaining = [
            p
            for i, p in enumerate(plugins)
            if i != idx and not (isinstance(p, dict) and p.get("type") == PREFIX_CACHE_SCORER)
        ]
        at = min(idx, len(remaining))
        cfg["plugins"] = remaining[:at] + new + remaining[at:]
        for profile in _list(cfg.get("schedulingProfiles")):
            if isinstance(profile, dict) and isinstance(profile.get("plugins"), list):
                profile["plugins"] = _dedupe_scorer(profile["plugins"])

    return mutate


def _dedupe_scorer(refs: list[Any]) -> list[Any]:
    out, seen = [], False
    for ref in refs:
        if isinstance(ref, dict) and ref.get("pluginRef") == PRECISE_PREFIX:
            ref["pluginRef"] = PREFIX_CACHE_SCORER
        if isinstance(ref, dict) and ref.get("pluginRef") == PREFIX_CACHE_SCORER:
            if seen:
                continue
            seen = True
        out.append(ref)
    return out


def _has_flags(pod: dict[str, Any], names: Any) -> bool:
    return any(
        a.lstrip("-").partition("=")[0] in names for c in pod.get("containers") or [] for a in c.get("args") or []
    )


def _strip_flags(pod: dict[str, Any], names: Any, fields: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for container in pod.get("containers") or []:
        for key in fields:
            kept, dropped = filter_flags(list(container.get(key) or []), names)
            if dropped:
                container[key] = kept
                found.update(dropped)
    return found


def _data_source_params(flags: dict[str, str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if flags.get("model-server-metrics-scheme"):
        params["scheme"] = flags["model-server-metrics-scheme"]
    if flags.get("model-server-metrics-path"):
        params["path"] = flags["model-server-metrics-path"]
    if "model-server-metrics-https-insecure-skip-verify" in flags:
        raw = flags["model-server-metrics-https-insecure-skip-verify"]
        params["insecureSkipVerify"] = True if raw == "" else raw.lower() in ("1", "t", "true")
    return params
