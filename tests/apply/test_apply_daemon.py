"""The daemon against the fake API server: informers, leader election, reconcile, status, resync cost."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request

import pytest
from kc_manifests import isvc_set, shipped_configmap

from kserve_compile.apply.daemon import Daemon, DaemonConfig, Metrics
from kserve_compile.apply.endpoints import http_server
from kserve_compile.apply.informer import Informer
from kserve_compile.apply.leader import LeaderElector
from kserve_compile.apply.objects import applyset_id

NS = "ns"
CONFIGMAP = shipped_configmap("Standard")


def isvc(name: str, transformer: bool = False, ns: str = NS) -> dict:
    spec = {"predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://b/m"}}}
    if transformer:
        spec["transformer"] = {"containers": [{"name": "kserve-container", "image": "t:1"}]}
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": name, "namespace": ns, "annotations": {"serving.kserve.io/deploymentMode": "Standard"}},
        "spec": spec,
    }


def fake_render(objects, configmap, source):
    """Stands in for the renderer: the Standard-mode shape of each isvc (real renderer: see the e2e test)."""
    out = []
    for obj in objects:
        if obj["kind"] == "InferenceService":
            md = obj["metadata"]
            out += isvc_set(md["name"], md["namespace"], transformer="transformer" in obj["spec"])
    return out


def fake_urls(isvc_obj, configmap):
    name, ns = isvc_obj["metadata"]["name"], isvc_obj["metadata"]["namespace"]
    return {
        "url": f"http://{name}-{ns}.example.com",
        "address": {"url": f"http://{name}-predictor.{ns}.svc.cluster.local"},
    }


_DAEMONS: list[Daemon] = []


@pytest.fixture(autouse=True)
def _stop_daemons(fake):  # torn down before the fake API server stops
    yield
    while _DAEMONS:
        _DAEMONS.pop().stop.set()  # ends the watch threads of the on-demand (credential) informers


def make_daemon(kube, fake=None, render=fake_render, **cfg) -> Daemon:
    cfg.setdefault("leader_elect", False)
    if fake is not None and fake.find("", "configmaps", "kserve", "inferenceservice-config") is None:
        fake.put(CONFIGMAP)
    daemon = Daemon(kube, DaemonConfig(**cfg), render=render, status_urls=fake_urls, clock=lambda: 1_800_000_000.0)
    _DAEMONS.append(daemon)
    return daemon


def sync(daemon: Daemon) -> int:
    """What the informers' watches would do, synchronously: list everything, then work the queue."""
    for informer in daemon.sources.fixed:
        informer.relist()
    return daemon.drain()


def test_informer_relists_after_410_gone(fake, kube):
    metrics = Metrics()
    seen: list[tuple[str, str]] = []
    res = kube.resource("serving.kserve.io/v1beta1", "InferenceService")
    inf = Informer(kube, res, "", lambda t, o: seen.append((t, o["metadata"]["name"])), metrics, watch_timeout=2)
    fake.put(isvc("a"))
    inf.relist()
    old_rv = inf.resource_version
    fake.put(isvc("b"))
    fake.compact()
    stop = threading.Event()
    inf.start(stop)
    try:
        wait_until(lambda: ("ADDED", "b") in seen)
    finally:
        stop.set()
    watches = [r for r in fake.log if r.query.get("watch") == "true"]
    assert watches[0].query["resourceVersion"] == old_rv and watches[0].query["allowWatchBookmarks"] == "true"
    assert metrics.get("watch_restarts_total", resource="inferenceservices", reason="expired") == 1
    assert sorted(k[1] for k in inf.cache) == ["a", "b"]
    assert seen[:2] == [("SYNC", "a"), ("ADDED", "b")]  # the relist reports only what changed


