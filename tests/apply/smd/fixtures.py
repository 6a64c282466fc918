"""Pytest fixtures for the oracle-backed tests; a test module imports them (``from smd.fixtures import ...``).

``fake`` here overrides tests/apply/conftest.py's fixture of the same name in the importing module only,
so an existing test module re-collected there runs against ``FakeApi(oracle=...)``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakeapi import FakeApi

import smd

MISSING = smd.missing()
requires_oracle = pytest.mark.skipif(MISSING is not None, reason=f"SSA oracle unavailable: {MISSING}")


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[smd.Oracle]:
    """One oracle process per module; the binary is built once per session under pytest's temp root."""
    with smd.Oracle(smd.build_once(tmp_path_factory.getbasetemp())) as running:
        yield running


@pytest.fixture
def fake(oracle: smd.Oracle) -> Iterator[FakeApi]:
    api = FakeApi(oracle=oracle)
    api.url = api.start()
    yield api
    api.stop()
