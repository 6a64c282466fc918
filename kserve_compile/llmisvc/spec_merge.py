"""``MergeSpecs``: LLMInferenceServiceSpecs layered by strategic merge patch.

Mirrors ``mergeSpecs`` in ``pkg/controller/v1alpha2/llmisvc/config_merge.go``: each override becomes a two-way
strategic patch from the zero spec and is applied onto the base with the ``LLMInferenceServiceSpec`` patch tags.
Only Kubernetes core types carry merge keys, so PodSpecs (``template``, ``worker``, the prefill ones, the scheduler
and tokenizer templates) merge containers, volumes, env … by key (``kserve_compile.kube.merge``); every other list
(HTTPRoute rules, InferencePool target ports, KEDA triggers, baseRefs) is replaced; maps merge per key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ..datacopy import clone
from ..kube.merge import CONTAINER_LIST_KEYS, POD_SPEC_LIST_KEYS, strategic_merge
from ..provenance import is_tracing
from .llm_types import Spec

POD_LIST_KEYS = {**POD_SPEC_LIST_KEYS, "topologySpreadConstraints": "topologyKey"}

# where PodSpecs sit in an LLMInferenceServiceSpec
_POD_SPECS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("template",),
        ("worker",),
        ("prefill", "template"),
        ("prefill", "worker"),
        ("router", "scheduler", "template"),
        ("router", "scheduler", "tokenizer", "template"),
    }
)
_PREFIXES = frozenset(p[:i] for p in _POD_SPECS for i in range(1, len(p)))


def merge_specs(*specs: Spec) -> Spec:
    """``MergeSpecs(cfgs...)``: the first spec with each later one merged over it, in order; a new spec that shares
    nothing with its inputs, which are not changed."""
    if len(specs) < 2:
        return clone(specs[0]) if specs else {}
    made = _Made()
    out = specs[0]
    for override in specs[1:]:
        out = _merge(out, override, (), made)
    return made.owned(out)


class _Made:
    """The containers a merge built, so that each part of the inputs is copied once, at the end: ``deep`` ones are
    private all the way down (copies, strategic merges), ``shallow`` ones are new dicts whose values may still be the
    inputs' own. Each is kept alive with its entry, so ids stay their own."""

    def __init__(self) -> None:
        self._built: dict[int, tuple[bool, Any]] = {}

    def shallow(self, node: dict[str, Any]) -> dict[str, Any]:
        self._built[id(node)] = (False, node)
        return node

    def deep(self, node: Any) -> Any:
        self._built[id(node)] = (True, node)
        return node

    def owned(self, node: Any) -> Any:
        """``node`` with every part the merge did not build copied."""
        entry = self._built.get(id(node))
        if entry is None:
            return clone(node)
        if not entry[0]:
            for key, value in node.items():
                if isinstance(value, (dict, list, tuple)):
                    node[key] = self.owned(value)
        return node


_BASES: dict[tuple[int, ...], tuple[tuple[Spec, ...], Spec]] = {}  # the specs kept with their entry: ids stay theirs


def merged_configs(specs: Sequence[Spec]) -> Spec:
    """``merge_specs(*specs)`` of configs nothing mutates (shipped presets, a run's LLMInferenceServiceConfigs),
    remembered by identity: every service on the same presets shares one result, which callers must not mutate
    (``merge_specs`` copies what it takes from it)."""
    key = tuple(map(id, specs))
    hit = _BASES.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], specs, strict=True)):
        return hit[1]
    out = merge_specs(*specs)
    if len(_BASES) >= 256:
        _BASES.clear()
    _BASES[key] = (tuple(specs), out)
    return out


_FIELDS: dict[tuple[int, str, bytes], tuple[Spec, Any]] = {}  # the base kept with its entry, so its id stays its own
_SEEN: set[tuple[int, str, bytes]] = set()  # fields met once (their base is kept alive by _BASES or _KEYED)
_KEYED: dict[tuple[int, str], tuple[Spec, bool]] = {}
_CONTAINER_LISTS = {name: CONTAINER_LIST_KEYS for name in ("containers", "initContainers", "ephemeralContainers")}


