"""Knative's admission on whole runs: ``validate`` names every Knative Service of the golden inputs that Knative would
refuse, located in the isvc behind it; ``render`` says it once; ``--pod-webhook cluster`` leaves only what KServe's
controller writes itself; Knative's ``config-features`` is an input that is read, not emitted."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kserve_compile.cli.app import register
from kserve_compile.driver import CompileOptions, compile
from kserve_compile.errors import CompileError, Problem
from kserve_compile.inputs.parse import Document, parse_paths, parse_text
from tests.golden_options import golden_options

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden"
KNATIVE = "serving.knative.dev/v1"
VALIDATE = CompileOptions(kube_version="1.32")
STORAGE_URIS_FLAGS = (
    "kubernetes.podspec-init-containers",
    "kubernetes.podspec-persistent-volume-claim",
    "kubernetes.podspec-persistent-volume-write",
)


def features_doc(*flags: str, name: str = "features.yaml") -> list[Document]:
    data = "".join(f'  {flag}: "enabled"\n' for flag in flags)
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-features\n  namespace: knative-serving\ndata:\n{data}"
    return parse_text(text, name)


def _scenarios() -> list[Path]:
    return sorted(
        p for p in GOLDEN.iterdir() if (p / "input.yaml").is_file() and KNATIVE in (p / "expected.yaml").read_text()
    )


SCENARIOS = _scenarios()


def _services(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("apiVersion") == KNATIVE and o.get("kind") == "Service"]


def _validate(scenario: Path) -> CompileOptions:
    """``validate`` with the scenario's options (its ``# options:`` line)."""
    return replace(golden_options(scenario), kube_version="1.32")


def _errors(docs: list[Document], options: CompileOptions = VALIDATE) -> list[Problem]:
    try:
        compile(docs, options)
    except CompileError as exc:
        return [p for p in exc.problems if p.severity == "error"]
    return []


def _refused_services(problems: list[Problem]) -> set[str]:
    return {m.group(1) for p in problems if (m := re.match(r"Knative Service (\S+): ", p.message))}


def _oracle(service: dict[str, Any]) -> set[str]:
    """What Knative refuses in the golden corpus, read off the rendered Service by hand: init containers (flag
    disabled), PVC volumes (flag disabled; written without readOnly, so the write flag too), and a container port
    named other than "", h2c or http1 (KServe's agent serves on 9081 named agent-port)."""
    spec = service["spec"]["template"]["spec"]
    found = set()
    if spec.get("initContainers"):
        found.add("init containers")
    if any("persistentVolumeClaim" in v for v in spec.get("volumes") or []):
        found.add("pvc")
    if any(p.get("name") not in (None, "", "h2c", "http1") for c in spec["containers"] for p in c.get("ports") or []):
        found.add("port name")
    return found


def test_the_golden_corpus_has_knative_services() -> None:
    assert len(SCENARIOS) >= 15


def test_validate_names_every_service_knative_refuses_under_the_shipped_flags() -> None:
    expected: dict[str, set[str]] = {}
    named: set[str] = set()
    total = 0
    for scenario in SCENARIOS:
        docs = parse_paths([str(scenario / "input.yaml")])
        rendered = compile(docs, golden_options(scenario)).objects
        total += len(_services(rendered))
        for service in _services(rendered):
            refused = _oracle(service)
            if refused and "config-features" not in (scenario / "input.yaml").read_text():
                expected[f"{scenario.name}:{service['metadata']['namespace']}/{service['metadata']['name']}"] = refused
        named |= {f"{scenario.name}:{s}" for s in _refused_services(_errors(docs, _validate(scenario)))}
    with_init = [k for k, v in expected.items() if "init containers" in v]
    assert total >= 20 and len(with_init) == 17  # the count, from golden inputs
    assert named == set(expected)


def test_with_the_flags_enabled_only_the_inlined_agent_remains() -> None:
    """No flag lifts Knative's rule on the serving port's name: the inlined agent (logger, batcher, model puller)
    is refused whatever config-features says — those Services need --pod-webhook cluster."""
    flags = features_doc(*STORAGE_URIS_FLAGS)
    left: dict[str, list[str]] = {}
    for scenario in SCENARIOS:
        docs = parse_paths([str(scenario / "input.yaml")])
        given = any(d.name == "config-features" for d in docs)  # a second one would be an error
        problems = _errors(docs + ([] if given else flags), _validate(scenario))
        if problems:
            left[scenario.name] = [p.message for p in problems]
    assert set(left) == {"knative-logger", "trainedmodel-knative"}
    for messages in left.values():
        assert len(messages) == 1 and "port name 'agent-port' is not allowed" in messages[0]
        assert "--pod-webhook cluster" in messages[0]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.name)
