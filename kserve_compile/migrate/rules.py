"""The rewrites KServe makes to an InferenceService when it stores one, as data-driven rules.

Mirrors ``pkg/apis/serving/v1beta1/inference_service_defaults.go`` (``DefaultInferenceService``,
``setPredictorModelDefaults``, ``assign*Runtime``, ``setResourceRequirementDefaults``,
``disableAutomountServiceAccountToken``), the component ``Default`` methods it calls (``predictor_custom.go``,
``transformer_custom.go``, ``explainer_custom.go``, ``explainer_art.go``; ``predictor_model.go`` and
``component.go`` default nothing), and the implementation choice of ``predictor.go``, ``transformer.go`` and
``explainer.go`` (``GetImplementations``). Only what the webhook *persists* is here: render-time defaults
(``defaulting.py``'s runtime selection, container building) are not, and ServingRuntime, ClusterServingRuntime,
InferenceGraph and TrainedModel have no defaulting webhook in KServe (docs/migrate.md lists every rule).
Each rule is a function over one object's data, written against :class:`~.edit.Editor` so the same rule edits the
plain data and the commented tree.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from .. import constants as C
from ..errors import InputError
from ..inputs.config import KServeConfig
from ..inputs.serving_types import FRAMEWORKS
from ..kube.quantity import canonical_quantity, is_quantity
from ..plan.defaulting import FRAMEWORK_FORMATS, V2_BY_DEFAULT_FORMATS
from .edit import Editor, Path, format_path

Obj = MutableMapping[str, Any]


@dataclass(frozen=True)
class Settings:
    """The ``inferenceservice-config`` facts the webhook reads (``NewDeployConfig``, ``NewSecurityConfig``, ...)."""

    default_mode: str  # already normalised: Serverless → Knative, RawDeployment → Standard
    auto_mount_token: bool
    resources: dict[str, dict[str, str]]  # {"limits"|"requests": {"cpu"|"memory": canonical quantity}}
    art_version: str

    @classmethod
    def from_config(cls, config: KServeConfig) -> Settings:
        resources = {
            section: {name: canonical_quantity(value) for name, value in values.items() if is_quantity(value)}
            for section, values in config.inference_service.resource.requirements().items()
        }
        return cls(
            config.deploy.default_deployment_mode,
            config.security.auto_mount_service_account_token,
            resources,
            config.explainers.art.default_image_version,
        )


@dataclass
class State:
    """What earlier rules learned that later ones need (``DefaultInferenceService``'s locals)."""

    had_mode: bool = False
    mode: str | None = None

    @property
    def model_mesh(self) -> bool:
        return self.had_mode and self.mode == C.MODE_MODELMESH


RuleFn = Callable[[Obj, Settings, State, Editor], None]


@dataclass(frozen=True)
class Rule:
    id: str
    source: str  # the KServe code it mirrors (kserve/kserve, pkg/apis/serving/v1beta1/...)
    summary: str
    apply: RuleFn


# --- typed access: every wrong shape is an error naming its field path ----------------------------------------------


def mapping_at(obj: Obj, path: Path, editor: Editor | None = None) -> Obj | None:
    """The mapping at ``path`` (None when absent or null); with ``editor``, missing ones are created."""
    node: Any = obj
    for depth, key in enumerate(path):
        child = node.get(key)
        if child is None:
            if editor is None:
                return None
            child = editor.ensure(node, str(key))
        elif not isinstance(child, MutableMapping):
            raise InputError(f"must be a mapping, not {_type_name(child)}", format_path(path[: depth + 1]))
        node = child
    return node


def _string_at(node: Obj, key: str, path: Path) -> str | None:
    value = node.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(f"must be a string, not {_type_name(value)}", format_path(path + (key,)))
    return value


def _list_at(node: Obj, key: str, path: Path) -> list[Any]:
    value = node.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"must be a list, not {_type_name(value)}", format_path(path + (key,)))
    return value


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return (
        "a list"
        if isinstance(value, list)
        else "a mapping"
        if isinstance(value, MutableMapping)
        else type(value).__name__
    )


ANNOTATIONS: Path = ("metadata", "annotations")
PREDICTOR: Path = ("spec", "predictor")


# --- metadata.annotations[serving.kserve.io/deploymentMode] -----------------------------------------------------------


def legacy_mode_name(obj: Obj, settings: Settings, state: State, editor: Editor) -> None:
    annotations = mapping_at(obj, ANNOTATIONS)
    mode = _string_at(annotations, C.ANN_DEPLOYMENT_MODE, ANNOTATIONS) if annotations is not None else None
    state.had_mode = annotations is not None and C.ANN_DEPLOYMENT_MODE in annotations
    state.mode = mode
    if annotations is not None and mode in C.LEGACY_MODES:
        state.mode = C.LEGACY_MODES[mode]
        editor.set(annotations, C.ANN_DEPLOYMENT_MODE, state.mode, ANNOTATIONS, "deployment-mode-name")


