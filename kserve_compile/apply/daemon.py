"""The in-cluster daemon: watch KServe inputs, re-render, apply, write status; one leader per shard.

Mirrors KServe's InferenceService controller loop (``pkg/controller/v1beta1/inferenceservice/controller.go``) on
controller-runtime's shape (apply_ecosystem.md §5):

* informers (``informer.py``) for InferenceServices, InferenceGraphs, ServingRuntimes, ClusterServingRuntimes,
  the ``inferenceservice-config`` ConfigMap, every child kind (by ApplySet label) and ApplySet parents; the
  ServiceAccounts and Secrets an isvc's storage credentials name are watched one by one when first needed;
* nothing is reconciled until every informer has listed and the ConfigMap exists (``/readyz`` says why not);
* a rate-limited work queue (``workqueue.py``): one key's failure — validation, render, apply or any
  unexpected exception — becomes its ``Ready=False`` condition and an Event, and is retried with
  exponential backoff while every other key proceeds;
* each InferenceService is its own ApplySet (parent ConfigMap ``<isvc>.kserve-compile``), owned by the isvc
  so Kubernetes garbage-collects everything when the isvc is deleted; a resync with nothing changed
  compares against the caches (``livecache.py``) and sends no request;
* Lease leader election (``leader.py``): only the leader writes; losing the Lease logs why and exits;
  SIGTERM releases it;
* ``/healthz``, ``/readyz`` and ``/metrics`` over the standard library's HTTP server.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import random
import signal
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kserve_compile import constants as C
from kserve_compile.apply.engine import Applier, ApplyOptions, ApplyReport
from kserve_compile.apply.events import WARNING, EventRecorder
from kserve_compile.apply.informer import (
    Informer,
    InformerGroup,
    NamedInformers,
    ident,
    rv_of,
)
from kserve_compile.apply.kube import ApiError, Kube
from kserve_compile.apply.leader import LeaderElector, micro_time
from kserve_compile.apply.livecache import AppliedRecord, LiveCache
from kserve_compile.apply.objects import Obj, group_kind, key_of, split_api_version
from kserve_compile.apply.rbac import CHILD_KINDS, PERMISSIONS
from kserve_compile.apply.references import credential_inputs
from kserve_compile.apply.status import compute_status, status_changed
from kserve_compile.apply.workqueue import RateLimitedQueue

__all__ = ["PERMISSIONS", "Daemon", "DaemonConfig", "Metrics", "shard_lease_name"]

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
# The kinds the daemon reconciles: queue key kind → (object kind, ApplySet parent infix)
RECONCILED = {
    "isvc": (C.KIND_ISVC, ""),
    "ig": (C.KIND_IG, ".inferencegraph"),
    "llm": (C.KIND_LLMISVC, ".llminferenceservice"),
}
KEY_OF_KIND = {kind: key for key, (kind, _) in RECONCILED.items()}
Item = tuple[str, str, str]  # ("isvc" | "ig", namespace, name)


def shard_lease_name(namespaces: Sequence[str], selector: str, base: str = C.DAEMON_LEASE_NAME) -> str:
    """One Lease per shard: the base name for the whole cluster, a stable suffix for a namespace/selector shard."""
    if not namespaces and not selector:
        return base
    digest = hashlib.sha256(f"{','.join(sorted(namespaces))}|{selector}".encode()).hexdigest()[:10]
    return f"{base}-{digest}"


@dataclass
class DaemonConfig:
    namespaces: tuple[str, ...] = ()  # () = all namespaces
    selector: str = ""  # label selector on InferenceServices and InferenceGraphs
    config_namespace: str = C.KSERVE_NAMESPACE
    leader_elect: bool = True
    lease_namespace: str = C.KSERVE_NAMESPACE
    lease_name: str = ""  # "" = shard_lease_name(namespaces, selector)
    identity: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.urandom(3).hex()}")
    lease_seconds: float = 15.0
    renew_seconds: float = 10.0
    retry_seconds: float = 2.0
    resync_seconds: float = 600.0
    watch_timeout: int = 300
    watch_read_timeout: float | None = None  # None = watch_timeout + 30 s
    not_ready_after: float = 60.0  # an informer failing this long fails /readyz
    dead_after: float = 300.0  # ... and this long fails /healthz (the kubelet restarts the pod)
    retry_base: float = 0.5
    retry_max: float = 300.0
    backoff_max: float = 30.0
    workers: int = 4  # concurrent reconciles; the queue never hands one key to two workers
    pod_webhook: str = "inline"  # --pod-webhook: "cluster" leaves what KServe's pod webhook adds to the cluster's

    def __post_init__(self) -> None:
        self.lease_name = self.lease_name or shard_lease_name(self.namespaces, self.selector)


# --- metrics ----------------------------------------------------------------------------------
class Metrics:
    """Counters and gauges in the Prometheus text format (no client library needed for a handful)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counters: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}  # counts, and sums of seconds
        self.gauges: dict[str, float] = {}

    def inc(self, name: str, value: float = 1, **labels: str) -> None:
        key = (name, tuple(sorted(labels.items())))
        with self._lock:
            self.counters[key] = self.counters.get(key, 0) + value

    def set(self, name: str, value: float) -> None:
        with self._lock:
            self.gauges[name] = value

    def get(self, name: str, **labels: str) -> float:
        with self._lock:
            return self.counters.get((name, tuple(sorted(labels.items()))), 0)

    def total(self, name: str) -> float:
        with self._lock:
            return sum(v for (n, _), v in self.counters.items() if n == name)

    def render(self) -> str:
        lines = []
        with self._lock:
            for (name, labels), value in sorted(self.counters.items()):
                lab = ",".join(f'{k}="{v}"' for k, v in labels)
                lines.append(f"kserve_compile_{name}{{{lab}}} {value:g}" if lab else f"kserve_compile_{name} {value:g}")
            for name, value in sorted(self.gauges.items()):
                lines.append(f"kserve_compile_{name} {value:g}")
        return "\n".join(lines) + "\n"