def test_cluster_mode_writes_only_what_kserves_controller_writes(scenario: Path) -> None:
    """With KServe's pod webhook in the cluster, nothing Knative refuses is written, but for storageUris: KServe's
    own ksvc reconciler writes the init container and the PVC (its flags admit them)."""
    docs = parse_paths([str(scenario / "input.yaml")])
    cluster = CompileOptions(kube_version="1.32", pod_webhook="cluster")
    problems = _errors(docs, cluster)
    uses_storage_uris = "storageUris" in (scenario / "input.yaml").read_text()
    given_flags = "config-features" in (scenario / "input.yaml").read_text()
    if uses_storage_uris and not given_flags:
        assert problems and all("spec.predictor.storageUris" == p.path for p in problems), problems
        assert _errors(docs + features_doc(*STORAGE_URIS_FLAGS), cluster) == []
    else:
        assert problems == []


def test_render_says_it_once_per_run_with_the_count() -> None:
    docs = []
    for name in ("knative-predictor", "knative-transformer", "knative-logger", "knative-storage-uris"):
        docs += parse_paths([str(GOLDEN / name / "input.yaml")])
    warnings = [w for w in compile(docs).warnings if "Knative's webhook would refuse" in w.message]
    assert len(warnings) == 1
    message = warnings[0].message
    # knative-transformer renders two Services, the transformer's without a storage initializer
    assert message.startswith("Knative's webhook would refuse 4 of the 5 Knative Services under Knative Serving 1.21.1")
    assert 'spec.template.spec.initContainers (kubernetes.podspec-init-containers is "disabled") in 4' in message
    assert "spec.template.spec.containers[].ports[].name in 1" in message
    assert "or render with --pod-webhook cluster" in message
    cluster = compile(docs, CompileOptions(pod_webhook="cluster")).warnings
    said = [w.message for w in cluster if "Knative's webhook would refuse" in w.message]
    assert said and "1 of the 5" in said[0] and "--pod-webhook cluster" not in said[0]


def test_github_annotations_point_at_the_isvc_field() -> None:
    path = GOLDEN / "knative-predictor" / "input.yaml"
    result = CliRunner().invoke(
        register("..cli.compile_commands"), ["validate", "--error-format", "github", str(path)], catch_exceptions=False
    )
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.startswith("::error")]
    line_no = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "storageUri:" in text)
    assert len(lines) == 1
    assert lines[0].startswith(
        f"::error file={path},line={line_no},col=7,title=InferenceService/foo spec.predictor.tensorflow.storageUri::"
    )
    assert (
        "Knative Service default/foo-predictor: spec.template.spec.initContainers: Knative refuses init containers"
        in lines[0]
    )
    assert 'while kubernetes.podspec-init-containers is "disabled" (config-features)' in lines[0]


def test_fields_the_isvc_carries_are_located_in_it(tmp_path: Path) -> None:
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text(
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: t\n"
        "  annotations:\n    serving.kserve.io/deploymentMode: Knative\nspec:\n  predictor:\n"
        "    nodeSelector: {gpu: a100}\n    tolerations: [{key: gpu}]\n"
        "    model:\n      modelFormat: {name: sklearn}\n      storageUri: pvc://claim/model\n"
    )
    problems = {
        p.path: p for p in _errors(parse_paths([str(isvc)]), CompileOptions(kube_version="1.32", pod_webhook="cluster"))
    }
    assert set(problems) == {"spec.predictor.nodeSelector", "spec.predictor.tolerations"}
    assert problems["spec.predictor.nodeSelector"].line == 9
    assert "kubernetes.podspec-nodeselector" in problems["spec.predictor.nodeSelector"].message
    inline = {p.path: p.message for p in _errors(parse_paths([str(isvc)]))}
    # inline, the pod webhook mounts the claim: a PVC volume (read-only, as storage-readonly defaults to true)
    assert "kubernetes.podspec-persistent-volume-claim" in inline["spec.predictor.model.storageUri"]
    assert "--pod-webhook cluster" in inline["spec.predictor.model.storageUri"]


def test_config_features_is_read_not_emitted_and_keeps_its_namespace() -> None:
    docs = parse_paths([str(GOLDEN / "knative-predictor" / "input.yaml")]) + features_doc(
        "kubernetes.podspec-init-containers"
    )
    result = compile(docs, CompileOptions(namespace="default", kube_version="1.32"))
    assert not [o for o in result.objects if o["metadata"]["name"] == "config-features"]
    notes = [w for w in result.warnings if w.name == "config-features"]
    assert len(notes) == 1 and "read as Knative's webhook reads it" in notes[0].message


