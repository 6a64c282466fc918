"""explain: every rendered value's origin, asserted for golden scenarios (not just present)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kserve_compile.api import CompileOptions, render_files, render_result
from kserve_compile.emit import dump_yaml
from kserve_compile.emit.explain import annotated_yaml, as_json, field_origin, select
from kserve_compile.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden"


def explain_paths(paths: list[str]) -> list[dict]:
    """What ``kserve-compile explain`` renders: the driver with tracing on."""
    return render_result(paths, options=CompileOptions(trace=True)).objects


def golden(name: str) -> str:
    return str(GOLDEN / name / "input.yaml")


def line_of(path: str, text: str) -> int:
    """1-based line of the first line of ``path`` containing ``text``."""
    return next(i for i, line in enumerate(Path(path).read_text("utf-8").splitlines(), 1) if text in line)


def chain(files: list[str], ref: str, field: str) -> list[tuple[str, str, str]]:
    [obj] = select(explain_paths(files), ref)
    return [(o.kind, o.what, o.where) for o in field_origin(obj, field).chain]


def test_an_input_field_names_its_file_line_and_column() -> None:
    src = golden("s3-credentials")
    [(kind, what, where)] = chain(
        [src], "Deployment/sklearn-s3-predictor", "spec.template.spec.initContainers[0].args[0]"
    )
    assert kind == "input" and what == "InferenceService/default/sklearn-s3 spec.predictor.model.storageUri"
    assert where == f"{src}:{line_of(src, 'storageUri: s3://models/sklearn/iris')}:7"


def test_a_runtime_default_overridden_by_the_isvc_keeps_both(tmp_path: Path) -> None:
    src = tmp_path / "isvc.yaml"
    src.write_text(
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: iris\n"
        "  annotations:\n    serving.kserve.io/deploymentMode: Standard\nspec:\n  predictor:\n    model:\n"
        '      modelFormat:\n        name: sklearn\n      runtimeVersion: "1.14.0"\n'
        '      storageUri: s3://models/iris\n      resources:\n        limits:\n          cpu: "2"\n'
    )
    cpu = chain([str(src)], "Deployment/iris-predictor", "spec.template.spec.containers[0].resources.limits.cpu")
    assert cpu == [
        ("input", "InferenceService/iris spec.predictor.model.resources.limits.cpu", f"{src}:16:11"),
        (
            "default",
            "built-in ClusterServingRuntime kserve-sklearnserver spec.containers[0].resources.limits.cpu",
            "kserve_compile/data/runtimes/kserve-sklearnserver.yaml",
        ),
    ]
    image = chain([str(src)], "Deployment/iris-predictor", "spec.template.spec.containers[0].image")
    assert [c[1] for c in image] == [
        "InferenceService/iris spec.predictor.model.runtimeVersion",
        "built-in ClusterServingRuntime kserve-sklearnserver spec.containers[0].image",
    ]
    memory = chain([str(src)], "Deployment/iris-predictor", "spec.template.spec.containers[0].resources.limits.memory")
    assert [c[0] for c in memory] == ["default"]  # the runtime's, not overridden


def test_a_configmap_key_names_the_configmap_and_its_field() -> None:
    src = golden("ca-bundle-configmap")
    [obj] = select(explain_paths([src]), "Deployment/secure-model-predictor")
    mounts = obj["spec"]["template"]["spec"]["initContainers"][0]["volumeMounts"]
    index = next(i for i, m in enumerate(mounts) if m["mountPath"] == "/etc/ssl/custom-certs")
    found = field_origin(obj, f"spec.template.spec.initContainers[0].volumeMounts[{index}].mountPath")
    assert [(o.kind, o.what, o.where) for o in found.chain] == [
        (
            "configmap",
            "ConfigMap/kserve/inferenceservice-config data.storageInitializer → caBundleVolumeMountPath",
            f"{src}:{line_of(src, '  storageInitializer:')}:3",
        )
    ]
    [(kind, what, _)] = chain(
        [src], "Deployment/secure-model-predictor", "metadata.annotations[serving.kserve.io/deploymentMode]"
    )
    assert (kind, what) == ("configmap", "ConfigMap/kserve/inferenceservice-config data.deploy → defaultDeploymentMode")


def test_the_storage_container_image_replaces_the_configmaps() -> None:
    """KServe's shipped ClusterStorageContainer sets the image over the ConfigMap's: explain shows both."""
    image = chain(
        [golden("ca-bundle-configmap")],
        "Deployment/secure-model-predictor",
        "spec.template.spec.initContainers[0].image",
    )
    assert [(kind, what) for kind, what, _ in image] == [
        ("default", "KServe's shipped ClusterStorageContainer default spec.container.image"),
        ("configmap", "ConfigMap/kserve/inferenceservice-config data.storageInitializer → image"),
    ]


def test_the_shipped_configmap_is_named_when_no_configmap_is_given() -> None:
    [_, (kind, what, where)] = chain(
        [str(ROOT / "examples" / "sklearn-iris.yaml")],
        "Deployment/sklearn-iris-predictor",
        "spec.template.spec.initContainers[0].image",
    )
    assert (kind, where) == ("default", "kserve_compile/data/inferenceservice-config.yaml")
    assert what == "KServe's shipped inferenceservice-config data.storageInitializer → image"


def test_what_the_pod_webhook_injects_names_the_injector_and_the_kserve_source() -> None:
    src = golden("sidecar-batcher-logger")
    [(kind, what, where)] = chain(
        [src], "Deployment/sklearn-batch-log-predictor", "spec.template.spec.containers[1].name"
    )
    assert (kind, what) == ("webhook", "pod webhook: agent")
    assert "pod/agent_injector.go" in where and "render/pod_webhook/agent.py" in where
    [(kind, what, _)] = chain(
        [src],
        "Deployment/sklearn-batch-log-predictor",
        "spec.template.spec.initContainers[0].volumeMounts[0].mountPath",
    )
    assert (kind, what) == ("webhook", "pod webhook: storage initializer")


def test_credentials_point_at_the_secret_they_read() -> None:
    src = golden("s3-credentials")
    [obj] = select(explain_paths([src]), "Deployment/sklearn-s3-predictor")
    env = obj["spec"]["template"]["spec"]["initContainers"][0]["env"]
    index = next(i for i, e in enumerate(env) if e["name"] == "AWS_ACCESS_KEY_ID")
    found = field_origin(obj, f"spec.template.spec.initContainers[0].env[{index}].valueFrom.secretKeyRef.name")
    assert found.chain[0].what.startswith("ServiceAccount/default/")  # the ServiceAccount's secrets list names it
    name = field_origin(obj, f"spec.template.spec.initContainers[0].env[{index}].name")
    assert name.chain[0].what == "pod webhook: storage initializer"


def test_defaults_name_the_builder_and_the_kserve_source_it_mirrors() -> None:
    [(kind, what, where)] = chain(
        [golden("knative-autoscaling")],
        "Service/sklearn-scale-predictor",
        "spec.template.metadata.annotations[autoscaling.knative.dev/class]",
    )
    assert (kind, what) == ("default", "KServe default (pod template)")
    assert "reconcilers/knative/ksvc_reconciler.go" in where
    [(kind, what, where)] = chain(
        [golden("knative-autoscaling")],
        "Service/sklearn-scale-predictor",
        "spec.template.metadata.annotations[autoscaling.knative.dev/initial-scale]",
    )
    assert kind == "input" and what.endswith("metadata.annotations[autoscaling.knative.dev/initial-scale]")


@pytest.mark.parametrize(
    "name",
    [
        "s3-credentials",
        "ca-bundle-configmap",
        "knative-autoscaling",
        "canary-multiple",
        "multinode-default",
        "sidecar-batcher-logger",
        "transformer-gateway-api",
        "graph-sequence-standard",
        "localmodel-isvc-serving-pvcs",
    ],
)
def test_annotated_yaml_is_the_rendered_yaml_plus_comments(name: str) -> None:
    src = golden(name)
    rendered = dump_yaml(render_files([src]))
    annotated = annotated_yaml(explain_paths([src]))
    assert list(yaml.safe_load_all(annotated)) == list(yaml.safe_load_all(rendered))
    assert re.sub(r"  # .*$", "", annotated, flags=re.M) == rendered
    commented = [line for line in annotated.splitlines() if "  # " in line]
    assert commented and all(not line.rstrip().endswith("#") for line in commented)
    _assert_each_comment_is_its_lines_origin(annotated, explain_paths([src]))


def _assert_each_comment_is_its_lines_origin(annotated: str, objects: list) -> None:
    """Re-read the output (slowly, with positions) and check every comment against the leaf its line shows."""
    from kserve_compile.emit.explain import UNTRACED
    from kserve_compile.inputs.parse import parse_text
    from kserve_compile.provenance import origin_of

    plain = re.sub(r"  # .*$", "", annotated, flags=re.M)
    lines = annotated.split("\n")
    checked = 0
    for doc, obj in zip(parse_text(plain, "<out>"), objects):
        deepest: dict[int, tuple] = {}
        for path, (line, _) in doc.positions.items():
            if path and (line not in deepest or len(path) > len(deepest[line])):
                deepest[line] = path
        for line, path in deepest.items():
            value = obj
            for part in path:
                value = value[part]
            if isinstance(value, (dict, list)):
                continue
            origin = origin_of(value)
            assert lines[line - 1].endswith(f"  # {origin.describe() if origin else UNTRACED}"), lines[line - 1]
            checked += 1
    assert checked == len([line for line in lines if "  # " in line])


def test_every_traced_leaf_has_a_chain_in_json() -> None:
    report = as_json(explain_paths([golden("s3-credentials")]))
    fields = [chain for obj in report for chain in obj["fields"].values()]
    traced = [c for c in fields if c]
    assert len(traced) > 0.8 * len(fields)  # only booleans and nulls are untraced
    assert all({"kind", "what", "where"} <= set(step) for c in traced for step in c)


def test_unknown_object_and_field_are_usage_errors() -> None:
    objects = explain_paths([golden("s3-credentials")])
    with pytest.raises(UsageError, match="no such rendered object"):
        select(objects, "Deployment/nope")
    [obj] = select(objects, "Deployment/sklearn-s3-predictor")
    with pytest.raises(UsageError, match="has no such field"):
        field_origin(obj, "spec.nope")
    with pytest.raises(UsageError, match="name one value"):
        field_origin(obj, "spec.template")


def test_tracing_leaves_plain_render_untouched() -> None:
    src = golden("s3-credentials")
    explain_paths([src])
    objects = render_files([src])
    assert (GOLDEN / "s3-credentials" / "expected.yaml").read_text("utf-8") == dump_yaml(objects)
    leaves = [v for o in objects for v in _leaves(o)]
    assert all(type(v) in (str, int, float, bool, type(None)) for v in leaves)


def _leaves(obj):  # noqa: ANN001, ANN202
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _leaves(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _leaves(v)
    else:
        yield obj
