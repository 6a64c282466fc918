"""The wiring proposed to the lead, run end to end without touching ``pipeline.py``.

``compile_wired`` is ``pipeline.compile_isvc`` plus the canary and multi-node steps at the places the report names:
after the stable predictor is built (``expand_multinode``, ``build_canaries``), and in the Standard object loop
(``multinode_objects`` next to the head, ``canary_objects`` after the components). The golden scenarios
``golden/canary-*`` and ``golden/multinode-*`` are rendered through it here; once the lead wires the same calls into
the pipeline, ``tests/test_golden.py`` renders them identically.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from kserve_compile import constants as C
from kserve_compile.canary import build_canaries, canary_objects, route_canaries
from kserve_compile.components import Component, build_predictor, is_multi_model
from kserve_compile.emit import sort_objects
from kserve_compile.multinode import expand_multinode, multinode_objects
from kserve_compile.parse import parse_paths
from kserve_compile.pipeline import _model_config_map, _pod_template, _standard_workloads, plan_isvc, prepare, route_input
from kserve_compile.render.ingress import standard_ingress
from kserve_compile.standard.deployment import pod_template


def compile_wired(path: str | Path) -> list[dict[str, Any]]:
    ctx = prepare(parse_paths([str(path)]))
    assert not ctx.problems, ctx.problems
    out: list[dict[str, Any]] = []
    for raw, _doc in ctx.isvcs:
        config, runtimes, cluster = ctx.config, ctx.runtimes, ctx.cluster
        plan = plan_isvc(raw, config, runtimes)
        assert plan.mode == C.MODE_STANDARD
        isvc = plan.isvc
        # --- in plan_isvc, right after the stable predictor is built (``labels`` is plan_isvc's local) ---
        labels = dict(isvc.metadata.labels)
        build_predictor(isvc, isvc.spec.predictor, config, runtimes, labels)  # stands in for plan_isvc's call
        stable = plan.components[0]
        multinode = None
        if isvc.spec.predictor.worker_spec is not None:
            multinode = expand_multinode(isvc, stable, config, labels)
            plan.components[0] = multinode.head
        canaries = build_canaries(isvc, stable, config, runtimes, labels)

        # --- in compile_isvc, Standard mode ---
        isvc_data = isvc.model_dump(by_alias=True, exclude_none=True)
        notes: list[str] = []

        def template_for(component: Component) -> tuple[dict[str, Any], list[str]]:
            return _pod_template(component, pod_template(component), isvc_data, config, cluster)

        objects: list[dict[str, Any]] = []
        for component in [] if plan.stopped else plan.components:
            made = _standard_workloads(component, plan, isvc_data, config, cluster, notes)
            objects += made
            if multinode is not None and component is multinode.head:
                objects += multinode_objects(multinode, made[0], config, template_for)[0]
        if not plan.stopped:
            objects += canary_objects(canaries, config, template_for)[0]
        if is_multi_model(isvc.spec.predictor):
            objects.append(_model_config_map(isvc, []))
        objects += standard_ingress(replace(route_input(plan, config), canaries=route_canaries(canaries)), config)
        out += objects
    return sort_objects(out)
