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


@gc_paused
def _build(n: int) -> list[dict]:
    return [{"spec": {"items": [str(i)]}} for i in range(n)]


def test_what_a_paused_call_built_is_not_left_for_the_young_generation():
    """The first allocation after a pause must not scan the whole batch: it is promoted to the oldest generation."""
    gc.enable()
    gc.collect()
    built = _build(20_000)
    assert gc.get_count()[0] < 100  # a young generation scan would have had ~40,000 objects to walk
    young = {id(o) for o in gc.get_objects(generation=0)} | {id(o) for o in gc.get_objects(generation=1)}
    assert id(built) not in young and id(built[0]["spec"]["items"]) not in young
    assert gc.get_freeze_count() == 0  # nothing left frozen


@gc_paused
def _make_cycle() -> int:
    node: dict = {}
    node["self"] = node
    return id(node)


def test_a_cycle_made_during_a_pause_is_still_collected():
    gc.enable()
    gc.collect()
    cycle = _make_cycle()
    assert cycle in {id(o) for o in gc.get_objects()}
    assert gc.collect() >= 1
    assert cycle not in {id(o) for o in gc.get_objects()}


def test_someone_elses_frozen_objects_stay_frozen():
    """The model server freezes its startup heap; a render in that process must not thaw it."""
    gc.enable()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        _build(100)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_a_full_collection_runs_after_enough_promotions(monkeypatch):
    """Promoted objects escape CPython's own full-collection trigger, so the pause runs one itself now and then:
    cycles made between renders in a long-running process are still reclaimed."""
    from kserve_compile import gcpause

    monkeypatch.setattr(gcpause, "_FULL_COLLECTION_AFTER", 10_000)
    monkeypatch.setattr(gcpause, "_promoted", 0)
    gc.enable()
    gc.collect()
    node: dict = {}
    node["self"] = node  # garbage that only the cyclic collector frees
    ref = id(node)
    del node
    _build(2_000)  # promoted: the cycle with it
    assert ref in {id(o) for o in gc.get_objects(generation=2)}
    _build(10_000)  # over the bound: a full collection instead
    assert ref not in {id(o) for o in gc.get_objects()}
    assert gcpause._promoted == 0