class Split:
    """A field to render from the base's side alone and then merge the service's (template-free) side over: the
    same result as merging first whenever no merge key of the base's PodSpecs is templated, without building a
    merged field that no other service would share."""

    __slots__ = ("base", "own", "key")

    def __init__(self, base: Any, own: dict[str, Any], key: str) -> None:
        self.base, self.own, self.key = base, own, key

    def merge(self, rendered_base: Any) -> Any:
        return merge_specs({self.key: rendered_base}, {self.key: self.own})[self.key]


def overlay(base: Spec, own: Spec) -> dict[str, tuple[Any, bool]]:
    """``MergeSpecs(base, own)`` field by field and without copying: each top-level field's value, and whether it is
    shared — the base's own value, or the merge of the base's field with an own field of the same JSON, remembered
    (from its second service on) for every service that has it; a field met for the first time may come as a
    :class:`Split` instead. ``base`` must be one nothing mutates (see :func:`merged_configs`); so must the caller,
    with every value returned."""
    out: dict[str, tuple[Any, bool]] = {key: (value, True) for key, value in base.items()}
    for key, value in own.items():
        current = base.get(key)
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(current, dict):
            out[key] = _merged_field(base, key, value)
        else:
            out[key] = (value, False)
    return out


def _merged_field(base: Spec, key: str, value: dict[str, Any]) -> tuple[Any, bool]:
    if is_tracing():  # the service's leaves carry their origins: nothing of this render is shared
        return merge_specs({key: base[key]}, {key: value})[key], False
    try:
        text = orjson.dumps(value)
    except (TypeError, ValueError):  # not JSON-shaped (e.g. an integer beyond 64 bits): merged, not remembered
        return merge_specs({key: base[key]}, {key: value})[key], False
    cache_key = (id(base), key, text)
    hit = _FIELDS.get(cache_key)
    if hit is not None and hit[0] is base:
        return hit[1], True
    if cache_key not in _SEEN and b"{{" not in text and not _keyed_templates(base, key):
        if len(_SEEN) >= 4096:
            _SEEN.clear()
        _SEEN.add(cache_key)
        return Split(base[key], value, key), True
    merged = merge_specs({key: base[key]}, {key: value})[key]
    if len(_FIELDS) >= 1024:
        _FIELDS.clear()
    _FIELDS[cache_key] = (base, merged)
    return merged, True


def _keyed_templates(base: Spec, key: str) -> bool:
    """Whether a PodSpec in ``base[key]`` has a templated merge key (then rendering before the merge could match
    list items differently from KServe's merge-then-render)."""
    hit = _KEYED.get((id(base), key))
    if hit is not None and hit[0] is base:
        return hit[1]
    found = False
    for path in _POD_SPECS:
        if path[0] == key:
            pod: Any = base
            for part in path:
                pod = pod.get(part) if isinstance(pod, dict) else None
            found = found or (isinstance(pod, dict) and _templated_keys(pod, POD_LIST_KEYS))
    if len(_KEYED) >= 1024:
        _KEYED.clear()
    _KEYED[(id(base), key)] = (base, found)
    return found


def _templated_keys(node: dict[str, Any], list_keys: dict[str, str]) -> bool:
    for name, merge_key in list_keys.items():
        items = node.get(name)
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            value = item.get(merge_key)
            if isinstance(value, str) and "{{" in value:
                return True
            nested = _CONTAINER_LISTS.get(name)
            if nested is not None and _templated_keys(item, nested):
                return True
    return False


def _merge(base: dict[str, Any], patch: dict[str, Any], path: tuple[str, ...], made: _Made) -> dict[str, Any]:
    out = made.shallow(dict(base))
    for key, value in patch.items():
        here = (*path, key)
        current = out.get(key)
        if value is None:
            out.pop(key, None)
        elif here in _POD_SPECS and isinstance(value, dict) and isinstance(current, dict):
            out[key] = made.deep(strategic_merge(current, value, POD_LIST_KEYS))
        elif isinstance(value, dict) and isinstance(current, dict):
            out[key] = _merge(current, value, here, made) if here in _PREFIXES else _merge_plain(current, value, made)
        else:
            out[key] = made.deep(clone(value))
    return out


def _merge_plain(base: dict[str, Any], patch: dict[str, Any], made: _Made) -> dict[str, Any]:
    out = made.shallow(dict(base))
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge_plain(out[key], value, made)
        else:
            out[key] = made.deep(clone(value))
    return out