# --- the renderer -----------------------------------------------------------------------------
Render = Callable[[Sequence[Obj], "Obj | None", str], list[Obj]]
StatusUrls = Callable[[Obj, "Obj | None"], dict[str, Any]]


def _default_render(
    objects: Sequence[Obj], configmap: Obj | None, source: str, pod_webhook: str = "inline"
) -> list[Obj]:
    """``api.render_objects`` (live objects: the input checks are not made again), with the pod-webhook setting."""
    from kserve_compile.api import CompileOptions, compile
    from kserve_compile.inputs.gather import cluster_inputs

    options = CompileOptions(checks=False, pod_webhook="cluster" if pod_webhook == "cluster" else "inline")
    return compile(cluster_inputs(objects, configmap, source), options).objects


def _default_urls(isvc: Obj, configmap: Obj | None) -> dict[str, Any]:
    from kserve_compile.api import isvc_status

    return isvc_status(isvc, configmap)


class ReconcileFailed(Exception):
    """A failure already reported on the object (status and Event); the key is retried with backoff."""


# --- the daemon -------------------------------------------------------------------------------
class Daemon:
    def __init__(
        self,
        kube: Kube,
        cfg: DaemonConfig,
        render: Render | None = None,
        status_urls: StatusUrls | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.kube, self.cfg = kube, cfg
        self.render = render or functools.partial(_default_render, pod_webhook=cfg.pod_webhook)
        self.status_urls = status_urls or _default_urls
        self.clock = clock
        self.metrics = Metrics()
        self.queue: RateLimitedQueue[Item] = RateLimitedQueue(cfg.retry_base, cfg.retry_max)
        self.stop = threading.Event()
        self.heartbeat = time.monotonic()
        self.elector = (
            LeaderElector(kube, cfg.lease_namespace, cfg.lease_name, cfg.identity, cfg.lease_seconds, clock)
            if cfg.leader_elect
            else None
        )
        self.events = EventRecorder(kube, on_error=lambda status: self.metrics.inc("event_errors_total"))
        self.record = AppliedRecord()
        self.live = LiveCache()
        self._seen: dict[Item, tuple[Any, ...]] = {}
        self._runtime_verdicts: dict[tuple[str, str, str, str], str] = {}
        self._workers: list[threading.Thread] = []
        scoped = cfg.namespaces or ("",)
        self.isvcs = self._group("serving.kserve.io/v1beta1", C.KIND_ISVC, scoped, self._on_isvc, cfg.selector)
        self.graphs = self._group("serving.kserve.io/v1alpha1", C.KIND_IG, scoped, self._on_graph, cfg.selector)
        self.runtimes = self._group("serving.kserve.io/v1alpha1", C.KIND_SR, scoped, self._on_runtime)
        self.cluster_runtimes = self._informer("serving.kserve.io/v1alpha1", C.KIND_CSR, "", self._on_global)
        self.configmaps = self._informer(
            "v1", "ConfigMap", cfg.config_namespace, self._on_global, field_selector=f"metadata.name={C.CONFIGMAP_NAME}"
        )
        self.accounts = NamedInformers(lambda ns, n: self._named("ServiceAccount", ns, n), self.stop)
        self.secrets = NamedInformers(lambda ns, n: self._named("Secret", ns, n), self.stop)
        self.storage_containers = self._optional("serving.kserve.io/v1alpha1", C.KIND_CSC)
        # LLMInferenceServices and their configs, where the cluster serves the kinds
        self.llms = self._optional_group(C.V1ALPHA2, C.KIND_LLMISVC, scoped, self._on_llm, cfg.selector)
        self.llm_configs = self._optional_group(C.V1ALPHA2, C.KIND_LLMISVC_CONFIG, scoped, self._on_llm_config)
        if cfg.namespaces and C.KSERVE_NAMESPACE not in cfg.namespaces:  # KServe's shared presets live there
            self.llm_configs.parts += self._optional_group(
                C.V1ALPHA2, C.KIND_LLMISVC_CONFIG, (C.KSERVE_NAMESPACE,), self._on_llm_config
            ).parts
        # Local model caches: an isvc a cache covers is rendered with the cache's PVC mounted, as render does
        self.local_caches = [
            *self._optional("serving.kserve.io/v1alpha1", C.KIND_LOCAL_MODEL_CACHE),
            *self._optional("serving.kserve.io/v1alpha1", C.KIND_LOCAL_MODEL_NODE_GROUP),
            *self._optional_group(
                "serving.kserve.io/v1alpha1", C.KIND_LOCAL_MODEL_NAMESPACE_CACHE, scoped, self._on_global
            ).parts,
        ]
        self.fixed: list[Informer] = [
            *self.isvcs.parts,
            *self.graphs.parts,
            *self.runtimes.parts,
            self.cluster_runtimes,
            self.configmaps,
            *self.storage_containers,
            *self.llms.parts,
            *self.llm_configs.parts,
            *self.local_caches,
        ]
        self.fixed += self._child_informers(scoped)

    # --- informers --------------------------------------------------------------------------------
    def _informer(
        self,
        api_version: str,
        kind: str,
        namespace: str,
        handler: Callable[[str, Obj], None],
        field_selector: str = "",
        label_selector: str = "",
    ) -> Informer:
        return Informer(
            self.kube,
            self.kube.resource(api_version, kind),
            namespace,
            handler,
            self.metrics,
            field_selector=field_selector,
            label_selector=label_selector,
            watch_timeout=self.cfg.watch_timeout,
            read_timeout=self.cfg.watch_read_timeout,
            backoff_max=self.cfg.backoff_max,
        )

    def _group(
        self,
        api_version: str,
        kind: str,
        namespaces: Sequence[str],
        handler: Callable[[str, Obj], None],
        label_selector: str = "",
    ) -> InformerGroup:
        return InformerGroup(
            self._informer(api_version, kind, ns, handler, label_selector=label_selector) for ns in namespaces
        )

    def _optional(self, api_version: str, kind: str) -> list[Informer]:
        """A cluster-scoped input informer, or none where the cluster does not serve the kind."""
        try:
            return [self._informer(api_version, kind, "", self._on_global)]
        except ApiError:
            return []

    def _optional_group(
        self,
        api_version: str,
        kind: str,
        namespaces: Sequence[str],
        handler: Callable[[str, Obj], None],
        label_selector: str = "",
    ) -> InformerGroup:
        """A namespaced input informer group, empty where the cluster does not serve the kind."""
        try:
            self.kube.resource(api_version, kind)
        except ApiError:
            return InformerGroup([])
        return self._group(api_version, kind, namespaces, handler, label_selector)

    def objects(self, key_kind: str) -> InformerGroup:
        """The informer cache of a reconciled kind ("isvc", "ig", "llm")."""
        return {"isvc": self.isvcs, "ig": self.graphs, "llm": self.llms}[key_kind]

    def _named(self, kind: str, namespace: str, name: str) -> Informer:
        return self._informer("v1", kind, namespace, self._on_credential, field_selector=f"metadata.name={name}")

    def _child_informers(self, namespaces: Sequence[str]) -> list[Informer]:
        out: list[Informer] = []
        for api_version, kind in CHILD_KINDS:
            try:
                self.kube.resource(api_version, kind)
            except ApiError:
                continue  # not served by this cluster: such children are read with GET/LIST if ever rendered
            group, _ = split_api_version(api_version)
            self.live.kinds.add(group_kind(group, kind))
            out += [
                self._informer(api_version, kind, ns, self._on_child, label_selector=C.LABEL_APPLYSET_PART_OF)
                for ns in namespaces
            ]
        parents = self._group("v1", "ConfigMap", namespaces, lambda e, o: None, label_selector=C.LABEL_APPLYSET_ID)
        self.live.parents = parents
        return [*out, *parents.parts]

    def informers(self) -> list[Informer]:
        return [*self.fixed, *self.accounts.informers(), *self.secrets.informers()]

    # --- leadership -----------------------------------------------------------------------------
    def is_leader(self) -> bool:
        return self.elector is None or self.elector.is_leader()

    # --- event handlers ---------------------------------------------------------------------------
    def _on_isvc(self, event: str, obj: Obj) -> None:
        self._enqueue_if_spec_changed("isvc", event, obj)

    def _on_graph(self, event: str, obj: Obj) -> None:
        self._enqueue_if_spec_changed("ig", event, obj)

    def _on_llm(self, event: str, obj: Obj) -> None:
        self._enqueue_if_spec_changed("llm", event, obj)

    def _on_llm_config(self, event: str, obj: Obj) -> None:
        """A config can change the services of its namespace; one in ``kserve`` any service."""
        if event == "SYNC":
            return
        ns = (obj.get("metadata") or {}).get("namespace", "")
        for llm in self.llms.items():
            if ns == C.KSERVE_NAMESPACE or llm["metadata"].get("namespace") == ns:
                self.queue.add(("llm", llm["metadata"].get("namespace", ""), llm["metadata"]["name"]))

    def _enqueue_if_spec_changed(self, kind: str, event: str, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        item = (kind, meta.get("namespace", ""), meta.get("name", ""))
        if event == "DELETED":
            self._seen.pop(item, None)
            return  # ownerReferences let the garbage collector remove the children
        # our own status writes come back as MODIFIED events; only spec/metadata changes need work
        fingerprint = (meta.get("generation"), meta.get("labels"), meta.get("annotations"), meta.get("uid"))
        if event == "MODIFIED" and self._seen.get(item) == fingerprint:
            return
        self._seen[item] = fingerprint
        self.queue.add(item)

    def _on_runtime(self, event: str, obj: Obj) -> None:
        if event == "SYNC":
            return
        ns = (obj.get("metadata") or {}).get("namespace", "")
        self._enqueue_namespace(ns)

    def _on_credential(self, event: str, obj: Obj) -> None:
        if event != "SYNC":
            self._enqueue_namespace((obj.get("metadata") or {}).get("namespace", ""))

    def _on_global(self, event: str, obj: Obj) -> None:
        if event != "SYNC":  # startup lists enqueue the isvcs themselves
            self.resync()

    def _on_child(self, event: str, obj: Obj) -> None:
        self.live.on_child(event, obj)
        if event == "DELETED":
            self.record.forget(key_of(obj))  # pruned by us, or garbage-collected with its isvc
        if event == "SYNC" or (event != "DELETED" and self.record.is_own_write(key_of(obj), obj)):
            return
        for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") in KEY_OF_KIND:
                kind = KEY_OF_KIND[ref["kind"]]
                self.queue.add((kind, (obj.get("metadata") or {}).get("namespace", ""), str(ref.get("name"))))

    def _enqueue_namespace(self, namespace: str) -> None:
        for isvc in self.isvcs.items():
            if not namespace or isvc["metadata"].get("namespace") == namespace:
                self.queue.add(("isvc", isvc["metadata"].get("namespace", ""), isvc["metadata"]["name"]))

    def resync(self) -> None:
        """Enqueue every InferenceService, InferenceGraph and LLMInferenceService (drift repair)."""
        for kind in RECONCILED:
            for obj in self.objects(kind).items():
                self.queue.add((kind, obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))

    # --- readiness ----------------------------------------------------------------------------------
    def configmap(self) -> Obj | None:
        items = self.configmaps.items()
        return items[0] if items else None

    def not_ready_reason(self) -> str:
        """Why nothing may be reconciled now ("" when everything is in place)."""
        unsynced = [i.name for i in self.fixed if not i.synced.is_set()]
        if unsynced:
            return f"waiting for the initial list of {', '.join(unsynced)}"
        if self.configmap() is None:
            return (
                f"ConfigMap {self.cfg.config_namespace}/{C.CONFIGMAP_NAME} not found: nothing is rendered "
                f"until it exists (--config-namespace)"
            )
        stalled = [i for i in self.informers() if i.failing_for() > self.cfg.not_ready_after]
        if stalled:
            worst = stalled[0]
            return f"informer {worst.name} failing for {worst.failing_for():.0f}s: {worst.last_error}"
        return ""

    def unhealthy_reason(self) -> str:
        dead = [i.name for i in self.informers() if not i.alive()]
        if dead:
            return f"informer thread exited: {', '.join(dead)}"
        stuck = [i for i in self.informers() if i.failing_for() > self.cfg.dead_after]
        if stuck:
            return f"informer {stuck[0].name} has not recovered in {stuck[0].failing_for():.0f}s: {stuck[0].last_error}"
        if any(not w.is_alive() for w in self._workers) and not self.stop.is_set():
            return "a reconcile worker exited"
        if time.monotonic() - self.heartbeat > 3 * self.cfg.resync_seconds + 60:
            return "the reconcile worker is stuck"
        return ""

    # --- processing ---------------------------------------------------------------------------------
    def drain(self) -> int:
        """Reconcile everything queued now (tests; the worker loop does the same one key at a time)."""
        done = 0
        while True:
            item = self.queue.get(timeout=0)
            if item is None:
                return done
            self.process(item)
            done += 1

    def process(self, item: Item) -> bool:
        """Reconcile one key; contain every failure to it. True when it converged."""
        self.heartbeat = time.monotonic()
        ok = True
        try:
            self.reconcile(*item)
        except ReconcileFailed:
            ok = False
        except Exception as err:
            log.exception("reconcile %s/%s/%s: unexpected failure", *item)
            self.metrics.inc("reconcile_total", result="unexpected_error")
            self._report_failure(item, "ReconcileError", f"{type(err).__name__}: {err}")
            ok = False
        finally:
            self.queue.done(item)
        if ok:
            self.queue.forget(item)
        else:
            delay = self.queue.add_rate_limited(item)
            self.metrics.inc("reconcile_retries_total")
            log.info("retrying %s/%s/%s in %.1fs", *item, delay)
        return ok

    def _report_failure(self, item: Item, reason: str, message: str) -> None:
        obj = self.objects(item[0]).get((item[1], item[2]))
        if obj is None or not self.is_leader():
            return
        self.events.event(obj, WARNING, reason, message)
        if item[0] == "isvc":
            try:
                self._write_status(obj, [], self.configmap(), message, reason)
            except Exception:
                log.exception("cannot write the failure status of %s/%s", item[1], item[2])

    def reconcile(self, kind: str, namespace: str, name: str) -> ApplyReport | None:
        obj = self.objects(kind).get((namespace, name))
        if obj is None or not self.is_leader():
            return None
        configmap = self.configmap()
        if configmap is None:
            raise ReconcileFailed("no inferenceservice-config")  # never rendered from a guessed configuration
        started = time.monotonic()
        rendered = self._render(obj, configmap)
        report = self._apply(obj, rendered)
        self.metrics.inc("reconcile_total", result="success" if report.ok else "apply_error")
        self.metrics.inc("reconcile_duration_seconds_sum", time.monotonic() - started)
        if kind == "isvc":
            self._write_status(obj, report.applied, configmap, "; ".join(report.errors), "ApplyFailed")
        if not report.ok:
            self.events.event(obj, WARNING, "ApplyFailed", "; ".join(report.errors))
            raise ReconcileFailed("; ".join(report.errors))
        self.metrics.set("last_success_timestamp_seconds", self.clock())
        self._rerender_if_newer(kind, obj)
        return report

    def _rerender_if_newer(self, kind: str, rendered: Obj) -> None:
        """A spec that changed while we worked is rendered again now, not at the next resync."""
        current = self.objects(kind).get(ident(rendered))
        if current is not None and _generation(current) != _generation(rendered):
            self.metrics.inc("stale_renders_total")
            self.queue.add((kind, *ident(rendered)))

    def _render(self, obj: Obj, configmap: Obj) -> list[Obj]:
        namespace, name = ident(obj)
        runtimes, refused = self._selectable_runtimes(namespace, configmap)
        inputs = [obj, *runtimes]
        if obj.get("kind") == C.KIND_ISVC:
            inputs += credential_inputs(obj, configmap, self.accounts.get, self.secrets.get)
            inputs += [o for informer in self.storage_containers for o in informer.items()]
            inputs += self._cache_inputs(namespace)
        if obj.get("kind") == C.KIND_LLMISVC:  # its presets: configs of its namespace and KServe's shared ones
            inputs = [
                obj,
                *(
                    c
                    for c in self.llm_configs.items()
                    if c["metadata"].get("namespace") in (namespace, C.KSERVE_NAMESPACE)
                ),
                *self._cache_inputs(namespace),
            ]
        try:
            out = self.render(inputs, configmap, f"<cluster>/{namespace}/{obj['kind']}/{name}")
        except Exception as err:  # noqa: BLE001 - any render failure becomes a status condition
            self.metrics.inc("reconcile_total", result="render_error")
            message = _render_message(err)
            named = _named_runtime(obj)
            if named in refused:
                message = f"runtime {named!r} was refused: {refused[named]}; {message}"
            self._report_failure((KEY_OF_KIND[obj["kind"]], namespace, name), "RenderFailed", message)
            raise ReconcileFailed(message) from None
        inputs_ids = {(o.get("kind"), *ident(o)) for o in inputs}
        return [
            o
            for o in out
            if o.get("kind") not in CACHE_OBJECT_KINDS
            and (o.get("kind") not in INPUT_KINDS or (o.get("kind"), *ident(o)) not in inputs_ids)
        ]

    def _cache_inputs(self, namespace: str) -> list[Obj]:
        """The LocalModelCaches and node groups, and the LocalModelNamespaceCaches of ``namespace``."""
        return [
            o
            for informer in self.local_caches
            for o in informer.items()
            if o.get("kind") != C.KIND_LOCAL_MODEL_NAMESPACE_CACHE or o["metadata"].get("namespace") == namespace
        ]

    def _selectable_runtimes(self, namespace: str, configmap: Obj) -> tuple[list[Obj], dict[str, str]]:
        """Runtimes an isvc of ``namespace`` may select; a runtime KServe's webhook would refuse is left out."""
        ok: list[Obj] = []
        refused: dict[str, str] = {}
        candidates = [r for r in self.runtimes.items() if r["metadata"].get("namespace") == namespace]
        for runtime in [*candidates, *self.cluster_runtimes.items()]:
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
        self.isvcs.replace_if_unchanged(ident(isvc), rv_of(isvc), written)

    # --- running ------------------------------------------------------------------------------------
    def start_informers(self) -> None:
        for informer in self.fixed:
            informer.start(self.stop)

    def wait_until_ready(self) -> None:
        while not self.stop.is_set() and self.not_ready_reason().startswith(("waiting", "ConfigMap")):
            self.heartbeat = time.monotonic()
            self.stop.wait(0.2)

    def work(self, timer: bool = True) -> None:
        """A worker loop: nothing before every informer has synced; then one key at a time.

        The worker with ``timer`` also enqueues everything once synced and on every resync period.
        """
        self.wait_until_ready()
        if timer:
            self.resync()
        next_resync = time.monotonic() + self.cfg.resync_seconds
        while not self.stop.is_set():
            self.heartbeat = time.monotonic()
            if self.not_ready_reason().startswith("ConfigMap"):
                self.wait_until_ready()
            item = self.queue.get(timeout=1.0)
            if item is not None:
                self.process(item)
            self.metrics.set("workqueue_depth", len(self.queue))
            if timer and time.monotonic() >= next_resync:
                self._forget_unused_credentials(next_resync - self.cfg.resync_seconds)
                self.resync()
                self.metrics.inc("resyncs_total")
                next_resync = time.monotonic() + self.cfg.resync_seconds * random.uniform(0.9, 1.1)

    def _forget_unused_credentials(self, since: float) -> None:
        """Stop watching ServiceAccounts and Secrets no reconcile asked for during the last resync period."""
        dropped = self.accounts.forget_unused(since) + self.secrets.forget_unused(since)
        if dropped:
            self.metrics.inc("credential_watches_stopped_total", dropped)

    def serve(self, health_addr: str, metrics_addr: str) -> int:
        """Run until stopped (SIGTERM/SIGINT or lost leadership); returns the exit code (1 when the Lease was lost)."""
        servers = [_http_server(health_addr, self), _http_server(metrics_addr, self)]
        for s in servers:
            threading.Thread(target=s.serve_forever, daemon=True).start()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: self.stop.set())
        self.start_informers()
        lost = threading.Event()
        leading = threading.Thread(target=self._lead, args=(lost,), name="leader election", daemon=True)
        if self.elector:
            leading.start()
        self._workers = [
            threading.Thread(target=self.work, args=(i == 0,), name=f"reconcile worker {i}", daemon=True)
            for i in range(max(1, self.cfg.workers))
        ]
        for worker in self._workers:
            worker.start()
        log.info(
            "daemon started (identity %s, lease %s/%s)",
            self.cfg.identity,
            self.cfg.lease_namespace,
            self.cfg.lease_name,
        )
        self.stop.wait()
        for worker in self._workers:
            worker.join(timeout=30)
        if self.elector:
            leading.join(timeout=self.cfg.lease_seconds)  # no renewal may race the release below
        if self.elector and not lost.is_set() and self.elector.release():
            log.info("released Lease %s/%s", self.cfg.lease_namespace, self.cfg.lease_name)
        for s in servers:
            s.shutdown()
        return 1 if lost.is_set() else 0

    def _lead(self, lost: threading.Event) -> None:
        assert self.elector is not None
        was_leader = False
        while not self.stop.is_set():
            try:
                leader = self.elector.try_acquire_or_renew()
            except ApiError as err:
                leader = self.elector.is_leader()
                if not leader:
                    self.elector.expire(f"could not renew the Lease within {self.cfg.lease_seconds:g}s: {err}")
            self.metrics.set("is_leader", 1 if leader else 0)
            if leader and not was_leader:
                log.info("acquired Lease %s/%s", self.cfg.lease_namespace, self.cfg.lease_name)
                self.resync()  # a new leader catches up on everything
            if was_leader and not leader:
                log.error(
                    "leadership lost: %s; exiting so that the pod restarts as a follower",
                    self.elector.loss_reason or "unknown reason",
                )
                lost.set()
                self.stop.set()  # never keep working without the lease
                return
            was_leader = leader
            self.stop.wait(self.cfg.retry_seconds if not leader else self.cfg.renew_seconds / 2)


def _generation(obj: Obj) -> Any:
    return (obj.get("metadata") or {}).get("generation")


def _named_runtime(obj: Obj) -> str:
    spec = (obj.get("spec") or {}).get(C.PREDICTOR) or {}
    return str((spec.get("model") or {}).get("runtime") or "")


def _render_message(err: Exception) -> str:
    problems = getattr(err, "problems", None)
    if problems:
        return "; ".join(p.format() for p in problems)[:1000]
    return f"{type(err).__name__}: {err}"[:1000]


def _http_server(addr: str, daemon: Daemon) -> ThreadingHTTPServer:
    host, _, port = addr.rpartition(":")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path == "/healthz":
                reason = daemon.unhealthy_reason()
            elif self.path == "/readyz":
                reason = daemon.not_ready_reason()
            elif self.path == "/metrics":
                return self._reply(200, _metrics_text(daemon), "text/plain; version=0.0.4")
            else:
                self.send_error(404)
                return
            self._reply(503 if reason else 200, (reason or "ok") + "\n", "text/plain")

        def _reply(self, code: int, body: str, ctype: str) -> None:
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
    server.daemon_threads = True
    return server


def _metrics_text(daemon: Daemon) -> str:
    daemon.metrics.set("is_leader", 1 if daemon.is_leader() else 0)
    daemon.metrics.set("ready", 0 if daemon.not_ready_reason() else 1)
    for label, n in sorted(daemon.kube.requests.items()):
        daemon.metrics.set(f'api_requests{{verb="{label}"}}', n)
    return daemon.metrics.render()
