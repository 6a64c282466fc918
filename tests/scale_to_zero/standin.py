"""A small stand-in cluster that carries requests by the rules of the rendered objects, for the protocol test.

What it stands in for, and the rule each part follows:

- cluster DNS and kube-proxy (:class:`Cluster`): a ClusterIP Service ``<name>.<ns>[.svc[.cluster.local]]`` on one of
  its ports reaches the pods its ``selector`` picks (refused while the Deployment has no replica); an ExternalName
  Service resolves to its ``externalName``, on the port the caller dials;
- KEDA's HTTP add-on interceptor (:class:`Interceptor`): a request whose ``Host`` (port stripped) is one of an
  HTTPScaledObject's ``hosts`` (and whose path is under one of its ``pathPrefixes``, if any) is held until
  ``scaleTargetRef.name`` has a replica — which it asks for, as the add-on's scaler asks KEDA — then forwarded to
  ``scaleTargetRef.service``:``port`` with the Host kept (``pkg/routing``, ``interceptor/handler/upstream.go``);
  no match is a 404;
- an ingress controller (:class:`IngressController`): an Ingress rule's ``host`` and ``/`` prefix pick the backend
  Service and port, Host kept;
- a Gateway (:class:`Gateway`): an HTTPRoute's ``hostnames`` and the first rule whose ``RegularExpression`` path
  matches pick the backendRef (one into another namespace only with a ReferenceGrant there); ``RequestHeaderModifier``
  sets headers, ``URLRewrite.hostname`` replaces the Host.

Model pods are stub HTTP servers (:class:`Pods`) that start when their Deployment is scaled up; a transformer pod
calls its ``--predictor_host`` as KServe's transformer does. Every server binds 127.0.0.1 on a free port.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[str, str, dict[str, str], bytes], tuple[int, dict[str, Any]]]  # method, path, headers, body


class Server:
    """One HTTP server on 127.0.0.1 (a free port), answering with ``handler``."""

    def __init__(self, handler: Handler) -> None:
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items()}
                status, payload = outer.handler(self.command, self.path, headers, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        self.handler = handler
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send(
    address: tuple[str, int], method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection(*address, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def strip_port(host: str) -> str:
    return host.rsplit(":", 1)[0] if re.search(r":\d+$", host) else host


@dataclass
class Pods:
    """A Deployment's pods: none until scaled up, then one stub server answering with ``handler``."""

    name: str
    labels: dict[str, str]
    handler: Handler
    server: Server | None = None
    scale_ups: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def scale_up(self) -> None:
        with self.lock:
            if self.server is None:
                self.scale_ups += 1
                self.server = Server(self.handler)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


class Cluster:
    """Services and Deployments of the rendered objects; ``resolve`` is DNS plus kube-proxy."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.objects = objects
        self.services = {
            (o["metadata"]["name"], o["metadata"]["namespace"]): o for o in objects if o["kind"] == "Service"
        }
        self.pods: dict[tuple[str, str], Pods] = {}
        self.extra: dict[tuple[str, str, int], tuple[str, int]] = {}  # (service, ns, port) → address: the add-on's

    def run_pods(self, deployment: str, namespace: str, handler: Handler) -> Pods:
        [dep] = [
            o
            for o in self.objects
            if o["kind"] == "Deployment"
            and o["metadata"]["name"] == deployment
            and o["metadata"]["namespace"] == namespace
        ]
        pods = Pods(deployment, dep["spec"]["template"]["metadata"]["labels"], handler)
        self.pods[(deployment, namespace)] = pods
        return pods

    def resolve(self, host: str, port: int) -> tuple[str, int]:
        name, namespace = _service_name(host)
        if (name, namespace, port) in self.extra:
            return self.extra[(name, namespace, port)]
        svc = self.services.get((name, namespace))
        if svc is None:
            raise ConnectionRefusedError(f"no Service {namespace}/{name}")
        if svc["spec"].get("type") == "ExternalName":
            return self.resolve(svc["spec"]["externalName"], port)
        if port not in [p["port"] for p in svc["spec"]["ports"]]:
            raise ConnectionRefusedError(f"Service {namespace}/{name} has no port {port}")
        selector = svc["spec"]["selector"]
        for (_, ns), pods in self.pods.items():
            if ns == namespace and all(pods.labels.get(k) == v for k, v in selector.items()):
                if pods.server is None:
                    raise ConnectionRefusedError(f"Service {namespace}/{name}: no ready endpoints")
                return ("127.0.0.1", pods.server.port)
        raise ConnectionRefusedError(f"Service {namespace}/{name} selects no pods")

    def call(
        self, url_host: str, method: str, path: str, headers: dict[str, str], body: bytes = b""
    ) -> tuple[int, dict]:
        """A client in the cluster calling ``http://<url_host><path>``: DNS, then the Host header it names."""
        host, _, port = url_host.partition(":")
        return send(self.resolve(host, int(port or 80)), method, path, {**headers, "Host": url_host}, body)

    def stop(self) -> None:
        for pods in self.pods.values():
            pods.stop()