def wait_until(cond, timeout: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def test_informer_follows_watch_events(fake, kube):
    res = kube.resource("serving.kserve.io/v1beta1", "InferenceService")
    seen: list[tuple[str, str]] = []
    inf = Informer(kube, res, NS, lambda t, o: seen.append((t, o["metadata"]["name"])), Metrics(), watch_timeout=1)
    inf.relist()
    stop = threading.Event()
    inf.start(stop)
    try:
        wait_until(lambda: fake.watch_count("inferenceservices") == 1)
        fake.put(isvc("a"))
        fake.update("serving.kserve.io", "inferenceservices", NS, "a", lambda o: o["spec"].__setitem__("x", 1))
        wait_until(lambda: len(seen) == 2)
    finally:
        stop.set()
    assert seen == [("ADDED", "a"), ("MODIFIED", "a")]
    assert inf.cache[(NS, "a")]["spec"]["x"] == 1


def test_leader_election(fake, kube):
    now = [1_800_000_000.0]
    a = LeaderElector(kube, "kserve", "lease", "a", lease_seconds=15, clock=lambda: now[0])
    b = LeaderElector(kube, "kserve", "lease", "b", lease_seconds=15, clock=lambda: now[0])
    assert a.try_acquire_or_renew() and a.is_leader()
    assert not b.try_acquire_or_renew() and not b.is_leader()
    now[0] += 5
    assert a.try_acquire_or_renew()
    now[0] += 16  # a stopped renewing
    assert not a.is_leader()
    assert b.try_acquire_or_renew() and b.is_leader()
    lease = fake.find("coordination.k8s.io", "leases", "kserve", "lease")
    assert lease["spec"]["holderIdentity"] == "b" and lease["spec"]["leaseTransitions"] == 1
    assert not a.try_acquire_or_renew()
    writes = [(r.method, r.path) for r in fake.writes()]
    assert writes[0] == ("POST", "/apis/coordination.k8s.io/v1/namespaces/kserve/leases")
    assert set(writes[1:]) == {("PUT", "/apis/coordination.k8s.io/v1/namespaces/kserve/leases/lease")}


def test_follower_never_writes(fake, kube):
    fake.put(isvc("m"))
    daemon = make_daemon(kube, fake, leader_elect=True, lease_namespace="kserve", identity="follower")
    other = LeaderElector(kube, "kserve", daemon.cfg.lease_name, "leader", clock=daemon.clock)
    assert other.try_acquire_or_renew()
    fake.clear_log()
    assert not daemon.elector.try_acquire_or_renew()
    sync(daemon)
    assert [r for r in fake.writes() if "leases" not in r.path] == []


def test_end_to_end_transformer_removed(fake, kube):
    fake.put(isvc("m", transformer=True))
    daemon = make_daemon(kube, fake)
    assert sync(daemon) == 1
    names = fake.names("apps", "deployments", NS)
    assert names == ["m-predictor", "m-transformer"]
    live_isvc = fake.find("serving.kserve.io", "inferenceservices", NS, "m")
    dep = fake.find("apps", "deployments", NS, "m-transformer")
    assert dep["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "serving.kserve.io/v1beta1",
            "kind": "InferenceService",
            "name": "m",
            "uid": live_isvc["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    parent = fake.find("", "configmaps", NS, "m.kserve-compile")
    assert parent["metadata"]["labels"]["applyset.kubernetes.io/id"] == applyset_id("m.kserve-compile", NS)
    status = live_isvc["status"]
    assert status["observedGeneration"] == 1 and status["url"] == "http://m-ns.example.com"
    assert status["address"] == {"url": "http://m-predictor.ns.svc.cluster.local"}
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "IngressReady": "True",
        "PredictorReady": "False",
        "Ready": "False",
        "TransformerReady": "False",
    }
    status_writes = [r for r in fake.writes() if r.path.endswith("/status")]
    assert len(status_writes) == 1 and status_writes[0].query == {
        "fieldManager": "kserve-compile-status",
        "force": "true",
    }
    assert status_writes[0].content_type == "application/apply-patch+yaml"

    # the user removes the transformer
    fake.update(
        "serving.kserve.io", "inferenceservices", NS, "m", lambda o: o["spec"].pop("transformer"), manager="kubectl"
    )
    fake.clear_log()
    assert sync(daemon) == 1
    deletes = sorted(r.path for r in fake.log if r.method == "DELETE")
    assert deletes == [
        "/api/v1/namespaces/ns/services/m-transformer",
        "/apis/apps/v1/namespaces/ns/deployments/m-transformer",
        "/apis/autoscaling/v2/namespaces/ns/horizontalpodautoscalers/m-transformer",
    ]
    assert fake.names("apps", "deployments", NS) == ["m-predictor"]
    assert fake.names("", "services", NS) == ["m-predictor"]
    assert fake.names("networking.k8s.io", "ingresses", NS) == ["m"]
    status = fake.find("serving.kserve.io", "inferenceservices", NS, "m")["status"]
    assert status["observedGeneration"] == 2
    assert sorted(c["type"] for c in status["conditions"]) == ["IngressReady", "PredictorReady", "Ready"]
    assert all(c["observedGeneration"] == 2 for c in status["conditions"])


def test_status_becomes_ready_and_own_status_events_are_ignored(fake, kube):
    fake.put(isvc("m"))
    daemon = make_daemon(kube, fake)
    sync(daemon)
    fake.update(
        "apps",
        "deployments",
        NS,
        "m-predictor",
        lambda o: o.__setitem__(
            "status",
            {
                "observedGeneration": 1,
                "replicas": 1,
                "updatedReplicas": 1,
                "readyReplicas": 1,
                "availableReplicas": 1,
                "conditions": [{"type": "Available", "status": "True"}],
            },
        ),
        manager="kube-controller-manager",
        subresource="status",
    )
    daemon.resync()
    daemon.drain()
    conds = {c["type"]: c for c in fake.find("serving.kserve.io", "inferenceservices", NS, "m")["status"]["conditions"]}
    assert conds["Ready"]["status"] == "True" and conds["PredictorReady"]["status"] == "True"
    # a MODIFIED event carrying only our status write does not requeue the isvc
    daemon.sources.isvcs.parts[0].handler("MODIFIED", fake.find("serving.kserve.io", "inferenceservices", NS, "m"))
    assert len(daemon.queue) == 0


def test_noop_resync_of_ten_isvcs_sends_no_request(fake, kube):
    for i in range(10):
        fake.put(isvc(f"m{i}"))
    daemon = make_daemon(kube, fake)
    assert sync(daemon) == 10
    for informer in daemon.sources.fixed:  # the watches catch up with what the daemon wrote
        informer.relist()
    daemon.drain()  # children's events re-check their owners once
    fake.clear_log()
    kube.requests.clear()
    daemon.resync()
    assert daemon.drain() == 10
    # was 9 per isvc (GET parent, 4 LISTs, 4 dry-run PATCHes): the caches answer all of it now
    assert fake.log == [] and kube.requests == {}
    assert daemon.metrics.get("reconcile_total", result="success") >= 20


def test_resync_restores_drift(fake, kube):
    fake.put(isvc("m"))
    daemon = make_daemon(kube, fake)
    sync(daemon)
    fake.update(
        "apps",
        "deployments",
        NS,
        "m-predictor",
        lambda o: o["spec"]["template"]["spec"]["containers"][0].__setitem__("image", "evil"),
    )
    for informer in daemon.sources.fixed:
        informer.relist()
    daemon.resync()
    daemon.drain()
    dep = fake.find("apps", "deployments", NS, "m-predictor")
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "img:1"
    assert daemon.metrics.get("drift_detected_total") == 1


def test_render_failure_sets_status_and_applies_nothing(fake, kube):
    fake.put(isvc("m"))

    def broken(objects, configmap, source):
        raise ValueError("spec.predictor: no runtime supports sklearn")

    daemon = make_daemon(kube, fake, render=broken)
    sync(daemon)
    writes = [r.path for r in fake.writes() if "/events" not in r.path]
    assert writes == ["/apis/serving.kserve.io/v1beta1/namespaces/ns/inferenceservices/m/status"]
    event = next(r.body for r in fake.writes() if "/events" in r.path)
    assert event["reason"] == "RenderFailed" and event["involvedObject"]["name"] == "m"
    ready = {
        c["type"]: c for c in fake.find("serving.kserve.io", "inferenceservices", NS, "m")["status"]["conditions"]
    }["Ready"]
    assert ready["status"] == "False" and ready["reason"] == "RenderFailed"
    assert "no runtime supports sklearn" in ready["message"]


def test_runtime_change_requeues_isvcs_in_its_namespace(fake, kube):
    fake.put(isvc("m"))
    fake.put(isvc("other", ns="elsewhere"))
    daemon = make_daemon(kube, fake)
    sync(daemon)
    daemon.sources.runtimes.parts[0].handler("ADDED", {"metadata": {"name": "rt", "namespace": NS}})
    assert daemon.queue.get(timeout=0) == ("isvc", NS, "m") and len(daemon.queue) == 0


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_health_ready_metrics_endpoints(fake, kube):
    fake.put(isvc("m"))
    daemon = make_daemon(kube, fake)
    server = http_server("127.0.0.1:0", daemon.probes())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert _get(base + "/healthz") == (200, "ok\n")
        code, reason = _get(base + "/readyz")
        assert code == 503 and reason.startswith("waiting for the initial list of inferenceservices")
        sync(daemon)
        assert _get(base + "/readyz") == (200, "ok\n")
        code, text = _get(base + "/metrics")
        assert code == 200
        assert 'kserve_compile_reconcile_total{result="success"} 1' in text
        assert 'kserve_compile_apply_objects_total{action="created"} 4' in text
        assert "kserve_compile_is_leader 1" in text
    finally:
        server.shutdown()
        server.server_close()


def test_end_to_end_with_the_real_renderer(fake, kube):
    api = pytest.importorskip("kserve_compile.api", reason="the renderer (kserve_compile.api) is not in this tree")
    fake.put(isvc("m", transformer=True))
    daemon = make_daemon(kube, fake, render=lambda o, c, s: api.render_objects(o, c, s))
    daemon.reconciler.status_urls = api.isvc_status
    sync(daemon)
    with_transformer = set(fake.names("apps", "deployments", NS))
    assert with_transformer == {"m-predictor", "m-transformer"}
    all_before = {
        kind: fake.names(g, p, NS)
        for kind, (g, p) in {"svc": ("", "services"), "hpa": ("autoscaling", "horizontalpodautoscalers")}.items()
    }
    fake.update(
        "serving.kserve.io", "inferenceservices", NS, "m", lambda o: o["spec"].pop("transformer"), manager="kubectl"
    )
    fake.clear_log()
    sync(daemon)
    deleted = sorted(r.path.rsplit("/", 1)[-1] for r in fake.log if r.method == "DELETE")
    assert deleted and all(name.startswith("m-transformer") for name in deleted)
    assert fake.names("apps", "deployments", NS) == ["m-predictor"]
    assert set(fake.names("", "services", NS)) == {n for n in all_before["svc"] if "transformer" not in n}
    status = fake.find("serving.kserve.io", "inferenceservices", NS, "m")["status"]
    assert status["observedGeneration"] == 2
    assert status["address"]["url"] == "http://m-predictor.ns.svc.cluster.local"


def llmisvc(name: str, ns: str = NS, **spec) -> dict:
    spec.setdefault("model", {"uri": "pvc://models/llama"})
    spec.setdefault("template", {"containers": [{"name": "main"}]})
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def test_llm_inference_service_end_to_end(fake, kube):
    api = pytest.importorskip("kserve_compile.api", reason="the renderer (kserve_compile.api) is not in this tree")
    fake.put(llmisvc("llm", router={"scheduler": {}, "route": {}, "gateway": {}}))
    daemon = make_daemon(kube, fake, render=lambda o, c, s: api.render_objects(o, c, s))
    daemon.reconciler.status_urls = api.isvc_status
    assert daemon.sources.llms.parts and daemon.sources.llm_configs.parts
    sync(daemon)
    assert set(fake.names("apps", "deployments", NS)) == {"llm-kserve", "llm-kserve-router-scheduler"}
    assert fake.names("inference.networking.k8s.io", "inferencepools", NS) == ["llm-inference-pool"]
    assert fake.names("gateway.networking.k8s.io", "httproutes", NS) == ["llm-kserve-route"]
    # a config in the service's namespace, named in baseRefs, re-renders the service
    fake.put(
        {
            "apiVersion": "serving.kserve.io/v1alpha2",
            "kind": "LLMInferenceServiceConfig",
            "metadata": {"name": "team", "namespace": NS},
            "spec": {"annotations": {"team": "ml"}},
        }
    )
    fake.update(
        "serving.kserve.io",
        "llminferenceservices",
        NS,
        "llm",
        lambda o: o["spec"].update(baseRefs=[{"name": "team"}]),
        manager="kubectl",
    )
    sync(daemon)
    # (annotations: spec.labels would also reach the Deployment's immutable selector, as in KServe at this snapshot)
    pod_annotations = fake.find("apps", "deployments", NS, "llm-kserve")["spec"]["template"]["metadata"]["annotations"]
    assert pod_annotations["team"] == "ml"
    # removing the route prunes the HTTPRoute; the scheduler and its pool stay
    fake.update(
        "serving.kserve.io",
        "llminferenceservices",
        NS,
        "llm",
        lambda o: o["spec"]["router"].pop("route"),
        manager="kubectl",
    )
    sync(daemon)
    assert fake.names("gateway.networking.k8s.io", "httproutes", NS) == []
    assert fake.names("inference.networking.k8s.io", "inferencepools", NS) == ["llm-inference-pool"]


def test_daemon_runs_without_llm_crds(fake, kube, monkeypatch):
    real = kube.resource

    def no_llm(api_version, kind):
        if kind.startswith("LLMInferenceService"):
            from kserve_compile.apply.kube import ApiError

            raise ApiError(404, "NotFound", "not served")
        return real(api_version, kind)

    monkeypatch.setattr(kube, "resource", no_llm)
    daemon = make_daemon(kube)
    assert not daemon.sources.llms.parts and not daemon.sources.llm_configs.parts
    assert not any("LLMInferenceService" in informer.name for informer in daemon.sources.informers())


def test_only_spec_or_metadata_changes_queue_an_isvc_again(fake, kube):
    """GenerationChangedPredicate | LabelChangedPredicate | AnnotationChangedPredicate, as controller-runtime."""
    fake.put(isvc("m"))
    daemon = make_daemon(kube, fake)
    sync(daemon)
    handler = daemon.sources.isvcs.parts[0].handler
    isvcs = ("serving.kserve.io", "inferenceservices", NS, "m")

    def queued_after(mutate, manager="kubectl", subresource="") -> bool:
        fake.update(*isvcs, mutate, manager=manager, subresource=subresource)
        handler("MODIFIED", fake.find(*isvcs))
        item = daemon.queue.get(timeout=0)
        if item is not None:
            daemon.queue.done(item)
        return item == ("isvc", NS, "m")

    assert not queued_after(lambda o: o["status"].update(url="http://x"), "kserve-compile-status", "status")
    assert queued_after(lambda o: o["metadata"].setdefault("labels", {}).update(team="a"))
    assert queued_after(lambda o: o["metadata"].setdefault("annotations", {}).update(note="b"))
    assert queued_after(lambda o: o["spec"]["predictor"]["model"].update(storageUri="gs://b/m2"))
    assert fake.find(*isvcs)["metadata"]["generation"] == 2  # the spec change bumped it
    assert not queued_after(lambda o: o["status"].update(url="http://y"), "kserve-compile-status", "status")
    recreated = fake.find(*isvcs) | {"metadata": {**fake.find(*isvcs)["metadata"], "uid": "another"}}
    handler("MODIFIED", recreated)  # deleted and created again between two events
    assert daemon.queue.get(timeout=0) == ("isvc", NS, "m")