def default_mode_annotation(obj: Obj, settings: Settings, state: State, editor: Editor) -> None:
    if state.had_mode or settings.default_mode not in (C.MODE_STANDARD, C.MODE_MODELMESH):
        return
    annotations = mapping_at(obj, ANNOTATIONS, editor)
    assert annotations is not None
    editor.set(annotations, C.ANN_DEPLOYMENT_MODE, settings.default_mode, ANNOTATIONS, "deployment-mode-default")


# --- spec.predictor: the framework schema and the model -----------------------------------------------------------


def _present(node: Obj, key: str) -> bool:
    """A Go pointer field is set: the key is there and not null."""
    return node.get(key) is not None


def framework_to_model(obj: Obj, settings: Settings, state: State, editor: Editor) -> None:
    predictor = mapping_at(obj, PREDICTOR)
    if predictor is None or state.model_mesh:
        return
    found = [f for f in FRAMEWORKS if _present(predictor, f)]
    if not found:
        return
    if len(found) > 1:
        raise InputError(
            f"sets {len(found)} model frameworks ({', '.join(found)}); exactly one predictor implementation is allowed",
            format_path(PREDICTOR),
        )
    framework = found[0]
    if _present(predictor, "model"):
        raise InputError(
            f"sets both {framework} and model; KServe would replace model with the {framework} spec — remove one",
            format_path(PREDICTOR + (framework,)),
        )
    spec = mapping_at(obj, PREDICTOR + (framework,))
    assert spec is not None
    fmt, protocol = FRAMEWORK_FORMATS[framework]
    predictor.pop("model", None)  # an explicit `model: null`
    editor.rename(predictor, framework, "model", PREDICTOR, "framework-to-model")
    model_path = PREDICTOR + ("model",)
    editor.set_first(spec, "modelFormat", editor.mapping([("name", fmt)]), model_path, "framework-to-model")
    if protocol is not None and not _present(spec, "protocolVersion"):
        editor.set(spec, "protocolVersion", protocol, model_path, "framework-to-model", after="modelFormat")


def _model(obj: Obj) -> tuple[Obj, str] | None:
    model = mapping_at(obj, PREDICTOR + ("model",))
    if model is None:
        return None
    fmt = mapping_at(obj, PREDICTOR + ("model", "modelFormat"))
    name = _string_at(fmt, "name", PREDICTOR + ("model", "modelFormat")) if fmt is not None else None
    return model, name or ""


def model_protocol(obj: Obj, settings: Settings, state: State, editor: Editor) -> None:
    found = None if state.model_mesh else _model(obj)
    if found is None:
        return
    model, name = found
    if name in V2_BY_DEFAULT_FORMATS and not _present(model, "protocolVersion"):
        editor.set(
            model, "protocolVersion", C.PROTOCOL_V2, PREDICTOR + ("model",), "model-protocol-v2", after="modelFormat"
        )


def model_format_annotation(obj: Obj, settings: Settings, state: State, editor: Editor) -> None:
    found = None if state.model_mesh else _model(obj)
    if found is None or not found[1]:
        return
    annotations = mapping_at(obj, ANNOTATIONS)
    if annotations is not None and C.ANN_MODEL_FORMAT in annotations:
        return
    annotations = mapping_at(obj, ANNOTATIONS, editor)
    assert annotations is not None
    editor.set(annotations, C.ANN_MODEL_FORMAT, found[1], ANNOTATIONS, "model-format-annotation")


# --- component Default(): custom containers and the ART explainer ------------------------------------------------


def _implementations(component: Obj, kind: str, path: Path) -> list[str]:
    """``GetImplementations`` of predictor.go / transformer.go / explainer.go: which specs implement the component."""
    containers = _list_at(component, "containers", path)
    found = [f for f in (*FRAMEWORKS, "model") if _present(component, f)] if kind == "predictor" else []
    if kind == "explainer" and _present(component, "art"):
        found.append("art")
    if not containers:
        return found
    if kind != "predictor":
        return [*found, "custom"]
    named = [c for c in containers if isinstance(c, MutableMapping) and c.get("name") == C.CONTAINER_KSERVE]
    custom = ["custom"] * len(named) or ([] if found else ["custom"])
    return [*found, *custom]


def _resource_defaults(holder: Obj, path: Path, settings: Settings, editor: Editor, rule: str) -> None:
    """``setResourceRequirementDefaults``: each configured request/limit the user left out is filled in."""
    for section, values in settings.resources.items():
        section_path = path + ("resources", section)
        existing = mapping_at(holder, section_path)
        missing = [(k, v) for k, v in values.items() if existing is None or k not in existing]
        if not missing:
            continue
        target = mapping_at(holder, section_path, editor)
        assert target is not None
        for key, value in missing:
            editor.set(target, key, value, path + ("resources", section), rule)


