"""Helpers for the apply and daemon tests against the real kube-apiserver (apiserver.py starts it).

KServe inputs as the tests write them, the ``inferenceservice-config`` ConfigMap in ``kserve``, the project's CLI
as a subprocess, and daemons run in this process (so a test reads their metrics and request counts directly)
and stopped when the test ends.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import yaml
from apiserver import ROOT, ApiServer

from kserve_compile.apply.daemon import Daemon, DaemonConfig
from kserve_compile.apply.kube import Kube, load_api_client

ISVC_API = "serving.kserve.io/v1beta1"
SHIPPED_CONFIG = ROOT / "kserve_compile" / "data" / "inferenceservice-config.yaml"
# kube-apiserver 1.20 serves autoscaling/v2beta2, not the autoscaling/v2 KServe's HPAs use: these isvcs render none
NO_HPA = {"serving.kserve.io/deploymentMode": "Standard", "serving.kserve.io/autoscalerClass": "none"}


def isvc(name: str, namespace: str, annotations: dict[str, str] | None = None, **predictor: Any) -> dict[str, Any]:
    predictor.setdefault("model", {"modelFormat": {"name": "sklearn"}, "storageUri": f"gs://bucket/{name}"})
    return {
        "apiVersion": ISVC_API,
        "kind": "InferenceService",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": dict(NO_HPA if annotations is None else annotations),
        },
        "spec": {"predictor": predictor},
    }


def install_config(server: ApiServer) -> None:
    """KServe's shipped ``inferenceservice-config`` in ``kserve``, with Standard as the default mode."""
    server.request(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kserve"}},
        check=False,
    )
    config = next(d for d in yaml.safe_load_all(SHIPPED_CONFIG.read_text()) if d and d.get("kind") == "ConfigMap")
    config["data"]["deploy"] = json.dumps({"defaultDeploymentMode": "Standard"})
    server.apply(config)


def kube(server: ApiServer) -> Kube:
    return Kube(load_api_client(server.kubeconfig), context="test")


def cli(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``kserve-compile ARGS`` in a fresh process."""
    return subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


def status_of(server: ApiServer, namespace: str, name: str) -> dict[str, Any]:
    return (server.get(ISVC_API, "InferenceService", name, namespace) or {}).get("status") or {}


def conditions(server: ApiServer, namespace: str, name: str) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status_of(server, namespace, name).get("conditions") or []}


def wait_until(condition: Callable[[], object], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def writes(client: Kube) -> dict[str, int]:
    """The requests a daemon sent that change something (dry runs and reads excluded)."""
    return {verb: n for verb, n in client.requests.items() if verb in ("POST", "PUT", "PATCH", "DELETE") and n}


@contextmanager
def running_daemon(server: ApiServer, namespace: str, **settings: Any) -> Iterator[Daemon]:
    """A daemon for ``namespace`` (its own shard) with its informers, workers and leader loop in this process."""
    settings.setdefault("leader_elect", False)
    settings.setdefault("lease_namespace", "kserve")
    daemon = Daemon(kube(server), DaemonConfig(namespaces=(namespace,), **settings))
    thread = threading.Thread(target=daemon.serve, args=("127.0.0.1:0", "127.0.0.1:0"), daemon=True)
    thread.start()
    try:
        yield daemon
    finally:
        daemon.stop.set()
        thread.join(timeout=60)
        for informer in daemon.sources.informers():
            informer.close_stream()


FAILED_REASONS = frozenset({"ApplyFailed", "RenderFailed", "ReconcileError"})


def converged(server: ApiServer, namespace: str, name: str, generation: int = 1) -> bool:
    """The daemon reconciled ``generation`` of the isvc without an error (readiness itself needs pods)."""
    status = status_of(server, namespace, name)
    ready = {c["type"]: c for c in status.get("conditions") or []}.get("Ready")
    if status.get("observedGeneration") != generation or ready is None:
        return False
    assert ready.get("reason") not in FAILED_REASONS, f"{namespace}/{name}: {ready.get('message')}"
    return True


def failed(server: ApiServer, namespace: str, name: str) -> dict[str, Any] | None:
    """The Ready condition of an isvc the daemon failed to reconcile (None before it tried)."""
    ready = {c["type"]: c for c in status_of(server, namespace, name).get("conditions") or []}.get("Ready")
    return ready if ready and ready.get("reason") in FAILED_REASONS else None
