"""The in-cluster daemon: watch KServe inputs, re-render, apply, write status; one leader at a time.

Shape (apply_ecosystem.md §5):
* informers (LIST, then WATCH from the list's resourceVersion with bookmarks; relist on 410 Gone) for
  InferenceServices, InferenceGraphs, ServingRuntimes, ClusterServingRuntimes, the
  ``inferenceservice-config`` ConfigMap and — where their CRDs are served — LLMInferenceServices and
  LLMInferenceServiceConfigs; children are not watched — a periodic resync re-renders and
  the dry-run compare repairs drift;
* a de-duplicating work queue of (kind, namespace, name); a runtime or config change re-enqueues every
  InferenceService it can affect;
* each InferenceService is its own ApplySet (parent ConfigMap ``<isvc>.kserve-compile``), owned by the
  isvc so Kubernetes garbage-collects everything when the isvc is deleted;
* Lease leader election: only the leader applies, prunes and writes status; losing the lease stops
  the process (Kubernetes restarts it as a follower);
* ``/healthz``, ``/readyz`` and ``/metrics`` over the standard library's HTTP server.
"""

from __future__ import annotations

import collections
import datetime as dt
import os
import random
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Sequence

from kserve_compile import constants as C
from kserve_compile.apply.engine import Applier, ApplyOptions, ApplyReport
from kserve_compile.apply.kube import ApiError, Kube, Resource, WatchExpired
from kserve_compile.apply.objects import Obj
from kserve_compile.apply.status import compute_status, status_changed

INPUT_KINDS = frozenset({C.KIND_ISVC, C.KIND_SR, C.KIND_CSR, C.KIND_IG, C.KIND_LLMISVC, C.KIND_LLMISVC_CONFIG})

# Every (group, resource, verbs) the daemon uses; deploy/ RBAC is tested against this table.
PERMISSIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("serving.kserve.io", "inferenceservices", ("get", "list", "watch")),
    ("serving.kserve.io", "inferenceservices/status", ("get", "patch", "update")),
    ("serving.kserve.io", "inferenceservices/finalizers", ("update",)),
    ("serving.kserve.io", "inferencegraphs", ("get", "list", "watch")),
    ("serving.kserve.io", "inferencegraphs/finalizers", ("update",)),
    ("serving.kserve.io", "servingruntimes", ("get", "list", "watch")),
    ("serving.kserve.io", "clusterservingruntimes", ("get", "list", "watch")),
    ("serving.kserve.io", "llminferenceservices", ("get", "list", "watch")),
    ("serving.kserve.io", "llminferenceservices/finalizers", ("update",)),
    ("serving.kserve.io", "llminferenceserviceconfigs", ("get", "list", "watch")),
    ("", "configmaps", ("get", "list", "watch", "create", "patch", "delete")),
    ("", "services", ("get", "list", "create", "patch", "delete")),
    ("", "serviceaccounts", ("get", "list", "create", "patch", "delete")),
    ("apps", "deployments", ("get", "list", "create", "patch", "delete")),
    ("autoscaling", "horizontalpodautoscalers", ("get", "list", "create", "patch", "delete")),
    ("networking.k8s.io", "ingresses", ("get", "list", "create", "patch", "delete")),
    ("serving.knative.dev", "services", ("get", "list", "create", "patch", "delete")),
    ("networking.istio.io", "virtualservices", ("get", "list", "create", "patch", "delete")),
    ("gateway.networking.k8s.io", "httproutes", ("get", "list", "create", "patch", "delete")),
    ("keda.sh", "scaledobjects", ("get", "list", "create", "patch", "delete")),
    # LLMInferenceService children (kserve_compile.llmisvc); the RBAC objects it renders grant only what KServe's
    # controller grants, which the daemon may bind without holding (bind), for the roles it names
    ("leaderworkerset.x-k8s.io", "leaderworkersets", ("get", "list", "create", "patch", "delete")),
    ("inference.networking.k8s.io", "inferencepools", ("get", "list", "create", "patch", "delete")),
    ("inference.networking.x-k8s.io", "inferencepools", ("get", "list", "create", "patch", "delete")),
    ("rbac.authorization.k8s.io", "roles", ("get", "list", "create", "patch", "delete", "bind", "escalate")),
    ("rbac.authorization.k8s.io", "rolebindings", ("get", "list", "create", "patch", "delete")),
    ("rbac.authorization.k8s.io", "clusterrolebindings", ("get", "list", "create", "patch", "delete")),
    ("rbac.authorization.k8s.io", "clusterroles", ("bind",)),
    ("coordination.k8s.io", "leases", ("get", "create", "update")),
)


