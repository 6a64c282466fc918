"""The rendered objects carry a request end to end, by the add-on's interceptor protocol (routing by ``Host``).

The golden scale-to-zero scenarios are rendered; a stand-in cluster (``standin``: DNS and kube-proxy, an ingress
controller or a Gateway, and an interceptor that reads the rendered HTTPScaledObjects) carries a request sent with
the rendered external host to stub model pods, which start only when the interceptor scales their Deployment up.
The stand-ins are ours; every host, port, Service, filter and backend they follow is the rendered one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kserve_compile.api import render_result

from .standin import Cluster, Gateway, IngressController, Interceptor, send

GOLDEN = Path(__file__).resolve().parents[2] / "golden"


def render(scenario: str) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    result = render_result([str(GOLDEN / scenario / "input.yaml")])
    return result.objects, result.status_rows()


def model_pod(component: str):  # type: ignore[no-untyped-def]
    def handler(method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        return 200, {
            "component": component,
            "path": path,
            "host": headers.get("Host"),
            "isvc": headers.get("KServe-Isvc-Name"),
        }

    return handler


def deployment_args(objects: list[dict[str, Any]], name: str) -> list[str]:
    [dep] = [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == name]
    return dep["spec"]["template"]["spec"]["containers"][0]["args"]


@pytest.fixture
def stopping() -> Iterator[list[Any]]:
    """Whatever a test starts goes here; it is stopped when the test ends."""
    started: list[Any] = []
    yield started
    for thing in reversed(started):
        thing.stop()


def interceptor_for(cluster: Cluster) -> Interceptor:
    """The interceptor, at the Service and port the rendered proxy Services resolve to."""
    proxies = [o["spec"] for o in cluster.objects if o["kind"] == "Service" and o["spec"].get("type") == "ExternalName"]
    [(host, port)] = {(p["externalName"], p["ports"][0]["port"]) for p in proxies}
    name, namespace = host.split(".")[:2]
    return Interceptor(cluster, name, namespace, port)


def test_an_ingress_request_reaches_the_transformer_then_the_predictor_from_zero(stopping: list[Any]) -> None:
    objects, _ = render("scale-to-zero-ingress")
    cluster = Cluster(objects)
    stopping.append(cluster)
    predictor = cluster.run_pods("torch-mnist-predictor", "team-a", model_pod("predictor"))
    # KServe's transformer calls http://<--predictor_host>/v1/models/<name>:predict; here, with the rendered value
    predictor_host = deployment_args(objects, "torch-mnist-transformer")[3]

    def transformer(method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        status, answer = cluster.call(predictor_host, "POST", "/v1/models/torch-mnist:predict", {}, body)
        return status, {"component": "transformer", "host": headers.get("Host"), "predictor": answer}

    transformer_pods = cluster.run_pods("torch-mnist-transformer", "team-a", transformer)
    interceptor = interceptor_for(cluster)
    stopping.append(interceptor)
    assert predictor.server is None and transformer_pods.server is None  # both at zero replicas

    status, answer = IngressController(cluster).request(
        "torch-mnist-team-a.example.com", "POST", "/v1/models/torch-mnist:predict", b"{}"
    )

    assert status == 200, answer
    assert answer["component"] == "transformer" and answer["host"] == "torch-mnist-team-a.example.com"
    assert answer["predictor"] == {
        "component": "predictor",
        "path": "/v1/models/torch-mnist:predict",
        "host": "torch-mnist-predictor-proxy.team-a:8080",
        "isvc": None,
    }
    assert (predictor.scale_ups, transformer_pods.scale_ups) == (1, 1)  # each scaled up from zero by the interceptor
    assert interceptor.seen == [
        ("torch-mnist-team-a.example.com", "torch-mnist-transformer"),
        ("torch-mnist-predictor-proxy.team-a:8080", "torch-mnist-predictor"),
    ]


def test_a_component_host_reaches_its_own_component(stopping: list[Any]) -> None:
    objects, _ = render("scale-to-zero-ingress")
    cluster = Cluster(objects)
    stopping.append(cluster)
    predictor = cluster.run_pods("torch-mnist-predictor", "team-a", model_pod("predictor"))
    cluster.run_pods("torch-mnist-transformer", "team-a", model_pod("transformer"))
    stopping.append(interceptor_for(cluster))
    status, answer = IngressController(cluster).request(
        "torch-mnist-predictor-team-a.example.com", "GET", "/v1/models/torch-mnist"
    )
    assert (status, answer["component"]) == (200, "predictor")
    assert predictor.scale_ups == 1


def test_the_interceptor_routes_by_host_and_refuses_one_it_does_not_know(stopping: list[Any]) -> None:
    objects, _ = render("scale-to-zero-ingress")
    cluster = Cluster(objects)
    stopping.append(cluster)
    predictor = cluster.run_pods("torch-mnist-predictor", "team-a", model_pod("predictor"))
    stopping.append(interceptor_for(cluster))
    for host in (
        "torch-mnist-predictor-proxy.team-a.svc.cluster.local:8080",
        "torch-mnist-predictor-proxy.team-a.svc:8080",
    ):
        status, answer = cluster.call(host, "GET", "/", {})
        assert (status, answer["component"]) == (200, "predictor")
    # the same address with a Host no HTTPScaledObject lists: the add-on's 404, and nothing more is scaled up
    address = cluster.resolve("torch-mnist-predictor-proxy.team-a", 8080)
    status, answer = send(address, "GET", "/", {"Host": "unknown.example.com"})
    assert status == 404 and "unknown.example.com" in answer["error"]
    assert predictor.scale_ups == 1


def test_without_the_proxy_a_component_at_zero_is_unreachable(stopping: list[Any]) -> None:
    """Why the proxy exists: KServe's component Service has no endpoint while its Deployment is at zero."""
    objects, _ = render("scale-to-zero-ingress")
    cluster = Cluster(objects)
    stopping.append(cluster)
    cluster.run_pods("torch-mnist-predictor", "team-a", model_pod("predictor"))
    with pytest.raises(ConnectionRefusedError, match="no ready endpoints"):
        cluster.call("torch-mnist-predictor.team-a", "GET", "/", {})