def _default_custom(component: Obj, kind: str, path: Path, settings: Settings, editor: Editor) -> None:
    containers = _list_at(component, "containers", path)
    first = containers[0]
    first_path = path + ("containers", 0)
    if not isinstance(first, MutableMapping):
        raise InputError(f"must be a mapping, not {_type_name(first)}", format_path(first_path))
    name = _string_at(first, "name", first_path)
    rename = kind != "predictor" or len(containers) == 1 or not name
    if rename and name != C.CONTAINER_KSERVE:
        if "name" in first:
            editor.set(first, "name", C.CONTAINER_KSERVE, first_path, "custom-container-name")
        else:
            editor.set_first(first, "name", C.CONTAINER_KSERVE, first_path, "custom-container-name")
    _resource_defaults(first, (), settings, _Scoped(editor, first_path), "custom-container-resources")


def _default_art(component: Obj, path: Path, settings: Settings, editor: Editor) -> None:
    art = mapping_at(component, ("art",))
    assert art is not None
    art_path = path + ("art",)
    if _string_at(art, "name", art_path) != C.CONTAINER_KSERVE:
        editor.set(art, "name", C.CONTAINER_KSERVE, art_path, "art-explainer-defaults", after="type")
    if not _present(art, "runtimeVersion"):
        editor.set(art, "runtimeVersion", settings.art_version, art_path, "art-explainer-defaults")
    _resource_defaults(art, (), settings, _Scoped(editor, art_path), "art-explainer-defaults")


def component_defaults(obj: Obj, settings: Settings, state: State, editor: Editor) -> None:
    kinds = ("transformer", "explainer") if state.model_mesh else ("transformer", "explainer", "predictor")
    for kind in kinds:
        path = ("spec", kind)
        component = mapping_at(obj, path)
        if component is None:
            continue
        impls = _implementations(component, kind, path)
        if len(impls) != 1:  # KServe logs "exactly one" and defaults nothing; validation rejects it later
            continue
        if impls[0] == "custom":
            _default_custom(component, kind, path, settings, editor)
        elif impls[0] == "art":
            _default_art(component, path, settings, editor)


def automount_token(obj: Obj, settings: Settings, state: State, editor: Editor) -> None:
    if settings.auto_mount_token:
        return
    for kind in ("predictor", "transformer", "explainer"):
        component = mapping_at(obj, ("spec", kind))
        if component is None:  # an isvc without a predictor is rejected by validation; nothing to store
            continue
        if not _present(component, "automountServiceAccountToken"):
            editor.set(
                component, "automountServiceAccountToken", False, ("spec", kind), "automount-service-account-token"
            )


class _Scoped(Editor):
    """An editor whose paths are relative to a prefix (a container inside a component)."""

    def __init__(self, inner: Editor, prefix: Path) -> None:
        super().__init__(inner.roundtrip, inner.changes)
        self.prefix = prefix

    def set(self, target: Obj, key: str, value: Any, path: Path, rule: str, after: str | None = None) -> None:
        super().set(target, key, value, self.prefix + path, rule, after)


_SRC = "pkg/apis/serving/v1beta1/"

ISVC_RULES: tuple[Rule, ...] = (
    Rule(
        "deployment-mode-name",
        _SRC + "inference_service_defaults.go DefaultInferenceService (deprecated annotation values)",
        "serving.kserve.io/deploymentMode RawDeployment → Standard, Serverless → Knative",
        legacy_mode_name,
    ),
    Rule(
        "deployment-mode-default",
        _SRC + "inference_service_defaults.go DefaultInferenceService; configmap.go NewDeployConfig",
        "no deploymentMode annotation and deploy.defaultDeploymentMode is Standard or ModelMesh: the annotation is added",
        default_mode_annotation,
    ),
    Rule(
        "framework-to-model",
        _SRC + "inference_service_defaults.go setPredictorModelDefaults, assign<Framework>Runtime",
        "predictor.<framework> → predictor.model with modelFormat.name; triton/onnx/huggingface get protocolVersion v2 when unset",
        framework_to_model,
    ),
    Rule(
        "model-protocol-v2",
        _SRC + "inference_service_defaults.go setPredictorModelDefaults",
        "predictor.model of format triton or vLLM without protocolVersion gets v2",
        model_protocol,
    ),
    Rule(
        "model-format-annotation",
        _SRC + "inference_service_defaults.go setPredictorModelDefaults",
        "metadata.annotations.modelFormat = predictor.model.modelFormat.name unless already set",
        model_format_annotation,
    ),
    Rule(
        "component-defaults",
        _SRC + "predictor_custom.go, transformer_custom.go, explainer_custom.go, explainer_art.go Default; "
        "inference_service_defaults.go setResourceRequirementDefaults",
        "custom containers[0] named kserve-container with the configured resource defaults; ART explainer named, "
        "runtimeVersion and resources defaulted",
        component_defaults,
    ),
    Rule(
        "automount-service-account-token",
        _SRC + "inference_service_defaults.go disableAutomountServiceAccountToken",
        "security.autoMountServiceAccountToken false: automountServiceAccountToken: false on each component that leaves it unset",
        automount_token,
    ),
)


def apply_rules(obj: Obj, settings: Settings, editor: Editor) -> None:
    """Every rule over one InferenceService's data, in KServe's order; ``InputError`` names the bad field."""
    state = State()
    for rule in ISVC_RULES:
        rule.apply(obj, settings, state, editor)