def test_the_config_file_replaces_the_inputs_config_features(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    shipped = (ROOT / "kserve_compile" / "data" / "inferenceservice-config.yaml").read_text()
    flags = "".join(f'  {flag}: "enabled"\n' for flag in STORAGE_URIS_FLAGS)
    config.write_text(
        shipped + "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-features\n"
        f"  namespace: knative-serving\ndata:\n{flags}"
    )
    storage_uris = GOLDEN / "knative-storage-uris" / "input.yaml"
    disabling = tmp_path / "off.yaml"
    disabling.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-features\n  namespace: knative-serving\n"
    )
    app = register("..cli.compile_commands")
    args = ["validate", "--pod-webhook", "cluster", str(storage_uris), str(disabling)]
    assert CliRunner().invoke(app, args, catch_exceptions=False).exit_code == 1
    done = CliRunner().invoke(app, [*args, "--config", str(config)], catch_exceptions=False)
    assert done.exit_code == 0, done.output


def test_explain_says_what_the_clusters_webhook_adds() -> None:
    app = register("..cli.explain_command")
    path = str(GOLDEN / "knative-logger" / "input.yaml")
    done = CliRunner().invoke(app, ["explain", "--pod-webhook", "cluster", path], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    notes = [line for line in done.output.splitlines() if "at Pod admission" in line]
    assert len(notes) == 3
    storage, agent, metrics = notes
    assert (
        ": note: sklearn-logger-kn-predictor: at Pod admission, KServe's pod webhook (storage initializer: " in storage
    )
    assert (
        "spec.initContainers[storage-initializer]" in storage and "spec.volumes[kserve-provision-location]" in storage
    )
    assert "(agent: pkg/webhook/admission/pod/agent_injector.go) adds spec.containers[agent]" in agent
    assert "metadata.annotations[serving.kserve.io/enable-prometheus-scraping]" in metrics
    assert "initContainers" not in done.stdout  # the objects: the controller's
    inline = CliRunner().invoke(app, ["explain", path], catch_exceptions=False)
    assert "at Pod admission" not in inline.output and "pod webhook: storage initializer" in inline.output


def test_fn_takes_the_setting_from_function_config_or_the_flag() -> None:
    import yaml

    isvc = yaml.safe_load_all((GOLDEN / "knative-predictor" / "input.yaml").read_text())
    resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": list(isvc)}
    app = register("..cli.krm_command")

    def init_containers(args: list[str], rl: dict[str, Any]) -> bool:
        done = CliRunner().invoke(app, ["fn", *args], input=yaml.safe_dump(rl), catch_exceptions=False)
        assert done.exit_code == 0, done.output
        out = yaml.safe_load(done.stdout)
        return any("initContainers" in o["spec"]["template"]["spec"] for o in _services(out["items"]))

    assert init_containers([], resource_list)
    assert not init_containers(["--pod-webhook", "cluster"], resource_list)
    configured = {
        **resource_list,
        "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"podWebhook": "cluster"}},
    }
    assert not init_containers([], configured)
    bad = {**resource_list, "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"podWebhook": "off"}}}
    done = CliRunner().invoke(app, ["fn"], input=yaml.safe_dump(bad), catch_exceptions=False)
    assert done.exit_code == 1 and "podWebhook must be inline or cluster" in done.output


def test_the_daemon_renders_with_its_setting() -> None:
    """The daemon's renderer (``DaemonConfig.pod_webhook``, ``daemon --pod-webhook``) as the commands'."""
    from types import SimpleNamespace

    import yaml

    from kserve_compile.apply.daemon import Daemon, DaemonConfig

    objects = [o for o in yaml.safe_load_all((GOLDEN / "knative-predictor" / "input.yaml").read_text()) if o]

    def rendered(pod_webhook: str) -> list[dict[str, Any]]:
        kube = SimpleNamespace(resource=lambda api_version, kind: (api_version, kind))  # informers are made, not run
        daemon = Daemon(kube, DaemonConfig(leader_elect=False, pod_webhook=pod_webhook))  # type: ignore[arg-type]
        return _services(daemon.reconciler.render(objects, None, "<cluster>"))

    assert "initContainers" in rendered("inline")[0]["spec"]["template"]["spec"]
    assert "initContainers" not in rendered("cluster")[0]["spec"]["template"]["spec"]


def test_a_graphs_router_fields_are_located_in_the_graph(tmp_path: Path) -> None:
    """The router's Knative Service (graph/render.py) carries the graph's own pod fields: located there."""
    graph = tmp_path / "graph.yaml"
    graph.write_text(
        "apiVersion: serving.kserve.io/v1alpha1\nkind: InferenceGraph\nmetadata:\n  name: g\n  namespace: default\n"
        "  annotations:\n    serving.kserve.io/deploymentMode: Knative\nspec:\n  nodeSelector: {pool: routers}\n"
        "  nodes:\n    root:\n      routerType: Sequence\n      steps:\n"
        "      - serviceUrl: http://a.default.svc.cluster.local/v1/models/a:predict\n"
    )
    problems = _errors(parse_paths([str(graph)]))
    assert [(p.kind, p.path, p.line) for p in problems] == [("InferenceGraph", "spec.nodeSelector", 9)]
    assert problems[0].message.startswith("Knative Service default/g: spec.template.spec.nodeSelector: Knative refuses")
