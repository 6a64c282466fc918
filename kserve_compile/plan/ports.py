"""A component's Service ports, planned from its pod spec (``reconcilers/service/service_reconciler.go``
createDefaultSvc): the Service renders them and the routes and status read them."""

from __future__ import annotations

from typing import Any

from .. import constants as C
from .components import Component


def _app_protocol(port: dict[str, Any]) -> str | None:
    name = port.get("name") or ""
    return "kubernetes.io/h2c" if ("grpc" in name or "h2c" in name) else None


def service_ports(component: Component) -> list[dict[str, Any]]:
    containers = component.pod_spec.get("containers") or []
    if not containers:
        return []
    source = next((c for c in containers if c.get("name") == C.CONTAINER_TRANSFORMER), containers[0])
    ports = source.get("ports") or []
    if not ports:
        out = [{"name": component.name, "port": C.SERVICE_PORT, "targetPort": C.DEFAULT_HTTP_PORT, "protocol": "TCP"}]
    else:
        first = ports[0]
        out = [
            _port(
                first.get("name"),
                C.SERVICE_PORT,
                first.get("containerPort", 0),
                first.get("protocol"),
                _app_protocol(first),
            )
        ]
        for port in ports[1:]:
            number = port.get("containerPort", 0)
            out.append(_port(port.get("name"), number, number, port.get("protocol") or "TCP", _app_protocol(port)))
    if component.spec.batcher is not None or component.spec.logger is not None:
        out[0]["targetPort"] = C.AGENT_PORT
    return out


def _port(name: str | None, port: int, target: int, protocol: str | None, app_protocol: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"port": port, "targetPort": target}
    if name:
        out["name"] = name
    if protocol:
        out["protocol"] = protocol
    if app_protocol:
        out["appProtocol"] = app_protocol
    return out
