"""The daemon's sources: informers for every input and child kind, and the event handlers that queue work.

As controller-runtime's ``source.Kind`` with ``handler.EnqueueRequestForObject`` / ``EnqueueRequestForOwner``:

* InferenceServices, InferenceGraphs and LLMInferenceServices queue themselves when their spec or metadata changed
  (``predicates.py``; the daemon's own status writes do not);
* ServingRuntimes and credentials queue the isvcs of their namespace; ClusterServingRuntimes, the
  ``inferenceservice-config`` ConfigMap, ClusterStorageContainers and the local model caches queue everything;
  LLMInferenceServiceConfigs queue the LLM services that may use them;
* children (watched by the ApplySet ``part-of`` label) fill the live cache (``livecache.py``) and queue their
  controlling owner, unless the event is the daemon's own write coming back;
* the ServiceAccounts and Secrets an isvc's storage credentials name are watched one by one when first needed.

Kinds the cluster does not serve (the LLM and local model kinds, ClusterStorageContainers, optional children) get
no informer. ``readiness()`` and ``liveness()`` report on the informers (``probes.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from kserve_compile import constants as C
from kserve_compile.apply.informer import Informer, InformerGroup, NamedInformers
from kserve_compile.apply.kube import ApiError, Kube
from kserve_compile.apply.livecache import LiveCache
from kserve_compile.apply.metrics import Metrics
from kserve_compile.apply.objects import Obj, group_kind, key_of, split_api_version
from kserve_compile.apply.ownwrites import AppliedRecord
from kserve_compile.apply.predicates import SpecOrMetadataChanged
from kserve_compile.apply.probes import ALIVE, READY, Liveness, Phase, Readiness
from kserve_compile.apply.rbac import CHILD_KINDS
from kserve_compile.apply.settings import DaemonConfig
from kserve_compile.apply.workqueue import RateLimitedQueue

__all__ = ["KEY_OF_KIND", "RECONCILED", "Item", "Sources"]

V1ALPHA1 = "serving.kserve.io/v1alpha1"
# The kinds the daemon reconciles: queue key kind → (object kind, ApplySet parent infix)
RECONCILED = {
    "isvc": (C.KIND_ISVC, ""),
    "ig": (C.KIND_IG, ".inferencegraph"),
    "llm": (C.KIND_LLMISVC, ".llminferenceservice"),
}
KEY_OF_KIND = {kind: key for key, (kind, _) in RECONCILED.items()}
Item = tuple[str, str, str]  # (key kind, namespace, name)
Handler = Callable[[str, Obj], None]


def _meta(obj: Obj) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _item(kind: str, obj: Obj) -> Item:
    return (kind, str(_meta(obj).get("namespace", "")), str(_meta(obj).get("name", "")))


class Sources:
    def __init__(
        self,
        kube: Kube,
        cfg: DaemonConfig,
        queue: RateLimitedQueue[Item],
        metrics: Metrics,
        live: LiveCache,
        record: AppliedRecord,
        stop: threading.Event,
    ) -> None:
        self.kube, self.cfg, self.queue, self.metrics = kube, cfg, queue, metrics
        self.live, self.record, self.stop = live, record, stop
        record.on_missed = self.enqueue_owner  # an event held while our write was in flight was someone else's
        self.changed = SpecOrMetadataChanged()
        scoped = cfg.namespaces or ("",)
        self.isvcs = self._group(
            "serving.kserve.io/v1beta1", C.KIND_ISVC, scoped, self._reconciled("isvc"), cfg.selector
        )
        self.graphs = self._group(V1ALPHA1, C.KIND_IG, scoped, self._reconciled("ig"), cfg.selector)
        self.runtimes = self._group(V1ALPHA1, C.KIND_SR, scoped, self._on_runtime)
        self.cluster_runtimes = self._informer(V1ALPHA1, C.KIND_CSR, "", self._on_global)
        self.configmaps = self._informer(
            "v1", "ConfigMap", cfg.config_namespace, self._on_global, field_selector=f"metadata.name={C.CONFIGMAP_NAME}"
        )
        self.accounts = NamedInformers(lambda ns, n: self.named("ServiceAccount", ns, n), stop)
        self.secrets = NamedInformers(lambda ns, n: self.named("Secret", ns, n), stop)
        self.storage_containers = self._optional(V1ALPHA1, C.KIND_CSC)
        # LLMInferenceServices and their configs, where the cluster serves the kinds
        self.llms = self._optional_group(C.V1ALPHA2, C.KIND_LLMISVC, scoped, self._reconciled("llm"), cfg.selector)
        self.llm_configs = self._optional_group(C.V1ALPHA2, C.KIND_LLMISVC_CONFIG, scoped, self._on_llm_config)
        if cfg.namespaces and C.KSERVE_NAMESPACE not in cfg.namespaces:  # KServe's shared presets live there
            self.llm_configs.parts += self._optional_group(
                C.V1ALPHA2, C.KIND_LLMISVC_CONFIG, (C.KSERVE_NAMESPACE,), self._on_llm_config
            ).parts
        # Local model caches: an isvc a cache covers is rendered with the cache's PVC mounted, as render does
        self.local_caches = [
            *self._optional(V1ALPHA1, C.KIND_LOCAL_MODEL_CACHE),
            *self._optional(V1ALPHA1, C.KIND_LOCAL_MODEL_NODE_GROUP),
            *self._optional_group(V1ALPHA1, C.KIND_LOCAL_MODEL_NAMESPACE_CACHE, scoped, self._on_global).parts,
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
            *self._child_informers(scoped),
        ]

    # --- building informers -------------------------------------------------------------------
    def _informer(
        self,
        api_version: str,
        kind: str,
        namespace: str,
        handler: Handler,
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
        self, api_version: str, kind: str, namespaces: Sequence[str], handler: Handler, label_selector: str = ""
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
        self, api_version: str, kind: str, namespaces: Sequence[str], handler: Handler, label_selector: str = ""
    ) -> InformerGroup:
        """A namespaced input informer group, empty where the cluster does not serve the kind."""
        try:
            self.kube.resource(api_version, kind)
        except ApiError:
            return InformerGroup([])
        return self._group(api_version, kind, namespaces, handler, label_selector)

    def named(self, kind: str, namespace: str, name: str) -> Informer:
        """A one-object informer for a ServiceAccount or Secret an isvc's credentials name."""
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

    # --- reads ----------------------------------------------------------------------------------
    def objects(self, key_kind: str) -> InformerGroup:
        """The informer cache of a reconciled kind ("isvc", "ig", "llm")."""
        return {"isvc": self.isvcs, "ig": self.graphs, "llm": self.llms}[key_kind]

    def get(self, item: Item) -> Obj | None:
        return self.objects(item[0]).get((item[1], item[2]))

    def configmap(self) -> Obj | None:
        items = self.configmaps.items()
        return items[0] if items else None

    def informers(self) -> list[Informer]:
        return [*self.fixed, *self.accounts.informers(), *self.secrets.informers()]

    # --- event handlers -------------------------------------------------------------------------
    def _reconciled(self, kind: str) -> Handler:
        def handle(event: str, obj: Obj) -> None:
            item = _item(kind, obj)
            if self.changed.passes(item, event, obj):
                self.queue.add(item)

        return handle

    def _on_llm_config(self, event: str, obj: Obj) -> None:
        """A config can change the services of its namespace; one in ``kserve`` any service."""
        if event == "SYNC":
            return
        namespace = _meta(obj).get("namespace", "")
        for llm in self.llms.items():
            if namespace == C.KSERVE_NAMESPACE or _meta(llm).get("namespace") == namespace:
                self.queue.add(_item("llm", llm))

    def _on_runtime(self, event: str, obj: Obj) -> None:
        if event != "SYNC":
            self.enqueue_namespace(_meta(obj).get("namespace", ""))

    def _on_credential(self, event: str, obj: Obj) -> None:
        if event != "SYNC":
            self.enqueue_namespace(_meta(obj).get("namespace", ""))

    def _on_global(self, event: str, obj: Obj) -> None:
        if event != "SYNC":  # startup lists enqueue the reconciled objects themselves
            self.resync()

    def _on_child(self, event: str, obj: Obj) -> None:
        self.live.on_child(event, obj)
        if self.record.needs_owner(event, key_of(obj), obj):  # not our own write, and something the owner reads
            self.enqueue_owner(obj)

    def enqueue_owner(self, child: Obj) -> None:
        """Queue the reconciled object that controls ``child`` (its controller ownerReference)."""
        for ref in _meta(child).get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") in KEY_OF_KIND:
                self.queue.add((KEY_OF_KIND[ref["kind"]], _meta(child).get("namespace", ""), str(ref.get("name"))))

    def enqueue_namespace(self, namespace: str) -> None:
        """Queue every InferenceService of ``namespace`` ("" = all)."""
        for isvc in self.isvcs.items():
            if not namespace or _meta(isvc).get("namespace") == namespace:
                self.queue.add(_item("isvc", isvc))

    def resync(self) -> None:
        """Queue every reconciled object (drift repair)."""
        for kind in RECONCILED:
            for obj in self.objects(kind).items():
                self.queue.add(_item(kind, obj))

    # --- running and health ---------------------------------------------------------------------
    def start(self) -> None:
        for informer in self.fixed:
            informer.start(self.stop)

    def forget_unused_credentials(self, since: float) -> None:
        """Stop watching ServiceAccounts and Secrets no reconcile asked for since ``since``."""
        dropped = self.accounts.forget_unused(since) + self.secrets.forget_unused(since)
        if dropped:
            self.metrics.inc("credential_watches_stopped_total", dropped)

    def readiness(self) -> Readiness:
        """Whether the daemon may reconcile and should receive traffic (``probes.py``)."""
        unsynced = [i.name for i in self.fixed if not i.synced.is_set()]
        if unsynced:
            return Readiness(Phase.SYNCING, f"waiting for the initial list of {', '.join(unsynced)}")
        if self.configmap() is None:
            return Readiness(
                Phase.NO_CONFIG,
                f"ConfigMap {self.cfg.config_namespace}/{C.CONFIGMAP_NAME} not found: nothing is rendered "
                f"until it exists (--config-namespace)",
            )
        stalled = [i for i in self.informers() if i.failing_for() > self.cfg.not_ready_after]
        if stalled:
            worst = stalled[0]
            return Readiness(
                Phase.STALLED, f"informer {worst.name} failing for {worst.failing_for():.0f}s: {worst.last_error}"
            )
        return READY

    def liveness(self) -> Liveness:
        """Dead (the kubelet restarts the pod) when an informer thread exited or has not recovered in time."""
        dead = [i.name for i in self.informers() if not i.alive()]
        if dead:
            return Liveness(f"informer thread exited: {', '.join(dead)}")
        stuck = [i for i in self.informers() if i.failing_for() > self.cfg.dead_after]
        if stuck:
            worst = stuck[0]
            return Liveness(
                f"informer {worst.name} has not recovered in {worst.failing_for():.0f}s: {worst.last_error}"
            )
        return ALIVE
