"""The daemon's reconciler: one object's inputs rendered, applied as its own ApplySet, and its status written.

Mirrors KServe's ``InferenceServiceReconciler.Reconcile`` (``pkg/controller/v1beta1/inferenceservice/controller.go``)
as a compiler would do it: gather exactly the inputs an offline ``render`` would get (the object, the runtimes it
may select, its storage credentials, ClusterStorageContainers, local model caches, LLM presets), render them, apply
the result with prune (``apply.py``; members read from the informer caches, so a no-op costs no request), and write
KServe's conditions to the status subresource (``status.py``). Every failure becomes the object's ``Ready=False``
condition and an Event, then ``ReconcileFailed`` so the controller retries the key with backoff.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from kserve_compile import constants as C
from kserve_compile.apply.apply import Applier
from kserve_compile.apply.events import WARNING, EventRecorder
from kserve_compile.apply.informer import ident, rv_of
from kserve_compile.apply.kube import ApiError, Kube
from kserve_compile.apply.leader import micro_time
from kserve_compile.apply.livecache import LiveCache
from kserve_compile.apply.metrics import Metrics
from kserve_compile.apply.objects import Obj
from kserve_compile.apply.ownwrites import AppliedRecord
from kserve_compile.apply.references import credential_inputs
from kserve_compile.apply.report import ApplyOptions, ApplyReport
from kserve_compile.apply.sources import KEY_OF_KIND, RECONCILED, Item, Sources
from kserve_compile.apply.status import compute_status, status_changed

__all__ = ["CACHE_OBJECT_KINDS", "INPUT_KINDS", "ReconcileFailed", "Reconciler", "Render", "StatusUrls"]

log = logging.getLogger("kserve_compile.daemon")
INPUT_KINDS = frozenset(
    {
        C.KIND_ISVC,
        C.KIND_SR,
        C.KIND_CSR,
        C.KIND_IG,
        C.KIND_CSC,
        "ServiceAccount",
        "Secret",
        C.KIND_LLMISVC,
        C.KIND_LLMISVC_CONFIG,
        C.KIND_LOCAL_MODEL_CACHE,
        C.KIND_LOCAL_MODEL_NAMESPACE_CACHE,
        C.KIND_LOCAL_MODEL_NODE_GROUP,
    }
)
# What render makes for the local model caches themselves (PVs, PVCs, LocalModelNodes, download Jobs): KServe's
# localmodel controller and node agent own those; the daemon renders isvcs against the caches but applies none of it.
CACHE_OBJECT_KINDS = frozenset({"PersistentVolume", "PersistentVolumeClaim", C.KIND_LOCAL_MODEL_NODE, "Job"})

# Inputs every isvc of a namespace (or the cluster) is rendered with: one the compiler refuses is left out and
# reported on itself, as an invalid ServingRuntime is (the isvcs it would have served then fail saying so)
SHARED_INPUT_KINDS = frozenset(
    {C.KIND_CSC, C.KIND_LOCAL_MODEL_CACHE, C.KIND_LOCAL_MODEL_NAMESPACE_CACHE, C.KIND_LOCAL_MODEL_NODE_GROUP}
)

Render = Callable[[Sequence[Obj], "Obj | None", str], list[Obj]]
StatusUrls = Callable[[Obj, "Obj | None"], dict[str, Any]]


def default_render(
    objects: Sequence[Obj], configmap: Obj | None, source: str, pod_webhook: str = "inline"
) -> list[Obj]:
    """``api.render_objects`` (live objects: the input checks the API server made are not made again), with the
    pod-webhook setting (``--pod-webhook cluster``: what KServe's pod webhook adds is left to it)."""
    from kserve_compile.api import CompileOptions, compile
    from kserve_compile.inputs.gather import cluster_inputs

    options = CompileOptions(checks=False, pod_webhook="cluster" if pod_webhook == "cluster" else "inline")
    return compile(cluster_inputs(objects, configmap, source), options).objects


def default_urls(isvc: Obj, configmap: Obj | None) -> dict[str, Any]:
    from kserve_compile.api import isvc_status

    return isvc_status(isvc, configmap)


class ReconcileFailed(Exception):
    """A failure already reported on the object (status and Event); the key is retried with backoff."""


class Reconciler:
    def __init__(
        self,
        kube: Kube,
        sources: Sources,
        metrics: Metrics,
        events: EventRecorder,
        is_leader: Callable[[], bool],
        render: Render | None = None,
        status_urls: StatusUrls | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.kube, self.sources, self.metrics, self.events = kube, sources, metrics, events
        self.is_leader = is_leader
        self.render = render or default_render
        self.status_urls = status_urls or default_urls
        self.clock = clock
        self.record: AppliedRecord = sources.record
        self.live: LiveCache = sources.live
        self._runtime_verdicts: dict[tuple[str, str, str, str], str] = {}
        self._leadership = threading.Lock()
        self._skipped = False  # a key was skipped while this replica did not lead

    def skipped_while_following(self) -> bool:
        """Whether a key went unreconciled because this replica did not lead, since the last ask (then cleared).

        The controller asks right after taking the Lease: only then does the new leader resync everything. A
        leader from the start skipped nothing, and a resync then would only race the first reconciles."""
        with self._leadership:
            skipped, self._skipped = self._skipped, False
            return skipped

    def _leads(self) -> bool:
        with self._leadership:  # read and noted under one lock: a skip is never missed by the next ask
            leads = self.is_leader()
            self._skipped = self._skipped or not leads
            return leads

    # --- one key ----------------------------------------------------------------------------------
    def reconcile(self, item: Item) -> ApplyReport | None:
        obj = self.sources.get(item)
        if obj is None or not self._leads():
            return None
        configmap = self.sources.configmap()
        if configmap is None:
            raise ReconcileFailed("no inferenceservice-config")  # never rendered from a guessed configuration
        started = time.monotonic()
        report = self._apply(obj, self._render(obj, configmap))
        self.metrics.inc("reconcile_total", result="success" if report.ok else "apply_error")
        self.metrics.inc("reconcile_duration_seconds_sum", time.monotonic() - started)
        if item[0] == "isvc":
            self._write_status(obj, report.applied, configmap, "; ".join(report.errors), "ApplyFailed")
        if not report.ok:
            self.events.event(obj, WARNING, "ApplyFailed", "; ".join(report.errors))
            raise ReconcileFailed("; ".join(report.errors))
        self.metrics.set("last_success_timestamp_seconds", self.clock())
        self._rerender_if_newer(item, obj)
        return report

    def report_failure(self, item: Item, reason: str, message: str) -> None:
        """A failure as the object's Event and (InferenceServices) its Ready=False condition."""
        obj = self.sources.get(item)
        if obj is None or not self.is_leader():
            return
        self.events.event(obj, WARNING, reason, message)
        if item[0] == "isvc":
            try:
                self._write_status(obj, [], self.sources.configmap(), message, reason)
            except Exception:
                log.exception("cannot write the failure status of %s/%s", item[1], item[2])

    def _rerender_if_newer(self, item: Item, rendered: Obj) -> None:
        """A spec that changed while we worked is rendered again now, not at the next resync."""
        current = self.sources.get(item)
        if current is not None and _generation(current) != _generation(rendered):
            self.metrics.inc("stale_renders_total")
            self.sources.queue.add(item)

    # --- render -------------------------------------------------------------------------------------
    def _inputs(self, obj: Obj, runtimes: list[Obj], configmap: Obj) -> list[Obj]:
        """What an offline render of ``obj`` would be given."""
        namespace, _ = ident(obj)
        if obj.get("kind") == C.KIND_LLMISVC:  # its presets: configs of its namespace and KServe's shared ones
            configs = [
                c
                for c in self.sources.llm_configs.items()
                if c["metadata"].get("namespace") in (namespace, C.KSERVE_NAMESPACE)
            ]
            return [obj, *configs, *self._cache_inputs(namespace)]
        inputs = [obj, *runtimes]
        if obj.get("kind") == C.KIND_ISVC:
            inputs += credential_inputs(obj, configmap, self.sources.accounts.get, self.sources.secrets.get)
            inputs += [o for informer in self.sources.storage_containers for o in informer.items()]
            inputs += self._cache_inputs(namespace)
        return inputs

    def _render(self, obj: Obj, configmap: Obj) -> list[Obj]:
        namespace, name = ident(obj)
        runtimes, refused = self._selectable_runtimes(namespace, configmap)
        inputs = self._inputs(obj, runtimes, configmap)
        try:
            out, inputs = self._render_contained(inputs, configmap, f"<cluster>/{namespace}/{obj['kind']}/{name}")
        except Exception as err:  # noqa: BLE001 - any render failure becomes a status condition
            self.metrics.inc("reconcile_total", result="render_error")
            message = _render_message(err)
            named = _named_runtime(obj)
            if named in refused:
                message = f"runtime {named!r} was refused: {refused[named]}; {message}"
            self.report_failure((KEY_OF_KIND[obj["kind"]], namespace, name), "RenderFailed", message)
            raise ReconcileFailed(message) from None
        inputs_ids = {(o.get("kind"), *ident(o)) for o in inputs}
        return [
            o
            for o in out
            if o.get("kind") not in CACHE_OBJECT_KINDS
            and (o.get("kind") not in INPUT_KINDS or (o.get("kind"), *ident(o)) not in inputs_ids)
        ]

    def _render_contained(self, inputs: list[Obj], configmap: Obj, source: str) -> tuple[list[Obj], list[Obj]]:
        """Render; a shared input the compiler refuses (a LocalModelCache with an unknown field, say) is left out
        with an Event on it, and the object rendered without it — one bad cache must not fail every isvc."""
        try:
            return self.render(inputs, configmap, source), inputs
        except Exception as err:  # noqa: BLE001 - the caller reports whatever remains
            refused = _refused_shared_inputs(err, inputs)
            if not refused:
                raise
        for bad, problems in refused:
            self.metrics.inc("invalid_inputs_total")
            if self.is_leader():  # once per object and message (the recorder drops repeats)
                self.events.event(bad, WARNING, "InvalidInput", f"left out of rendering: {problems}")
        left_out = {id(bad) for bad, _ in refused}
        kept = [o for o in inputs if id(o) not in left_out]
        return self.render(kept, configmap, source), kept

    def _cache_inputs(self, namespace: str) -> list[Obj]:
        """The LocalModelCaches and node groups, and the LocalModelNamespaceCaches of ``namespace``."""
        return [
            o
            for informer in self.sources.local_caches
            for o in informer.items()
            if o.get("kind") != C.KIND_LOCAL_MODEL_NAMESPACE_CACHE or o["metadata"].get("namespace") == namespace
        ]

    def _selectable_runtimes(self, namespace: str, configmap: Obj) -> tuple[list[Obj], dict[str, str]]:
        """Runtimes an isvc of ``namespace`` may select; a runtime KServe's webhook would refuse is left out."""
        ok: list[Obj] = []
        refused: dict[str, str] = {}
        candidates = [r for r in self.sources.runtimes.items() if r["metadata"].get("namespace") == namespace]
        for runtime in [*candidates, *self.sources.cluster_runtimes.items()]:
            problem = self._runtime_problem(runtime, configmap)
            if problem:
                refused[runtime["metadata"]["name"]] = problem
                if self.is_leader():  # once per runtime and message (the recorder drops repeats)
                    self.events.event(runtime, WARNING, "InvalidRuntime", f"left out of runtime selection: {problem}")
            else:
                ok.append(runtime)
        return ok, refused

    def _runtime_problem(self, runtime: Obj, configmap: Obj) -> str:
        meta = runtime["metadata"]
        key = (runtime["kind"], meta.get("namespace", ""), meta["name"], rv_of(runtime) + rv_of(configmap))
        if key not in self._runtime_verdicts:
            try:
                self.render(
                    [runtime], configmap, f"<cluster>/{meta.get('namespace', '')}/{runtime['kind']}/{meta['name']}"
                )
                verdict = ""
            except Exception as err:  # noqa: BLE001 - any refusal is reported on the runtime itself
                verdict = _render_message(err)
                self.metrics.inc("invalid_runtimes_total")
            if len(self._runtime_verdicts) > 10_000:  # old resourceVersions: drop them all, re-check on use
                self._runtime_verdicts.clear()
            self._runtime_verdicts[key] = verdict
        return self._runtime_verdicts[key]

    # --- apply and status ---------------------------------------------------------------------------
    def _apply(self, obj: Obj, rendered: list[Obj]) -> ApplyReport:
        namespace, name = ident(obj)
        suffix = RECONCILED[KEY_OF_KIND[obj["kind"]]][1] + C.APPLYSET_PARENT_SUFFIX
        opts = ApplyOptions(
            applyset=f"{name}{suffix}",
            namespace=namespace,
            owner=obj,
            prune=True,
            is_leader=self.is_leader,
            live=self.live,
            record=self.record,
        )
        report = Applier(self.kube, opts).run(rendered)
        for action, n in report.counts().items():
            self.metrics.inc("apply_objects_total", n, action=action)
        if report.counts().get("configured"):
            self.metrics.inc("drift_detected_total", report.counts()["configured"])
        return report

    def _write_status(self, isvc: Obj, applied: list[Obj], configmap: Obj | None, error: str, reason: str) -> None:
        try:
            urls = self.status_urls(isvc, configmap) if not error and configmap is not None else {}
        except Exception:  # noqa: BLE001 - URLs are best effort; conditions still get written
            urls = {}
        status = compute_status(isvc, applied, urls, error, reason, now=micro_time(self.clock())[:19] + "Z")
        if not status_changed(isvc.get("status"), status) or not self.is_leader():
            return
        meta = isvc["metadata"]
        body = {
            "apiVersion": isvc["apiVersion"],
            "kind": isvc["kind"],
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
            "status": status,
        }
        try:
            written = self.kube.apply(body, C.STATUS_FIELD_MANAGER, force=True, subresource="status")
        except ApiError as err:
            self.metrics.inc("status_write_errors_total", reason=str(err.status))
            return
        self.metrics.inc("status_writes_total")
        # the watch brings the same object; keep the response only if no newer event came first (issue 17)
        self.sources.isvcs.replace_if_unchanged(ident(isvc), rv_of(isvc), written)


def _generation(obj: Obj) -> Any:
    return (obj.get("metadata") or {}).get("generation")


def _named_runtime(obj: Obj) -> str:
    spec = (obj.get("spec") or {}).get(C.PREDICTOR) or {}
    return str((spec.get("model") or {}).get("runtime") or "")


def _errors(err: Exception) -> list[Any]:
    """The error-severity problems of a CompileError (its warnings say nothing about why it failed)."""
    problems = getattr(err, "problems", None) or []
    return [p for p in problems if getattr(p, "severity", "error") == "error"] or list(problems)


def _render_message(err: Exception) -> str:
    problems = _errors(err)
    if problems:
        return "; ".join(p.format() for p in problems)[:1000]
    return f"{type(err).__name__}: {err}"[:1000]


def _refused_shared_inputs(err: Exception, inputs: Sequence[Obj]) -> list[tuple[Obj, str]]:
    """The inputs of SHARED_INPUT_KINDS the problems of ``err`` name, each with what was said about it."""
    said: dict[tuple[str, str], list[str]] = {}
    for p in _errors(err):
        said.setdefault((p.kind, p.name), []).append(f"{p.path}: {p.message}" if p.path else p.message)
    return [
        (o, "; ".join(said[(o["kind"], o["metadata"]["name"])])[:1000])
        for o in inputs
        if o.get("kind") in SHARED_INPUT_KINDS and (o.get("kind"), (o.get("metadata") or {}).get("name")) in said
    ]
