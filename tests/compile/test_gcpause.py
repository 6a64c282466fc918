"""The cyclic collector is paused inside a render and restored after, whatever happens."""

from __future__ import annotations

import gc

import pytest

from kserve_compile.gcpause import gc_paused


@gc_paused
def _state() -> bool:
    return gc.isenabled()


@gc_paused
def _nested() -> tuple[bool, bool]:
    inner = _state()
    return inner, gc.isenabled()


@gc_paused
def _fails() -> None:
    raise ValueError("boom")


@pytest.fixture(autouse=True)
def _restore_gc():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_restored_after():
    gc.enable()
    assert _state() is False
    assert gc.isenabled()


def test_nested_pause_keeps_it_off_until_the_outermost_returns():
    gc.enable()
    assert _nested() == (False, False)
    assert gc.isenabled()


def test_restored_when_the_call_raises():
    gc.enable()
    with pytest.raises(ValueError):
        _fails()
    assert gc.isenabled()


def test_left_off_when_it_was_off_before():
    gc.disable()
    assert _state() is False
    assert not gc.isenabled()


def test_compile_and_emit_restore_the_collector():
    from kserve_compile.api import render_objects
    from kserve_compile.emit import dump_yaml

    gc.enable()
    isvc = {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "m", "namespace": "ns"},
        "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://b/m"}}},
    }
    assert "name: m-predictor" in dump_yaml(render_objects([isvc]))
    assert gc.isenabled()
