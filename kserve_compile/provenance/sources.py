"""The origins kserve-compile knows: input fields, ConfigMap keys, runtime fields, and the KServe source behind each
default a builder or a pod-webhook injector writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from . import Origin, Path, path_text, tag_tree


class LocatedDocument(Protocol):
    """What tagging reads of an input document (``inputs.parse.Document``): provenance sits below the input stage."""

    data: Any
    file: str

    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    def locate(self, path: Any) -> tuple[int, int]: ...


# The builder of each rendered kind: the KServe source it mirrors, and the module that mirrors it.
BUILDERS: dict[str, tuple[str, str]] = {
    "Deployment": ("reconcilers/deployment/deployment_reconciler.go", "render/workloads/standard/deployment.py"),
    "Service": ("reconcilers/service/service_reconciler.go", "render/workloads/standard/service.py"),
    "HorizontalPodAutoscaler": ("reconcilers/hpa/hpa_reconciler.go", "render/workloads/standard/autoscaler.py"),
    "ScaledObject": ("reconcilers/keda/keda_reconciler.go", "render/workloads/standard/autoscaler.py"),
    "OpenTelemetryCollector": ("reconcilers/otel/otel_reconciler.go", "render/workloads/standard/otel.py"),
    "Ingress": ("reconcilers/ingress/kube_ingress_reconciler.go", "render/ingress/kube_ingress.py"),
    "HTTPRoute": ("reconcilers/ingress/httproute_reconciler.go", "render/ingress/httproute.py"),
    "VirtualService": ("reconcilers/ingress/ingress_reconciler.go", "render/ingress/virtualservice.py"),
    "ConfigMap": ("pkg/modelconfig/configmap.go, reconcilers/cabundleconfigmap", "pipeline.py"),
}
KNATIVE_SERVICE = ("reconcilers/knative/ksvc_reconciler.go", "render/workloads/knative/service.py")
GRAPH = ("pkg/controller/v1alpha1/inferencegraph", "graph/render.py")

# The pod webhook's injectors, in the order mutator.go runs them.
INJECTORS: dict[str, tuple[str, str]] = {
    "storage initializer": (
        "pkg/webhook/admission/pod/storage_initializer_injector.go",
        "render/pod_webhook/storage.py",
    ),
    "agent": ("pkg/webhook/admission/pod/agent_injector.go", "render/pod_webhook/agent.py"),
    "metrics aggregation": (
        "pkg/webhook/admission/pod/metrics_aggregate_injector.go",
        "render/pod_webhook/metrics_aggregation.py",
    ),
    "modelcar": ("pkg/webhook/admission/pod/storage_initializer_injector.go (OCI)", "render/pod_webhook/modelcar.py"),
    "accelerator selector": ("pkg/webhook/admission/pod/accelerator_injector.go", "render/pod_webhook/inject.py"),
}
COMPONENTS: dict[str, tuple[str, str]] = {
    "predictor": ("pkg/controller/v1beta1/inferenceservice/components/predictor.go", "components.py"),
    "transformer": ("pkg/controller/v1beta1/inferenceservice/components/transformer.go", "components.py"),
    "explainer": ("pkg/controller/v1beta1/inferenceservice/components/explainer.go", "components.py"),
}


def _where(source: tuple[str, str]) -> str:
    return f"KServe {source[0]}; kserve_compile/{source[1]}"


def builder_origin(obj: Mapping[str, Any]) -> Origin:
    kind = str(obj.get("kind", ""))
    api = str(obj.get("apiVersion", ""))
    if kind == "Service" and api.startswith("serving.knative.dev"):
        source = KNATIVE_SERVICE
    elif ((obj.get("metadata") or {}).get("labels") or {}).get("serving.kserve.io/inferencegraph"):
        source = GRAPH
    else:
        source = BUILDERS.get(kind, ("pkg/controller", "pipeline.py"))
    return Origin("default", f"KServe default ({kind} builder)", _where(source))


def injector_origin(name: str) -> Origin:
    return Origin("webhook", f"pod webhook: {name}", _where(INJECTORS[name]))


def component_origin(kind: str) -> Origin:
    """What the component reconciler sets: names, labels, annotations and the pod spec it derives."""
    return Origin("default", f"KServe default ({kind} component)", _where(COMPONENTS[kind]))


def pod_template_origin(knative: bool) -> Origin:
    source = KNATIVE_SERVICE if knative else BUILDERS["Deployment"]
    return Origin("default", "KServe default (pod template)", _where(source))


def tag_document(doc: LocatedDocument) -> Any:
    """The document's data with every leaf tagged with its position and field path."""
    ref = f"{doc.kind}/{doc.namespace + '/' if doc.namespace else ''}{doc.name}".rstrip("/")

    def at(path: Path) -> Origin:
        line, col = doc.locate(path)
        where = f"{doc.file}:{line}:{col}" if line else doc.file
        kind = "configmap" if doc.kind == "ConfigMap" else "runtime" if doc.kind.endswith("ServingRuntime") else "input"
        return Origin(kind, f"{ref} {path_text(path)}", where)

    return tag_tree(doc.data, at)


def tag_config_json(raw: Any, key: str, value: Any) -> Any:
    """The parsed JSON of a ConfigMap key, each leaf naming the key and its field; ``raw`` carries the key's origin."""
    parent: Origin | None = getattr(raw, "origin", None)
    if parent is None:
        return value

    def at(path: Path) -> Origin:
        field_path = path_text(path)
        return Origin(parent.kind, f"{parent.what} → {field_path}" if field_path else parent.what, parent.where)

    return tag_tree(value, at)


def tag_embedded(data: Any, what: str, file: str, prefix: Path = ()) -> Any:
    """Data kserve-compile ships (KServe's own ConfigMap and runtimes), tagged with its file and field path."""
    return tag_tree(
        data, lambda path: Origin("default", f"{what} {path_text((*prefix, *path))}".rstrip(), f"kserve_compile/{file}")
    )
