"""Fixtures: a fake API server on 127.0.0.1 and a client wired to it through the official kubernetes client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakeapi import FakeApi

from kserve_compile.apply.kube import Kube, RetryPolicy, api_client_for_host


@pytest.fixture
def fake() -> Iterator[FakeApi]:
    api = FakeApi()
    api.url = api.start()
    yield api
    api.stop()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def kube(fake: FakeApi, sleeps: list[float]) -> Iterator[Kube]:
    client = api_client_for_host(fake.url)
    yield Kube(client, RetryPolicy(attempts=4, base_delay=0.01, sleep=sleeps.append), timeout=10)
    client.close()
