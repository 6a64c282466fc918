"""The one driver: every command, the library API, the daemon and the golden tests compile through :func:`compile`.

    documents → v1 Lists as their items → well-formed envelopes (inputs.envelope) → namespaces filled in (-n)
              → tagged with their origins (explain)
              → the config, found once → compiled / passed through / skipped (inputs.passthrough)
              → input checks (checks.inputs; the daemon turns them off) → typed inputs (inputs.context)
              → each InferenceService: local-model rewrite → plan → render (pod webhook inlined, or left to the
                cluster's: ``pod_webhook``)
              → InferenceGraphs, LLMInferenceServices, local model caches, CA-bundle copies
              → Knative's admission of every Knative Service (checks.knative, under Knative's config-features)
              → one list in apply order (emit.order) → offline schemas (validate)

Every problem of every stage is gathered, one per place, and raised together as a :class:`CompileError`: a bad input
never yields partial output. The stages are pure; this module only runs them in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from . import constants as C
from . import graph, llmisvc, localmodel
from .checks.inputs import input_problems
from .emit.order import identity, sort_objects
from .errors import CompileError, InputError, Problem, by_place, merge_problems, note_problem, once_per_run
from .gcpause import gc_paused
from .inputs.config import KServeConfig, load_config
from .inputs.context import Context, ca_bundle_keys, prepare
from .inputs.defaults import embedded_configmap
from .inputs.envelope import well_formed
from .inputs.kinds import CORE_KINDS, ISVC, RUNTIME, KindTable
from .inputs.knative_features import KEY as KNATIVE_FEATURES
from .inputs.knative_features import is_features_configmap, load_features
from .inputs.namespacing import group_of, with_namespace
from .inputs.parse import Document
from .inputs.passthrough import Split, expand_lists, is_config, split_inputs
from .plan.defaulting import admitted
from .plan.isvc import Plan, plan_isvc
from .plan.mode import resolve_mode
from .plan.status import isvc_address, plan_status
from .provenance import is_tracing, stamp, tracing
from .provenance.sources import builder_origin, tag_document
from .render.ca_bundle import ca_bundle_config_maps
from .render.isvc import render_isvc

if TYPE_CHECKING:  # graph, LLM and local-model support load only when an input needs them
    from .graph.collection import GraphInputs
    from .graph.graph_types import InferenceGraph, TrainedModel
    from .graph.targets import IsvcTarget
    from .llmisvc.services import LLMResult
    from .localmodel.collection import LocalModelInputs

KINDS: KindTable = {**CORE_KINDS, **graph.KINDS, **llmisvc.KINDS, **localmodel.KINDS}
RUNTIME_READERS = (ISVC, RUNTIME, graph.FEATURE)  # the groups whose presence needs the runtimes
# The ConfigMaps a feature reads besides the config, found from its documents.
READ_CONFIGMAPS: dict[str, Callable[[Sequence[Document]], set[tuple[str, str]]]] = {
    llmisvc.FEATURE: llmisvc.configmaps,
}


@dataclass(frozen=True)
class CompileOptions:
    namespace: str | None = None  # -n: the namespace of inputs that name none (None: "default", as the API server)
    strict: bool = False  # --strict: refuse objects kserve-compile does not compile instead of passing them through
    checks: bool = True  # the input checks; the daemon turns them off (the API server made them on its objects)
    kube_version: str | None = None  # validate: check inputs and outputs against this Kubernetes version's schemas
    trace: bool = False  # explain: every value of the output carries its origin
    keep_read_inputs: bool = False  # fn: the objects read but not rendered (ServiceAccounts, ...) stay in the output
    # --pod-webhook: "inline" writes what KServe's pod webhook adds into the pod templates; "cluster" leaves it to
    # the webhook installed in the cluster (the output is what KServe's controllers create)
    pod_webhook: Literal["inline", "cluster"] = "inline"


@dataclass
class CompiledIsvc:
    plan: Plan
    doc: Document
    objects: list[dict[str, Any]]


@dataclass
class Result:
    objects: list[dict[str, Any]]  # rendered and passed through, in apply order
    warnings: list[Problem] = field(default_factory=list)  # and notes
    inputs: int = 0  # input documents
    context: Context | None = None
    isvcs: list[CompiledIsvc] = field(default_factory=list)
    graphs: list[tuple[InferenceGraph, Document]] = field(default_factory=list)
    llm: LLMResult | None = None

    def status_rows(self) -> list[tuple[str, dict[str, Any]]]:
        """``(namespace/name, status)`` of every InferenceService and LLMInferenceService, as KServe reports it."""
        assert self.context is not None
        config = self.context.config
        rows = [
            (f"{c.plan.isvc.metadata.namespace}/{c.plan.isvc.metadata.name}", _isvc_status(c.plan, config))
            for c in self.isvcs
        ]
        rows.sort(key=lambda row: row[0])
        if self.llm is not None:
            from .llmisvc.status import llm_status

            llm_rows = [(f"{s.namespace}/{s.name}", llm_status(s, r, self.llm.options)) for s, r in self.llm.services]
            rows += sorted(llm_rows, key=lambda row: row[0])
        return rows

    def isvc_targets(self) -> dict[tuple[str, str], IsvcTarget]:
        """How an InferenceGraph step reaches each isvc of the run: its address, protocol and model name."""
        assert self.context is not None
        return {
            (c.plan.isvc.metadata.namespace, c.plan.isvc.metadata.name): _target(c, self.context) for c in self.isvcs
        }


@gc_paused
def compile(documents: Sequence[Document], options: CompileOptions = CompileOptions()) -> Result:
    """Every object KServe's controllers and webhooks would create for ``documents``, with the objects passed
    through, in apply order; warnings and notes with them. Raises :class:`CompileError` with every problem."""
    with tracing() if options.trace else nullcontext():
        return _Run(documents, options).compile()


class _Run:
    """One compilation: its stages in order, and the problems they gather."""

    def __init__(self, documents: Sequence[Document], options: CompileOptions) -> None:
        self.documents = documents
        self.options = options
        self.errors: list[Problem] = []  # the compiler's own (KServe's wording)
        self.warnings: list[Problem] = []
        self.config_doc: Document | None = None
        self.read_configmaps: list[Document] = []

    def compile(self) -> Result:
        docs, self.errors = well_formed(expand_lists(self.documents))
        if not docs and self.errors:
            raise CompileError(self.errors)
        if is_tracing():
            docs = [Document(tag_document(d), d.file, d.index, d.positions) for d in docs]
        config, config_data = self._config(docs)
        ca_bundle = config.storage_initializer.ca_bundle_config_map_name if config is not None else ""
        docs = with_namespace(docs, self.options.namespace, [ca_bundle] if ca_bundle else [])
        split = split_inputs(docs, KINDS, _read_configmaps(docs, config), strict=self.options.strict)
        self.read_configmaps = [d for d in split.compiled if d.kind == "ConfigMap" and not is_config(d)]
        checked = self._checks(split, config)
        if config is None:
            self._raise(checked, split)
        assert config is not None
        compiled = self._shaped(split.compiled)
        ctx = prepare(compiled, KINDS, config, config_data, runtimes_for=RUNTIME_READERS)
        self.errors += ctx.problems
        result = self._render(ctx)
        rendered = list(result.objects)
        objects = rendered + [d.data for d in split.passed] + self._read_inputs(split)
        self.errors += _duplicates(objects, split.passed)
        if not self._failed(checked):
            checked += self._knative(result, split)
        if self.options.kube_version and not self._failed(checked):
            from .checks.offline import output_schema_problems

            checked += output_schema_problems(rendered, self.options.kube_version)
        self._raise(checked, split)
        if is_tracing():
            for obj in rendered:
                stamp(obj, builder_origin(obj))
        result.objects = sort_objects(objects)
        result.warnings = once_per_run([p for p in checked if p.severity != "error"] + self.warnings + split.notes)
        result.inputs = len(self.documents)
        return result

    # --- the stages --------------------------------------------------------------------------------------------

    def _config(self, docs: Sequence[Document]) -> tuple[KServeConfig | None, dict[str, Any]]:
        """The run's ``inferenceservice-config`` (KServe's shipped one when none is given), parsed once."""
        found = [d for d in docs if is_config(d)]
        self.config_doc = found[0] if found else None
        try:
            config = load_config(found)
        except CompileError as exc:
            self.errors += exc.problems
            return None, {}
        data = found[0].data.get("data") if found else embedded_configmap()["data"]
        return config, data or {}

    def _shaped(self, docs: Sequence[Document]) -> list[Document]:
        """The documents the input stage keeps as plain data (ClusterStorageContainers), those of the wrong shape out
        (always: the pod webhook's builders read them as their CRD types them)."""
        if not any(doc.kind == C.KIND_CSC for doc in docs):
            return list(docs)
        from .checks.shapes import shape_problems

        kept = []
        for doc in docs:
            found = shape_problems(doc) if doc.kind == C.KIND_CSC else []
            self.errors += found
            if not found:
                kept.append(doc)
        return kept

    def _checks(self, split: Split, config: KServeConfig | None) -> list[Problem]:
        checked = input_problems(split.compiled, split.passed) if self.options.checks else []
        if self.options.kube_version:
            from .checks.offline import input_schema_problems

            admit = lambda obj: admitted(obj, config)  # noqa: E731 - the API server checks what the webhook admits
            checked += input_schema_problems(split.compiled, split.passed, admit, self.options.kube_version)
        return checked

    def _render(self, ctx: Context) -> Result:
        graphs = graph.collect(ctx.features[graph.FEATURE], self.errors) if ctx.features[graph.FEATURE] else None
        cache_docs = ctx.features[localmodel.FEATURE]
        local_models = localmodel.collect(cache_docs, self.errors) if cache_docs else None
        trained = self._trained(graphs, ctx)
        result = Result([], context=ctx, graphs=graphs.graphs if graphs else [])
        for isvc, doc in ctx.isvcs:
            key = (isvc.metadata.namespace, isvc.metadata.name)
            compiled = self._isvc(isvc, doc, ctx, local_models, trained.get(key, []))
            if compiled is not None:
                result.isvcs.append(compiled)
                result.objects += compiled.objects
        if result.graphs:
            result.objects += self._graphs(result, ctx)
        if ctx.features[llmisvc.FEATURE]:
            result.llm = self._llm_services(ctx, local_models)
            result.objects += result.llm.objects
        if local_models is not None:
            result.objects += self._local_models(result, ctx, local_models)
        namespaces = {c.plan.isvc.metadata.namespace for c in result.isvcs}
        namespaces |= {svc.namespace for svc, _ in (result.llm.services if result.llm else [])}
        try:
            result.objects += ca_bundle_config_maps(ctx.config, ctx.ca_bundle, namespaces)
        except CompileError as exc:
            self.errors += [self._in_ca_bundle(p, ctx) for p in exc.problems]
        return result

    def _in_ca_bundle(self, problem: Problem, ctx: Context) -> Problem:
        """A problem of the CA-bundle source's own fields (``data``) located in its document."""
        name = ctx.config.storage_initializer.ca_bundle_config_map_name
        doc = next((d for d in self.read_configmaps if d.name == name), None)
        return doc.problem(problem.message, problem.path) if doc is not None and problem.path == "data" else problem

    def _trained(self, graphs: GraphInputs | None, ctx: Context) -> dict[tuple[str, str], list[TrainedModel]]:
        if graphs is None or not graphs.trained:
            return {}
        from .graph.collection import trained_by_isvc

        isvcs = [(isvc.metadata.namespace, isvc.metadata.name) for isvc, _ in ctx.isvcs]
        return trained_by_isvc(graphs.trained, isvcs, self.errors)

    def _isvc(
        self,
        isvc: Any,
        doc: Document,
        ctx: Context,
        local_models: LocalModelInputs | None,
        trained: Sequence[TrainedModel],
    ) -> CompiledIsvc | None:
        """One InferenceService: the local-model webhook's rewrite, its plan, its objects (TrainedModels filled in)."""
        from .localmodel.rewrite import rewrite_isvc

        try:
            plan = plan_isvc(rewrite_isvc(isvc, local_models, ctx.config), ctx.config, ctx.runtimes)
            if trained:
                from .graph.trained_model import check_plan_trained_models

                check_plan_trained_models(plan.isvc, trained)
            rendered = render_isvc(plan, ctx.config, ctx.cluster, inline_webhook=self.options.pod_webhook == "inline")
        except InputError as exc:
            self.errors.append(doc.problem(exc.message, exc.path))
            return None
        except CompileError as exc:
            self.errors += [p.with_context(file=doc.file, kind=doc.kind, name=doc.name) for p in exc.problems]
            return None
        if trained:
            from .graph.trained_model import fill_model_config

            fill_model_config(rendered.objects, plan.isvc, trained)
        self.warnings += [note_problem(doc, n) for n in rendered.notes]
        return CompiledIsvc(plan, doc, rendered.objects)

    def _graphs(self, result: Result, ctx: Context) -> list[dict[str, Any]]:
        """InferenceGraphs, whose steps reach the isvcs of the same run through their planned addresses."""
        from .graph.render import render_graph

        targets = result.isvc_targets()
        objects: list[dict[str, Any]] = []
        for ig, doc in result.graphs:
            try:
                mode = resolve_mode(ig.metadata.annotations, (ig.status or {}).get("deploymentMode"), ctx.config)
                objects += render_graph(ig, ctx.config, mode, targets)
            except InputError as exc:
                self.errors.append(doc.problem(exc.message, exc.path))
        return objects

    def _llm_services(self, ctx: Context, local_models: LocalModelInputs | None) -> LLMResult:
        """LLMInferenceServices, against the same config, live objects, read ConfigMaps and local model caches."""
        from .llmisvc.services import LLMContext, render_llm_services

        llm_ctx = LLMContext(ctx.config, ctx.cluster, ctx.config_data, ctx.configmaps, local_models)
        result = render_llm_services(llmisvc.collect(ctx.features[llmisvc.FEATURE], self.errors), llm_ctx)
        self.errors += result.problems
        self.warnings += result.warnings
        return result

    def _local_models(self, result: Result, ctx: Context, caches: LocalModelInputs) -> list[dict[str, Any]]:
        """The caches' volumes, LocalModelNodes and download Jobs; the isvcs and LLMInferenceServices labelled for a
        cache are its consumers (``ReconcileForIsvcs`` lists both kinds)."""
        from .localmodel.controller import Consumer
        from .localmodel.render import render

        consumers = [
            Consumer(C.KIND_ISVC, m.namespace, m.name, m.labels, m.annotations)
            for m in (c.plan.isvc.metadata for c in result.isvcs)
        ]
        services = [svc for svc, _ in (result.llm.services if result.llm else [])]
        consumers += [Consumer(C.KIND_LLMISVC, s.namespace, s.name, s.labels, s.annotations) for s in services]
        try:
            objects, more = render(caches, consumers, ctx.config, ctx.cluster)
        except CompileError as exc:
            self.errors += exc.problems
            return []
        self.warnings += more
        return objects

    def _knative(self, result: Result, split: Split) -> list[Problem]:
        """Knative's admission of the run's Knative Services under its config-features: errors in validate, else a
        warning; each located in the input behind the Service."""
        objects = result.objects + [d.data for d in split.passed]
        if not any(o.get("apiVersion") == C.KNATIVE_SERVING_API_VERSION for o in objects):
            return load_features(split.compiled)[1] if any(map(is_features_configmap, split.compiled)) else []
        from .checks.knative import knative_admission

        features, problems = load_features(split.compiled)
        sources = {(d.namespace, d.name): d for d in split.passed if d.api_version == C.KNATIVE_SERVING_API_VERSION}
        sources |= {(ig.namespace, ig.metadata.name): doc for ig, doc in result.graphs}
        sources |= {_ref(o): c.doc for c in result.isvcs for o in c.objects}
        refuse = self.options.kube_version is not None
        return problems + knative_admission(objects, sources, features, refuse=refuse)

    # --- output --------------------------------------------------------------------------------------------------

    def _read_inputs(self, split: Split) -> list[dict[str, Any]]:
        """With ``keep_read_inputs``: the compiled documents that are read, not rendered (not KServe's kinds)."""
        if not self.options.keep_read_inputs:
            return []
        return [d.data for d in split.compiled if group_of(d.api_version) != C.SERVING_GROUP and not is_config(d)]

    def _located(self, problem: Problem) -> Problem:
        """A problem of the config found by a later stage (``data.<key>``, no file) located in the config's document."""
        doc = self.config_doc
        if problem.file or doc is None or not (problem.path.startswith("data.") or problem.name == doc.name):
            return problem
        return doc.problem(problem.message, problem.path, problem.severity)

    def _failed(self, checked: Sequence[Problem]) -> bool:
        return bool(self.errors) or any(p.severity == "error" for p in checked)

    def _raise(self, checked: list[Problem], split: Split) -> None:
        """Raise every error, one per place (KServe's wording first), with the warnings, if there is any error."""
        checked_errors = [p for p in checked if p.severity == "error"]
        if not self.errors and not checked_errors:
            return
        errors = merge_problems([self._located(p) for p in self.errors], checked_errors)
        notes = [p for p in checked if p.severity != "error"]
        raise CompileError(by_place(errors) + once_per_run(notes + self.warnings + split.notes))


def _isvc_status(plan: Plan, config: KServeConfig) -> dict[str, Any]:
    return {"deploymentMode": plan.mode, **plan_status(plan, config)}


def _target(compiled: CompiledIsvc, ctx: Context) -> IsvcTarget:
    from .graph.targets import IsvcTarget, isvc_target

    plan = compiled.plan
    if plan.stopped:
        return IsvcTarget("", None, plan.isvc.metadata.name, error="InferenceService is stopped")
    return isvc_target(plan.isvc, isvc_address(plan, ctx.config), ctx.runtimes)


def _read_configmaps(docs: Sequence[Document], config: KServeConfig | None) -> set[tuple[str, str]]:
    """``(namespace, name)`` of the ConfigMaps the compiler reads besides its config: the CA-bundle source the config
    names, and those the features' documents refer to."""
    wanted = (ca_bundle_keys(config) if config is not None else set()) | {KNATIVE_FEATURES}
    for feature, configmaps in READ_CONFIGMAPS.items():
        wanted |= configmaps([d for d in docs if KINDS.get((d.api_version, d.kind)) == feature])
    return wanted


def _ref(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _duplicates(objects: list[dict[str, Any]], passed: Sequence[Document]) -> list[Problem]:
    """A passed-through object with the identity of another object of the run (rendered or passed) is an error."""
    if not passed:
        return []  # the rendered objects' own names are unique by construction (KServe's child names)
    owners: dict[tuple[str, str, str, str], int] = {}
    for i, obj in enumerate(objects):
        group, _, kind, ns, name = identity(obj, i)
        owners[(group, kind, ns, name)] = owners.get((group, kind, ns, name), 0) + 1
    problems = []
    for doc in passed:
        group, _, kind, ns, name = identity(doc.data, 0)
        if owners.get((group, kind, ns, name), 0) > 1:
            problems.append(
                doc.problem(
                    f"{kind} {ns + '/' if ns else ''}{name} is defined twice in the run (by the inputs or by what they render)",
                    "metadata.name",
                )
            )
    return problems


__all__ = ["KINDS", "CompileError", "CompileOptions", "CompiledIsvc", "Result", "compile"]
