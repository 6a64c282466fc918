"""Fixtures for tests against a real kube-apiserver (apiserver.py says how to use them).

``apiserver``: one etcd + kube-apiserver for the session (KUBEBUILDER_ASSETS; skips where it is unset).
``controllers``: the same server with kube-controller-manager started (garbage collector, Deployments).
``kube_namespace``: a fresh namespace on it for one test.
``crds``: the project's CRDs (deploy/crds) applied and Established.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from apiserver import CRDS, ApiServer, require_assets


@pytest.fixture(scope="session")
def apiserver() -> Iterator[ApiServer]:
    server = ApiServer(require_assets())
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def controllers(apiserver: ApiServer) -> ApiServer:
    apiserver.start_controller_manager()
    return apiserver


@pytest.fixture
def kube_namespace(apiserver: ApiServer) -> str:
    return apiserver.create_namespace()


@pytest.fixture(scope="session")
def crds(apiserver: ApiServer) -> list[dict[str, object]]:
    return apiserver.apply_file(CRDS)