def test_gateway_routes_keep_kserves_explain_rule_through_the_interceptor(stopping: list[Any]) -> None:
    objects, _ = render("scale-to-zero-gateway-api")
    cluster = Cluster(objects)
    stopping.append(cluster)
    predictor = cluster.run_pods("income-gw-predictor", "team-a", model_pod("predictor"))
    explainer = cluster.run_pods("income-gw-explainer", "team-a", model_pod("explainer"))
    stopping.append(interceptor_for(cluster))
    gateway = Gateway(cluster)

    status, answer = gateway.request("income-gw-team-a.example.com", "POST", "/v1/models/income-gw:explain", b"{}")
    assert (status, answer["component"], answer["isvc"]) == (200, "explainer", "income-gw")
    assert answer["host"] == "income-gw-explainer-proxy.team-a.svc.cluster.local"  # the URLRewrite the add-on matches
    assert (predictor.scale_ups, explainer.scale_ups) == (0, 1)

    status, answer = gateway.request("income-gw-team-a.example.com", "POST", "/v1/models/income-gw:predict", b"{}")
    assert (status, answer["component"]) == (200, "predictor")
    assert predictor.scale_ups == 1


def test_gateway_backend_into_the_add_ons_namespace_needs_the_reference_grant(stopping: list[Any]) -> None:
    objects, _ = render("scale-to-zero-gateway-api")
    without = [o for o in objects if o["kind"] != "ReferenceGrant"]
    cluster = Cluster(without)
    stopping.append(cluster)
    cluster.run_pods("income-gw-predictor", "team-a", model_pod("predictor"))
    stopping.append(interceptor_for(cluster))
    status, answer = Gateway(cluster).request("income-gw-team-a.example.com", "GET", "/v1/models/income-gw")
    assert status == 500 and "not permitted" in answer["error"]


def test_a_cluster_local_isvc_is_reached_at_its_status_address(stopping: list[Any]) -> None:
    objects, rows = render("scale-to-zero-cluster-local")
    assert not [o for o in objects if o["kind"] in ("Ingress", "HTTPRoute")]
    cluster = Cluster(objects)
    stopping.append(cluster)
    predictor = cluster.run_pods("sklearn-internal-predictor", "ml", model_pod("predictor"))
    stopping.append(interceptor_for(cluster))
    address = rows[0][1]["address"]["url"].removeprefix("http://")
    status, answer = cluster.call(address, "POST", "/v1/models/sklearn-internal:predict", {}, b"{}")
    assert (status, answer["component"], predictor.scale_ups) == (200, "predictor", 1)
