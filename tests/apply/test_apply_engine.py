"""The apply loop against the fake API server, through the official client: request shapes, prune safety, faults."""

from __future__ import annotations

import pytest
from kc_manifests import deployment, hpa, isvc_set, service

from kserve_compile.apply.apply import Applier
from kserve_compile.apply.diff import diff_cluster
from kserve_compile.apply.objects import applyset_id
from kserve_compile.apply.report import ApplyOptions
from kserve_compile.apply.wait import wait_for

NS = "ns"
SET = "m.kserve-compile"
SET_ID = applyset_id(SET, NS)


def run(kube, objs, **kw):
    kw.setdefault("namespace", NS)
    kw.setdefault("applyset", SET)
    return Applier(kube, ApplyOptions(**kw)).run(objs)


def test_applyset_id_matches_kubectl_test_vector():
    assert applyset_id("kserve-compile-m", "ns") == "applyset-7XEzksBlPypmzkt2B6PaXmRC-1dtQOdP1w8FdSwPzb4-v1"


def test_first_apply_request_shapes(fake, kube):
    report = run(kube, isvc_set())
    assert report.ok, report.errors
    assert report.counts() == {"created": 4}
    patches = [r for r in fake.log if r.method == "PATCH"]
    assert all(r.content_type == "application/apply-patch+yaml" for r in patches)
    assert all(r.query["fieldManager"] == "kserve-compile" and r.query["force"] == "true" for r in patches)
    # the parent records the GroupKinds before any member is written
    assert patches[0].path == "/api/v1/namespaces/ns/configmaps/m.kserve-compile"
    assert (
        patches[0].body["metadata"]["annotations"]["applyset.kubernetes.io/contains-group-kinds"]
        == "Deployment.apps,HorizontalPodAutoscaler.autoscaling,Ingress.networking.k8s.io,Service"
    )
    assert patches[0].body["metadata"]["labels"]["applyset.kubernetes.io/id"] == SET_ID
    members = patches[1:]
    # every member in Flux's stage order; an absent one is applied at once (a dry run has nothing to compare with)
    assert [("dryRun" in r.query, r.path.rsplit("/", 2)[-2]) for r in members] == [
        (False, "services"),
        (False, "deployments"),
        (False, "horizontalpodautoscalers"),
        (False, "ingresses"),
    ]
    assert all(r.body["metadata"]["labels"]["applyset.kubernetes.io/part-of"] == SET_ID for r in members)
    lists = [r for r in fake.log if r.method == "GET" and "labelSelector" in r.query]
    assert {r.query["labelSelector"] for r in lists} == {f"applyset.kubernetes.io/part-of={SET_ID}"}
    assert len(lists) == 4


def test_unchanged_objects_are_not_written(fake, kube):
    run(kube, isvc_set())
    before = {
        n: fake.find("apps", "deployments", NS, n)["metadata"]["resourceVersion"]
        for n in fake.names("apps", "deployments", NS)
    }
    fake.clear_log()
    report = run(kube, isvc_set(), prune=True)
    assert report.counts() == {"unchanged": 4}
    assert fake.writes() == []
    after = {n: fake.find("apps", "deployments", NS, n)["metadata"]["resourceVersion"] for n in before}
    assert after == before


def test_drift_is_restored(fake, kube):
    run(kube, isvc_set())

    def edit(obj):
        obj["spec"]["template"]["spec"]["containers"][0]["image"] = "evil:1"

    fake.update("apps", "deployments", NS, "m-predictor", edit, manager="kubectl-edit")
    report = run(kube, isvc_set())
    assert [str(c) for c in report.changes if c.action == "configured"] == ["Deployment.apps/ns/m-predictor configured"]
    live = fake.find("apps", "deployments", NS, "m-predictor")
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "img:1"


def test_replicas_never_sent_where_hpa_scales(fake, kube):
    objs = [deployment("m-predictor"), hpa("m-predictor", "m-predictor")]
    assert objs[0]["spec"]["replicas"] == 1
    run(kube, objs)
    sent = [r.body for r in fake.log if r.method == "PATCH" and r.path.endswith("/deployments/m-predictor")]
    assert sent and all("replicas" not in b["spec"] for b in sent)
    # the HPA scales; the next apply keeps its value and writes nothing
    fake.update(
        "apps",
        "deployments",
        NS,
        "m-predictor",
        lambda o: o["spec"].__setitem__("replicas", 4),
        manager="kube-controller-manager",
    )
    fake.clear_log()
    report = run(kube, objs)
    assert report.counts() == {"unchanged": 2} and fake.writes() == []
    assert fake.find("apps", "deployments", NS, "m-predictor")["spec"]["replicas"] == 4