@dataclass
class DaemonConfig:
    namespace: str = ""  # "" = all namespaces
    config_namespace: str = C.KSERVE_NAMESPACE
    leader_elect: bool = True
    lease_namespace: str = C.KSERVE_NAMESPACE
    lease_name: str = C.DAEMON_LEASE_NAME
    identity: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.urandom(3).hex()}")
    lease_seconds: float = 15.0
    renew_seconds: float = 10.0
    retry_seconds: float = 2.0
    resync_seconds: float = 600.0
    watch_timeout: int = 300


# --- metrics ----------------------------------------------------------------------------------
class Metrics:
    """Counters and gauges in the Prometheus text format (no client library needed for a handful)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counters: collections.Counter[tuple[str, tuple[tuple[str, str], ...]]] = collections.Counter()
        self.gauges: dict[str, float] = {}

    def inc(self, name: str, value: float = 1, **labels: str) -> None:
        with self._lock:
            self.counters[(name, tuple(sorted(labels.items())))] += value

    def set(self, name: str, value: float) -> None:
        with self._lock:
            self.gauges[name] = value

    def get(self, name: str, **labels: str) -> float:
        with self._lock:
            return self.counters.get((name, tuple(sorted(labels.items()))), 0)

    def render(self) -> str:
        lines = []
        with self._lock:
            for (name, labels), value in sorted(self.counters.items()):
                lab = ",".join(f'{k}="{v}"' for k, v in labels)
                lines.append(f"kserve_compile_{name}{{{lab}}} {value:g}" if lab else f"kserve_compile_{name} {value:g}")
            for name, value in sorted(self.gauges.items()):
                lines.append(f"kserve_compile_{name} {value:g}")
        return "\n".join(lines) + "\n"


# --- leader election --------------------------------------------------------------------------
def _micro_time(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(s: str) -> float:
    return dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc).timestamp()


class LeaderElector:
    """A coordination.k8s.io/v1 Lease; writes go through PUT with resourceVersion (optimistic locking)."""

    def __init__(self, kube: Kube, namespace: str, name: str, identity: str, lease_seconds: float = 15.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.kube, self.namespace, self.name, self.identity = kube, namespace, name, identity
        self.lease_seconds = lease_seconds
        self.clock = clock
        self.res = Resource("coordination.k8s.io", "v1", "Lease", "leases", True)
        self._renewed_at: float | None = None
        self.ever_led = False

    def is_leader(self) -> bool:
        return self._renewed_at is not None and self.clock() - self._renewed_at < self.lease_seconds

    def try_acquire_or_renew(self) -> bool:
        now = self.clock()
        spec = {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.lease_seconds),
                "renewTime": _micro_time(now)}
        try:
            live = self.kube.get(self.res, self.namespace, self.name)
            if live is None:
                spec.update(acquireTime=_micro_time(now), leaseTransitions=0)
                body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec}
                self.kube.request("POST", self.res.path(self.namespace), body=body)
            else:
                cur = live.get("spec") or {}
                holder = cur.get("holderIdentity")
                if holder and holder != self.identity:
                    renewed = _parse_time(cur["renewTime"]) if cur.get("renewTime") else 0.0
                    if renewed + float(cur.get("leaseDurationSeconds") or self.lease_seconds) > now:
                        self._renewed_at = None
                        return False
                    spec.update(acquireTime=_micro_time(now), leaseTransitions=int(cur.get("leaseTransitions") or 0) + 1)
                else:
                    spec.update(acquireTime=cur.get("acquireTime") or _micro_time(now),
                                leaseTransitions=int(cur.get("leaseTransitions") or 0))
                live["spec"] = spec
                self.kube.request("PUT", self.res.path(self.namespace, self.name), body=live)
        except ApiError as err:
            if err.status in (409, 404):  # someone else wrote first; try again next period
                self._renewed_at = None
                return False
            raise
        self._renewed_at = now
        self.ever_led = True
        return True


# --- informers --------------------------------------------------------------------------------
class Informer:
    """LIST + WATCH of one resource into a cache; ``handler(event_type, obj)`` sees every change."""

    def __init__(self, kube: Kube, res: Resource, namespace: str, handler: Callable[[str, Obj], None],
                 metrics: Metrics, field_selector: str = "", watch_timeout: int = 300) -> None:
        self.kube, self.res, self.namespace, self.handler = kube, res, namespace, handler
        self.metrics, self.field_selector, self.watch_timeout = metrics, field_selector, watch_timeout
        self.cache: dict[tuple[str, str], Obj] = {}
        self.resource_version = ""
        self.synced = threading.Event()
        self._lock = threading.Lock()

    def items(self) -> list[Obj]:
        with self._lock:
            return [self.cache[k] for k in sorted(self.cache)]

    def relist(self) -> None:
        items, rv = self.kube.list(self.res, self.namespace, field_selector=self.field_selector)
        fresh = {_ident(o): o for o in items}
        with self._lock:
            gone = [o for k, o in self.cache.items() if k not in fresh]
            self.cache = fresh
            self.resource_version = rv
        for obj in gone:
            self.handler("DELETED", obj)
        for obj in items:
            self.handler("SYNC", obj)
        self.synced.set()

    def watch_once(self) -> None:
        """Follow one watch stream until the server closes it; relist on 410 Gone."""
        try:
            for event in self.kube.watch(self.res, self.namespace, self.resource_version, self.watch_timeout,
                                         field_selector=self.field_selector):
                obj = event["object"]
                rv = (obj.get("metadata") or {}).get("resourceVersion")
                if event["type"] == "BOOKMARK":
                    self.resource_version = rv or self.resource_version
                    continue
                with self._lock:
                    if event["type"] == "DELETED":
                        self.cache.pop(_ident(obj), None)
                    else:
                        self.cache[_ident(obj)] = obj
                    self.resource_version = rv or self.resource_version
                self.handler(event["type"], obj)
        except WatchExpired:
            self.metrics.inc("watch_restarts_total", reason="expired")
            self.relist()

    def run(self, stop: threading.Event) -> None:
        backoff = 0.1
        while not stop.is_set():
            try:
                if not self.synced.is_set():
                    self.relist()
                self.watch_once()
                backoff = 0.1
            except ApiError:
                self.metrics.inc("watch_restarts_total", reason="error")
                stop.wait(backoff + random.uniform(0, backoff))
                backoff = min(backoff * 2, 30.0)


def _ident(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace", ""), meta.get("name", ""))


# --- work queue -------------------------------------------------------------------------------
class WorkQueue:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: collections.deque[tuple[str, str, str]] = collections.deque()
        self._pending: set[tuple[str, str, str]] = set()

    def add(self, item: tuple[str, str, str]) -> None:
        with self._cond:
            if item not in self._pending:
                self._pending.add(item)
                self._queue.append(item)
                self._cond.notify()

    def get(self, timeout: float | None = None) -> tuple[str, str, str] | None:
        with self._cond:
            if not self._queue:
                self._cond.wait(timeout)
            if not self._queue:
                return None
            item = self._queue.popleft()
            self._pending.discard(item)
            return item

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)


# --- the daemon -------------------------------------------------------------------------------
Render = Callable[[Sequence[Obj], "Obj | None", str], list[Obj]]
StatusUrls = Callable[[Obj, "Obj | None"], dict[str, Any]]


def _default_render(objects: Sequence[Obj], configmap: Obj | None, source: str) -> list[Obj]:
    from kserve_compile.api import render_objects  # type: ignore[import-not-found]

    return render_objects(objects, configmap=configmap, source=source)


def _default_urls(isvc: Obj, configmap: Obj | None) -> dict[str, Any]:
    from kserve_compile.api import isvc_status  # type: ignore[import-not-found]

    return isvc_status(isvc, configmap)


class Daemon:
    def __init__(self, kube: Kube, cfg: DaemonConfig, render: Render | None = None,
                 status_urls: StatusUrls | None = None, clock: Callable[[], float] = time.time) -> None:
        self.kube, self.cfg = kube, cfg
        self.render = render or _default_render
        self.status_urls = status_urls or _default_urls
        self.clock = clock
        self.metrics = Metrics()
        self.queue = WorkQueue()
        self.stop = threading.Event()
        self.heartbeat = clock()
        self.elector = LeaderElector(kube, cfg.lease_namespace, cfg.lease_name, cfg.identity, cfg.lease_seconds,
                                     clock) if cfg.leader_elect else None
        self._seen: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        ns = cfg.namespace
        self.isvcs = self._informer("serving.kserve.io/v1beta1", C.KIND_ISVC, ns, self._on_isvc)
        self.graphs = self._informer("serving.kserve.io/v1alpha1", C.KIND_IG, ns, self._on_graph)
        self.runtimes = self._informer("serving.kserve.io/v1alpha1", C.KIND_SR, ns, self._on_runtime)
        self.cluster_runtimes = self._informer("serving.kserve.io/v1alpha1", C.KIND_CSR, "", self._on_global)
        self.configmaps = self._informer("v1", "ConfigMap", cfg.config_namespace, self._on_global,
                                         field_selector=f"metadata.name={C.CONFIGMAP_NAME}")
        self.informers = [self.isvcs, self.graphs, self.runtimes, self.cluster_runtimes, self.configmaps]
        # LLMInferenceServices, only where their CRD is served (the daemon also runs on clusters without it)
        self.llms = self._optional_informer(C.V1ALPHA2, C.KIND_LLMISVC, ns, self._on_llm)
        self.llm_configs = self._optional_informer(C.V1ALPHA2, C.KIND_LLMISVC_CONFIG, "", self._on_llm_config)
        self.informers += [i for i in (self.llms, self.llm_configs) if i is not None]

    def _optional_informer(self, api_version: str, kind: str, namespace: str, handler: Callable[[str, Obj], None]) -> Informer | None:
        try:
            return self._informer(api_version, kind, namespace, handler)
        except ApiError as err:
            if err.status == 404:
                return None
            raise

    def _informer(self, api_version: str, kind: str, namespace: str, handler: Callable[[str, Obj], None],
                  field_selector: str = "") -> Informer:
        return Informer(self.kube, self.kube.resource(api_version, kind), namespace, handler, self.metrics,
                        field_selector, self.cfg.watch_timeout)

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
        """A config in a namespace can change that namespace's services; one in ``kserve`` any service."""
        if event == "SYNC" or self.llms is None:
            return
        ns = (obj.get("metadata") or {}).get("namespace", "")
        for llm in self.llms.items():
            if ns == C.KSERVE_NAMESPACE or llm["metadata"].get("namespace") == ns:
                self.queue.add(("llm", llm["metadata"].get("namespace", ""), llm["metadata"]["name"]))

    def _llm_items(self) -> list[tuple[str, str, str]]:
        return [("llm", o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in (self.llms.items() if self.llms else [])]

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
        ns = (obj.get("metadata") or {}).get("namespace", "")
        for isvc in self.isvcs.items():
            if isvc["metadata"].get("namespace") == ns:
                self.queue.add(("isvc", ns, isvc["metadata"]["name"]))

    def _on_global(self, event: str, obj: Obj) -> None:
        if event == "SYNC":
            return  # startup lists enqueue the isvcs themselves
        for isvc in self.isvcs.items():
            self.queue.add(("isvc", isvc["metadata"].get("namespace", ""), isvc["metadata"]["name"]))
        for graph in self.graphs.items():
            self.queue.add(("ig", graph["metadata"].get("namespace", ""), graph["metadata"]["name"]))
        for item in self._llm_items():
            self.queue.add(item)

    # --- reconcile --------------------------------------------------------------------------------
    def configmap(self) -> Obj | None:
        items = self.configmaps.items()
        return items[0] if items else None

    def resync(self) -> None:
        """Enqueue every InferenceService, InferenceGraph and LLMInferenceService (drift repair)."""
        for isvc in self.isvcs.items():
            self.queue.add(("isvc", isvc["metadata"].get("namespace", ""), isvc["metadata"]["name"]))
        for graph in self.graphs.items():
            self.queue.add(("ig", graph["metadata"].get("namespace", ""), graph["metadata"]["name"]))
        for item in self._llm_items():
            self.queue.add(item)

    def drain(self) -> int:
        """Reconcile everything queued now (used by tests and by the worker loop)."""
        done = 0
        while True:
            item = self.queue.get(timeout=0)
            if item is None:
                return done
            self.reconcile(*item)
            done += 1

    def reconcile(self, kind: str, namespace: str, name: str) -> ApplyReport | None:
        self.heartbeat = self.clock()
        informer = {"isvc": self.isvcs, "ig": self.graphs, "llm": self.llms}.get(kind)
        obj = informer.cache.get((namespace, name)) if informer is not None else None
        if obj is None or not self.is_leader():
            return None
        started = time.monotonic()
        if kind == "llm":
            configs = self.llm_configs.items() if self.llm_configs else []
            inputs = [obj] + [c for c in configs if c["metadata"].get("namespace") in (namespace, C.KSERVE_NAMESPACE)]
        else:
            runtimes = [r for r in self.runtimes.items() if r["metadata"].get("namespace") == namespace]
            inputs = [obj] + runtimes + self.cluster_runtimes.items()
        configmap = self.configmap()
        source = f"<cluster>/{namespace}/{obj['kind']}/{name}"
        try:
            rendered = [o for o in self.render(inputs, configmap, source) if o.get("kind") not in INPUT_KINDS]
        except Exception as err:  # noqa: BLE001 - any render failure becomes a status condition
            self.metrics.inc("reconcile_total", result="render_error")
            if kind == "isvc":
                self._write_status(obj, [], configmap, _render_message(err), "RenderFailed")
            return None
        suffix = {"isvc": "", "ig": ".inferencegraph", "llm": ".llminferenceservice"}[kind] + C.APPLYSET_PARENT_SUFFIX
        opts = ApplyOptions(applyset=f"{name}{suffix}", namespace=namespace, owner=obj, prune=True,
                            is_leader=self.is_leader)
        report = Applier(self.kube, opts).run(rendered)
        for action, n in report.counts().items():
            self.metrics.inc("apply_objects_total", n, action=action)
        if report.counts().get("configured"):
            self.metrics.inc("drift_detected_total", report.counts()["configured"])
        self.metrics.inc("reconcile_total", result="success" if report.ok else "apply_error")
        self.metrics.inc("reconcile_duration_seconds_sum", time.monotonic() - started)
        if report.ok:
            self.metrics.set("last_success_timestamp_seconds", self.clock())
        if kind == "isvc":
            self._write_status(obj, report.applied, configmap, "; ".join(report.errors), "ApplyFailed")
        return report

    def _write_status(self, isvc: Obj, applied: list[Obj], configmap: Obj | None, error: str, reason: str) -> None:
        try:
            urls = self.status_urls(isvc, configmap) if not error else {}
        except Exception:  # noqa: BLE001 - URLs are best effort; conditions still get written
            urls = {}
        status = compute_status(isvc, applied, urls, error, reason, now=_micro_time(self.clock())[:19] + "Z")
        if not status_changed(isvc.get("status"), status) or not self.is_leader():
            return
        meta = isvc["metadata"]
        body = {"apiVersion": isvc["apiVersion"], "kind": isvc["kind"],
                "metadata": {"name": meta["name"], "namespace": meta["namespace"]}, "status": status}
        try:
            written = self.kube.apply(body, C.STATUS_FIELD_MANAGER, force=True, subresource="status")
            self.metrics.inc("status_writes_total")
            with self.isvcs._lock:  # the watch will bring the same object; don't wait for it
                self.isvcs.cache[(meta["namespace"], meta["name"])] = written
        except ApiError as err:
            self.metrics.inc("status_write_errors_total", reason=str(err.status))

    # --- serving ----------------------------------------------------------------------------------
    def ready(self) -> bool:
        return all(i.synced.is_set() for i in self.informers)

    def healthy(self) -> bool:
        return self.clock() - self.heartbeat < 3 * self.cfg.resync_seconds + 60

    def serve(self, health_addr: str, metrics_addr: str) -> int:
        """Run until stopped; returns the process exit code (1 when leadership is lost)."""
        servers = [_http_server(health_addr, self), _http_server(metrics_addr, self)]
        threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
        threads += [threading.Thread(target=i.run, args=(self.stop,), daemon=True) for i in self.informers]
        for t in threads:
            t.start()
        lost = threading.Event()
        if self.elector:
            threading.Thread(target=self._lead, args=(lost,), daemon=True).start()
        next_resync = self.clock() + self.cfg.resync_seconds
        try:
            while not self.stop.is_set():
                item = self.queue.get(timeout=1.0)
                self.heartbeat = self.clock()
                if item:
                    self.reconcile(*item)
                if self.clock() >= next_resync:
                    self.resync()
                    jitter = random.uniform(-0.1, 0.1) * self.cfg.resync_seconds
                    next_resync = self.clock() + self.cfg.resync_seconds + jitter
        except KeyboardInterrupt:
            pass
        finally:
            self.stop.set()
            for s in servers:
                s.shutdown()
        return 1 if lost.is_set() else 0

    def _lead(self, lost: threading.Event) -> None:
        was_leader = False
        while not self.stop.is_set():
            try:
                leader = self.elector.try_acquire_or_renew() if self.elector else True
            except ApiError:
                leader = self.elector.is_leader() if self.elector else True
            self.metrics.set("is_leader", 1 if leader else 0)
            if leader and not was_leader:
                self.resync()  # a new leader catches up on everything
            if was_leader and not leader:
                lost.set()
                self.stop.set()  # never keep working without the lease
                return
            was_leader = leader
            self.stop.wait(self.cfg.retry_seconds if not leader else self.cfg.renew_seconds / 2)


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
                ok, body = daemon.healthy(), "ok\n"
            elif self.path == "/readyz":
                ok, body = daemon.ready(), "ok\n" if daemon.ready() else "informers not synced\n"
            elif self.path == "/metrics":
                daemon.metrics.set("is_leader", 1 if daemon.is_leader() else 0)
                for label, n in sorted(daemon.kube.requests.items()):
                    daemon.metrics.set(f'api_requests{{verb="{label}"}}', n)
                ok, body = True, daemon.metrics.render()
            else:
                self.send_error(404)
                return
            data = body.encode()
            self.send_response(200 if ok else 503)
            self.send_header("Content-Type", "text/plain; version=0.0.4" if self.path == "/metrics" else "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
    server.daemon_threads = True
    return server