def _service_name(host: str) -> tuple[str, str]:
    parts = host.split(".")
    if len(parts) < 2 or parts[2:] not in ([], ["svc"], ["svc", "cluster", "local"]):
        raise ConnectionRefusedError(f"{host} is not a Service host")
    return parts[0], parts[1]


class Interceptor:
    """KEDA's HTTP add-on interceptor, by the HTTPScaledObjects among ``cluster``'s objects."""

    def __init__(self, cluster: Cluster, service: str, namespace: str, port: int, wait_s: float = 5.0) -> None:
        self.cluster, self.wait_s = cluster, wait_s
        self.routes = [o for o in cluster.objects if o["kind"] == "HTTPScaledObject"]
        self.server = Server(self.handle)
        cluster.extra[(service, namespace, port)] = ("127.0.0.1", self.server.port)
        self.seen: list[tuple[str, str]] = []  # (Host, HTTPScaledObject) of each routed request

    def route(self, host: str, path: str) -> dict[str, Any] | None:
        for so in self.routes:
            spec = so["spec"]
            prefixes = [p.strip("/") for p in spec.get("pathPrefixes") or []]
            trimmed = path.split("?")[0].strip("/")
            under = not prefixes or any(not p or trimmed == p or trimmed.startswith(p + "/") for p in prefixes)
            if strip_port(host) in (spec.get("hosts") or []) and under:
                return so
        return None

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict]:
        host = headers.get("Host", "")
        so = self.route(host, path)
        if so is None:
            return 404, {"error": f"no HTTPScaledObject routes host {host!r}"}
        target, namespace = so["spec"]["scaleTargetRef"], so["metadata"]["namespace"]
        self.seen.append((host, so["metadata"]["name"]))
        self.cluster.pods[(target["name"], namespace)].scale_up()  # the add-on's scaler makes KEDA scale from zero
        deadline = time.monotonic() + self.wait_s
        while True:  # hold the request until an endpoint is ready
            try:
                address = self.cluster.resolve(f"{target['service']}.{namespace}", target["port"])
                break
            except ConnectionRefusedError:
                if time.monotonic() > deadline:
                    return 504, {"error": "backend not ready"}
                time.sleep(0.01)
        return send(address, method, path, headers, body)

    def stop(self) -> None:
        self.server.stop()


class IngressController:
    """Kubernetes Ingress rules: ``host`` + the ``/`` Prefix path → backend Service and port, Host kept."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.ingresses = [o for o in cluster.objects if o["kind"] == "Ingress"]

    def request(self, host: str, method: str, path: str, body: bytes = b"") -> tuple[int, dict]:
        for ingress in self.ingresses:
            for rule in ingress["spec"]["rules"]:
                if rule["host"] != host:
                    continue
                for http_path in rule["http"]["paths"]:
                    if http_path["pathType"] == "Prefix" and path.startswith(http_path["path"]):
                        svc = http_path["backend"]["service"]
                        address = self.cluster.resolve(
                            f"{svc['name']}.{ingress['metadata']['namespace']}", svc["port"]["number"]
                        )
                        return send(address, method, path, {"Host": host}, body)
        return 404, {"error": "no Ingress rule"}


class Gateway:
    """Gateway API HTTPRoutes: hostnames, then the first rule whose path regex matches; its filters; its backend."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.routes = [o for o in cluster.objects if o["kind"] == "HTTPRoute"]

    def request(self, host: str, method: str, path: str, body: bytes = b"") -> tuple[int, dict]:
        for route in self.routes:
            if host not in route["spec"]["hostnames"]:
                continue
            for rule in route["spec"]["rules"]:
                if not any(re.fullmatch(m["path"]["value"], path) for m in rule["matches"]):
                    continue
                headers = {"Host": host}
                for f in rule.get("filters") or []:
                    if f["type"] == "RequestHeaderModifier":
                        headers.update({h["name"]: h["value"] for h in f["requestHeaderModifier"]["set"]})
                    elif f["type"] == "URLRewrite" and "hostname" in f["urlRewrite"]:
                        headers["Host"] = f["urlRewrite"]["hostname"]
                [ref] = rule["backendRefs"]
                if not self._granted(route, ref):
                    return 500, {"error": f"backendRef to {ref['namespace']}/{ref['name']} not permitted"}
                address = self.cluster.resolve(f"{ref['name']}.{ref['namespace']}", ref["port"])
                return send(address, method, path, headers, body)
        return 404, {"error": "no HTTPRoute rule"}

    def _granted(self, route: dict[str, Any], ref: dict[str, Any]) -> bool:
        """A backendRef into another namespace needs a ReferenceGrant there (Gateway API's rule)."""
        namespace = route["metadata"]["namespace"]
        if ref.get("namespace", namespace) == namespace:
            return True
        return any(
            o["kind"] == "ReferenceGrant"
            and o["metadata"]["namespace"] == ref["namespace"]
            and {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": namespace} in o["spec"]["from"]
            and any(t["kind"] == "Service" and t.get("name", ref["name"]) == ref["name"] for t in o["spec"]["to"])
            for o in self.cluster.objects
        )