def test_prune_removes_only_dropped_members(fake, kube):
    run(kube, isvc_set(transformer=True))
    outsider = deployment("not-ours")
    fake.put(outsider, manager="helm")
    fake.clear_log()
    report = run(kube, isvc_set(transformer=False), prune=True)
    assert report.ok, report.errors
    deletes = [r.path for r in fake.log if r.method == "DELETE"]
    assert deletes == [
        "/apis/autoscaling/v2/namespaces/ns/horizontalpodautoscalers/m-transformer",
        "/apis/apps/v1/namespaces/ns/deployments/m-transformer",
        "/api/v1/namespaces/ns/services/m-transformer",
    ]
    assert all(r.query == {} and r.body["propagationPolicy"] == "Background" for r in fake.log if r.method == "DELETE")
    assert fake.names("apps", "deployments", NS) == ["m-predictor", "not-ours"]
    parent = fake.find("", "configmaps", NS, SET)
    assert "Deployment.apps" in parent["metadata"]["annotations"]["applyset.kubernetes.io/contains-group-kinds"]


def test_prune_keeps_namespaces_foreign_managed_and_disabled(fake, kube):
    objs = isvc_set()
    ns_obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "extra"}}
    annotated = service("keep-me")
    annotated["metadata"]["annotations"] = {"kserve-compile.io/prune": "disabled"}
    run(kube, objs + [ns_obj, annotated])
    # a member that someone re-created by hand: labelled, but not managed by us
    fake.put(
        dict(
            service("handmade"),
            metadata={"name": "handmade", "namespace": NS, "labels": {"applyset.kubernetes.io/part-of": SET_ID}},
        ),
        manager="kubectl-client-side-apply",
    )
    report = run(kube, objs, prune=True)
    assert report.ok, report.errors
    kept = {str(c.key): c.detail for c in report.changes if c.action == "kept"}
    assert kept == {
        "Namespace/extra": "Namespaces are never pruned",
        "Service/ns/keep-me": "kserve-compile.io/prune: disabled",
        "Service/ns/handmade": "field manager 'kserve-compile' does not manage it",
    }
    assert [r for r in fake.log if r.method == "DELETE"] == []


def test_no_prune_after_failed_apply(fake, kube):
    run(kube, isvc_set(transformer=True))
    fake.fail("PATCH", r"/ingresses/m$", status=500, times=10)
    report = run(kube, isvc_set(), prune=True)
    assert not report.ok
    assert "prune skipped: not every object was applied" in report.errors
    assert [r for r in fake.log if r.method == "DELETE"] == []


def test_mass_prune_guard(fake, kube):
    objs = [service(f"s{i}") for i in range(12)]
    run(kube, objs)
    report = run(kube, objs[:2], prune=True)
    assert not report.ok and "refusing to prune 10 of 12" in report.errors[0]
    assert [r for r in fake.log if r.method == "DELETE"] == []
    report = run(kube, objs[:2], prune=True, allow_mass_prune=True)
    assert report.ok and report.counts()["pruned"] == 10
    assert fake.names("", "services", NS) == ["s0", "s1"]


def test_empty_render_never_prunes_without_opt_in(fake, kube):
    run(kube, [service("a")])
    report = run(kube, [], prune=True)
    assert not report.ok and "the render is empty" in report.errors[0]
    assert fake.names("", "services", NS) == ["a"]


def test_conflict_names_manager_and_field(fake, kube):
    run(kube, [deployment("d")])
    fake.update(
        "apps",
        "deployments",
        NS,
        "d",
        lambda o: o["spec"].__setitem__("replicas", 3),
        manager="kube-controller-manager",
    )
    report = run(kube, [deployment("d", replicas=1)], force=False)
    assert report.errors[0].startswith(  # kube-apiserver's words (1.20), as kubectl prints them
        'Deployment.apps/ns/d: Apply failed with 1 conflict: conflict with "kube-controller-manager" using apps/v1: '
        ".spec.replicas\nrerun with --force-conflicts"
    )
    report = run(kube, [deployment("d", replicas=1)], force=True)
    assert report.ok and fake.find("apps", "deployments", NS, "d")["spec"]["replicas"] == 1


def test_immutable_field_named_and_recreate_is_opt_in(fake, kube):
    run(kube, [deployment("d")])
    changed = deployment("d")
    changed["spec"]["selector"]["matchLabels"]["app"] = "other"
    changed["spec"]["template"]["metadata"]["labels"]["app"] = "other"
    report = run(kube, [changed])
    assert len(report.errors) == 2
    assert "spec.selector is immutable" in report.errors[0] and "--recreate-on-immutable" in report.errors[0]
    assert [r for r in fake.log if r.method == "DELETE"] == []
    uid = fake.find("apps", "deployments", NS, "d")["metadata"]["uid"]
    fake.clear_log()
    report = run(kube, [changed], recreate_on_immutable=True)
    assert report.ok and report.counts() == {"recreated": 1}
    assert [r.query for r in fake.log if r.method == "DELETE"] == [{}]
    live = fake.find("apps", "deployments", NS, "d")
    assert live["spec"]["selector"]["matchLabels"]["app"] == "other" and live["metadata"]["uid"] != uid


