"""Fixtures for tests against real parts: a kube-apiserver (apiserver.py says how to use them) and a Docker engine.

``apiserver``: one etcd + kube-apiserver for the session (KUBEBUILDER_ASSETS; skips where it is unset).
``controllers``: the same server with kube-controller-manager started (garbage collector, Deployments).
``kube_namespace``: a fresh namespace on it for one test.
``crds``: the project's CRDs (deploy/crds) applied and Established.
``engine``: a Docker engine (docker_engine.py; skips, saying why, where none can be started).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from apiserver import CRDS, ApiServer, require_assets
from docker_engine import FIGURES, Engine, NoEngine


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


@pytest.fixture(scope="session")
def engine() -> Iterator[Engine]:
    try:
        started = Engine.start()
    except NoEngine as exc:
        pytest.skip(str(exc))
    yield started
    started.release()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The image figures the tests measured (size, build, start to ready)."""
    if FIGURES:
        terminalreporter.section("image figures")
        for tag, what, value in FIGURES:
            terminalreporter.write_line(f"{tag:45} {what:38} {value}")
