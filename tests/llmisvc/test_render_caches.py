"""What the render caches share (merged presets, merged fields, rendered subtrees, template plans) never reaches an
output: every rendered object is its own, changing one changes no other object nor a later render, and the shipped
presets stay as shipped."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import yaml

from kserve_compile.emit import dump_yaml
from kserve_compile.inputs.parse import parse_paths
from kserve_compile.llmisvc import presets as P

from .helpers import container, find, llmisvc, render

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from llm_workload import llmisvcs  # noqa: E402

DRA = {"serving.kserve.io/exp-dra-device-class": "gpu.nvidia.com"}


def _containers(value: Any, owner: str, seen: dict[int, str]) -> None:
    """Every dict and list under ``value``, by id; a second owner of one is a failure."""
    if isinstance(value, (dict, list)):
        assert id(value) not in seen, f"{owner} shares a {type(value).__name__} with {seen[id(value)]}"
        seen[id(value)] = owner
        for item in value.values() if isinstance(value, dict) else value:
            _containers(item, owner, seen)


def _assert_unshared(objects: list[dict[str, Any]]) -> None:
    seen: dict[int, str] = {}
    for obj in objects:
        _containers(obj, f"{obj['kind']} {obj['metadata'].get('namespace')}/{obj['metadata']['name']}", seen)


def test_objects_share_nothing_across_services_and_renders() -> None:
    manifests = llmisvcs(12)
    first = render(*manifests)
    second = render(*manifests)
    _assert_unshared(first + second)
    assert dump_yaml(first) == dump_yaml(second)


def test_changing_an_output_changes_no_later_render() -> None:
    manifests = llmisvcs(6)
    before = dump_yaml(render(*manifests))
    for obj in render(*manifests):  # scribble over every pod and route a render gave out
        pod = (obj.get("spec") or {}).get("template", {}).get("spec")
        if isinstance(pod, dict):
            for c in pod.get("containers") or []:
                c.setdefault("args", []).append("--scribbled")
                c.setdefault("env", []).append({"name": "SCRIBBLED", "value": "1"})
            pod.setdefault("volumes", []).clear()
        if obj["kind"] == "HTTPRoute":
            obj["spec"]["rules"].clear()
    assert dump_yaml(render(*manifests)) == before


def test_merged_spec_is_the_services_own(monkeypatch: Any) -> None:
    # everything but the PodSpecs and the route (read-only, shared) is the service's to change: scribbling over it
    # all changes no later render
    from kserve_compile.llmisvc import render as R

    specs: list[dict[str, Any]] = []
    real = R.combine

    def combine(*args: Any, **kwargs: Any) -> Any:
        combined = real(*args, **kwargs)
        specs.append(combined.spec)
        return combined

    manifests = llmisvcs(6)
    before = dump_yaml(render(*manifests))
    monkeypatch.setattr(R, "combine", combine)
    render(*manifests)
    monkeypatch.undo()
    assert len(specs) == 6
    for spec in specs:
        for key, value in list(spec.items()):
            if key == "prefill":
                value = {k: v for k, v in value.items() if k not in ("template", "worker")}
            elif key == "router":
                value = {k: v for k, v in value.items() if k != "route"}
            if key not in ("template", "worker"):
                _scribble(value)
    assert dump_yaml(render(*manifests)) == before


def test_route_fix_ups_copy_the_shared_route() -> None:
    # the route stays shared with the render caches until a fix-up changes it: then it is copied first
    from kserve_compile.llmisvc.combine import _fix_route
    from kserve_compile.llmisvc.llm_types import LLMService

    shared_route = {
        "http": {"spec": {"rules": [{"backendRefs": [{"kind": "InferencePool", "name": "x-inference-pool"}]}]}}
    }
    before = orjson.dumps(shared_route)
    svc = LLMService("x", "ns", {}, {}, {}, {}, None)  # type: ignore[arg-type]
    for router in ({"gateway": {"refs": [{"name": "gw"}]}}, {}):  # with a Gateway; with no scheduler
        spec: dict[str, Any] = {"router": {**router, "route": shared_route}}
        _fix_route(svc, spec)
        assert spec["router"]["route"] is not shared_route
        assert orjson.dumps(shared_route) == before
    spec = {"router": {"route": shared_route, "scheduler": {}}}  # nothing to change: nothing copied
    _fix_route(svc, spec)
    assert spec["router"]["route"] is shared_route


def _scribble(value: Any) -> None:
    if isinstance(value, dict):
        for item in list(value.values()):
            _scribble(item)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            _scribble(item)
        value.append("scribbled")


def test_managed_dra_stays_with_its_service() -> None:
    # the DRA injection changes PodSpecs in place: the same service rendered again without it (same cache keys)
    # must not keep the claims, nor a neighbour on the same presets get them
    with_dra = llmisvc("svc", "ns")
    with_dra["metadata"]["annotations"] = dict(DRA)
    plain = llmisvc("svc", "ns")
    for first, then in ((with_dra, plain), (plain, with_dra), (with_dra, plain)):
        claimed = find(render(first, llmisvc("other", "ns")), "Deployment", "svc-kserve")["spec"]["template"]["spec"]
        assert ("resourceClaims" in claimed) == (first is with_dra)
        pod = find(render(then), "Deployment", "svc-kserve")["spec"]["template"]["spec"]
        assert ("resourceClaims" in pod) == (then is with_dra)
        assert ("claims" in container(pod).get("resources", {})) == (then is with_dra)
        neighbour = find(render(with_dra, llmisvc("other", "ns")), "Deployment", "other-kserve")
        assert "resourceClaims" not in neighbour["spec"]["template"]["spec"]


def test_shipped_presets_unchanged_after_rendering() -> None:
    render(*llmisvcs(9))
    for name in ("llm-preset-template", "llm-preset-worker-data-parallel", "llm-preset-decode-prefill-template"):
        render_golden(name)
    data = ROOT / "kserve_compile" / "data" / "llmisvc"
    for path in sorted(data.glob("config-llm-*.yaml")):
        preset = P.embedded_preset(P.SHIPPED_PREFIX + path.stem)
        assert preset is not None
        shipped = yaml.safe_load(path.read_text("utf-8"))["spec"]
        assert orjson.dumps(preset.spec) == orjson.dumps(_drop_nulls(shipped)), path.name


def render_golden(name: str) -> None:
    from kserve_compile.driver import compile as compile_documents

    scenario = ROOT / "golden" / name
    assert dump_yaml(compile_documents(parse_paths([str(scenario / "input.yaml")])).objects) == (
        scenario / "expected.yaml"
    ).read_text("utf-8")


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def test_explain_after_a_plain_render_keeps_the_inputs_origins() -> None:
    # a merged field remembered by a plain render must not stand in for the traced one explain builds
    from kserve_compile.api import CompileOptions, render_files, render_result
    from kserve_compile.emit.explain import annotated_yaml

    src = str(ROOT / "golden" / "llm-preset-template" / "input.yaml")
    render_files([src])
    annotated = annotated_yaml(render_result([src], options=CompileOptions(trace=True)).objects)
    line = next(i for i, text in enumerate(Path(src).read_text("utf-8").splitlines(), 1) if "nvidia.com/gpu" in text)
    gpu = [text for text in annotated.splitlines() if text.strip().startswith("nvidia.com/gpu:")]
    assert gpu and all(text.endswith(f"input.yaml:{line}:11)") for text in gpu), gpu


def test_first_and_later_renders_of_a_field_agree() -> None:
    # a field met for the first time is rendered before the service's side is merged over it, later ones are merged
    # first and shared: the bytes must not tell which
    unique = llmisvc("first-seen", "ns", template={"containers": [{"name": "main", "args": ["--seen=once"]}]})
    assert dump_yaml(render(unique)) == dump_yaml(render(unique)) == dump_yaml(render(unique))


def test_a_templated_merge_key_merges_before_rendering_as_kserve_does() -> None:
    # MergeSpecs runs on the raw configs, then ReplaceVariables: a config container named by a template and the
    # service's container of the rendered name are two containers (both renders alike)
    config = {"apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceServiceConfig",
              "metadata": {"name": "named-by-template", "namespace": "ns"},
              "spec": {"template": {"containers": [{"name": "{{ .ObjectMeta.Name }}-side", "image": "side:1"}]}}}  # fmt: skip
    svc = llmisvc("svc", "ns", baseRefs=[{"name": "named-by-template"}],
                  template={"containers": [{"name": "main"}, {"name": "svc-side", "image": "mine:2"}]})  # fmt: skip
    first, second = (find(render(config, svc), "Deployment", "svc-kserve") for _ in range(2))
    assert first == second
    sides = [c for c in first["spec"]["template"]["spec"]["containers"] if c["name"] == "svc-side"]
    assert sorted(c["image"] for c in sides) == ["mine:2", "side:1"]