@pytest.mark.parametrize(
    "status,headers,expected_sleep",
    [
        (429, {"Retry-After": "1"}, [1.0]),
        (500, {}, [0.01]),
        (503, {}, [0.01]),
        (0, {}, [0.01]),  # dropped connection
    ],
)
def test_transient_failures_are_retried(fake, kube, sleeps, status, headers, expected_sleep):
    fake.fail("PATCH", r"/deployments/d$", status=status, headers=headers, dry_run=False)
    report = run(kube, [deployment("d")])
    assert report.ok, report.errors
    assert sleeps == expected_sleep
    assert fake.find("apps", "deployments", NS, "d") is not None


def test_retries_give_up_with_a_clear_error(fake, kube, sleeps):
    fake.fail("PATCH", r"/deployments/d$", status=0, times=10)
    report = run(kube, [deployment("d")])
    assert report.errors[0].startswith("Deployment.apps/ns/d: cannot reach the API server")
    assert sleeps == [0.01, 0.02, 0.04]


def test_server_dry_run_writes_nothing(fake, kube):
    report = run(kube, isvc_set(), dry_run=True)
    assert report.ok and report.counts() == {"created": 4}
    assert fake.writes() == [] and fake.names("apps", "deployments", NS) == []


def test_refuses_a_parent_owned_by_another_tool(fake, kube):
    fake.put(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": SET,
                "namespace": NS,
                "labels": {"applyset.kubernetes.io/id": SET_ID},
                "annotations": {"applyset.kubernetes.io/tooling": "kubectl/v1.32"},
            },
        }
    )
    report = run(kube, isvc_set())
    assert "belongs to another tool (kubectl/v1.32)" in report.errors[0]
    assert fake.writes() == []


def test_input_errors_name_the_object(fake, kube):
    bad = deployment("d")
    bad["metadata"]["labels"]["applyset.kubernetes.io/part-of"] = "applyset-other-v1"
    report = run(
        kube,
        [
            bad,
            {"apiVersion": "v1", "kind": "Service", "metadata": {}},
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
        ],
    )
    assert report.errors == [
        "Deployment.apps/ns/d: metadata.labels[applyset.kubernetes.io/part-of] already names another ApplySet "
        "(applyset-other-v1); remove the label from the input",
        "object #2 (Service): metadata.name is required",
        "Widget/w: the server does not serve API version 'example.com/v1'",
    ]
    assert fake.writes() == []


def test_diff_cluster_reports_created_configured_unchanged(fake, kube):
    opts = ApplyOptions(namespace=NS, applyset=SET)
    run(kube, [deployment("a"), deployment("b")])
    fake.clear_log()
    result = diff_cluster(kube, [deployment("a"), deployment("b", image="img:2"), deployment("c")], opts)
    assert result.errors == [] and result.compared == 3
    assert {d.ref: d.action for d in result.diffs} == {  # a is unchanged: no diff
        "Deployment.apps/ns/b": "changed",
        "Deployment.apps/ns/c": "added",
    }
    changed = result.diffs[0].text
    assert changed.startswith("--- live/Deployment.apps/ns/b\n+++ merged/Deployment.apps/ns/b\n")
    assert "-      - image: img:1\n+      - image: img:2\n" in changed
    assert result.diffs[1].text.startswith("--- /dev/null\n+++ merged/Deployment.apps/ns/c\n")
    assert fake.writes() == []


def test_wait_reports_progress_and_failure(fake, kube):
    report = run(kube, [deployment("d")])
    messages: list[str] = []
    ticks = iter(range(100))

    def become_ready(_):
        fake.update(
            "apps",
            "deployments",
            NS,
            "d",
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

    result = wait_for(kube, report.applied, 10, progress=messages.append, clock=lambda: next(ticks), sleep=become_ready)
    assert result.ok
    assert messages == [
        "Deployment.apps/ns/d: InProgress — replicas: 0/1",
        "Deployment.apps/ns/d: Current — 1/1 ready",
        "all 1 objects are ready",
    ]

    fake.update(
        "apps",
        "deployments",
        NS,
        "d",
        lambda o: o["status"].__setitem__(
            "conditions",
            [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "too slow"}],
        ),
        manager="kube-controller-manager",
        subresource="status",
    )
    result = wait_for(kube, report.applied, 10, clock=lambda: next(ticks), sleep=lambda s: None)
    assert not result.ok and not result.timed_out
    result_states = {str(k): s.state for k, s in result.statuses.items()}
    assert result_states == {"Deployment.apps/ns/d": "Failed"}
