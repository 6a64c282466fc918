"""Runtime auto-selection order and explicit-runtime errors (KServe api/predictor_model.go, components/predictor.go)."""

from __future__ import annotations

import pytest

from kserve_compile.errors import InputError
from kserve_compile.plan.runtime_select import select_runtime

from .builders import model, runtime

SK = [{"name": "sklearn", "version": "1", "autoSelect": True}]


def _pick(m, runtimes, namespace="default"):
    return select_runtime(m, namespace, runtimes, multi_node=False).name


def test_namespaced_runtime_without_priority_beats_cluster_runtime_with_priority() -> None:
    cluster = runtime("cluster-sk", [{**SK[0], "priority": 9}])
    namespaced = runtime("ns-sk", SK, namespace="default")
    assert _pick(model("sklearn"), [cluster, namespaced]) == "ns-sk"


def test_namespaced_runtime_of_another_namespace_is_ignored() -> None:
    cluster = runtime("cluster-sk", SK)
    other = runtime("ns-sk", SK, namespace="elsewhere")
    assert _pick(model("sklearn"), [other, cluster]) == "cluster-sk"


def test_lowest_protocol_ranks_first() -> None:
    v2_only = runtime("a-v2", SK, protocols=["v2"])
    v1_and_v2 = runtime("b-v1v2", SK, protocols=["v2", "v1"])
    assert _pick(model("sklearn", protocolVersion="v2"), [v2_only, v1_and_v2]) == "b-v1v2"


def test_protocol_unset_means_v1() -> None:
    v2_only = runtime("a-v2", SK, protocols=["v2"])
    any_protocol = runtime("z-any", SK)
    assert _pick(model("sklearn"), [v2_only, any_protocol]) == "z-any"


def test_newest_creation_timestamp_first_then_name() -> None:
    old = runtime("a-old", SK, created="2023-01-01T00:00:00Z")
    new = runtime("z-new", SK, created="2024-06-01T00:00:00Z")
    assert _pick(model("sklearn"), [old, new]) == "z-new"
    same_b = runtime("b", SK, created="2024-06-01T00:00:00Z")
    same_a = runtime("a", SK, created="2024-06-01T00:00:00Z")
    assert _pick(model("sklearn"), [same_b, same_a]) == "a"


def test_priority_sort_is_stable_and_prefers_higher_then_any_priority() -> None:
    low = runtime("a-low", [{**SK[0], "priority": 1}])
    high = runtime("b-high", [{**SK[0], "priority": 2}])
    none = runtime("0-none", SK)
    assert _pick(model("sklearn"), [none, low, high]) == "b-high"
    tie_b = runtime("b-tie", [{**SK[0], "priority": 1}])
    tie_a = runtime("a-tie", [{**SK[0], "priority": 1}])
    assert _pick(model("sklearn"), [tie_b, tie_a]) == "a-tie"


def test_auto_select_false_is_skipped_but_explicit_runtime_ignores_it() -> None:
    manual = runtime("manual", [{"name": "sklearn", "version": "1", "autoSelect": False}])
    with pytest.raises(InputError):
        _pick(model("sklearn"), [manual])
    assert _pick(model("sklearn", runtime="manual"), [manual]) == "manual"


def test_version_must_match_exactly() -> None:
    rt = runtime("sk", SK)
    assert _pick(model("sklearn", "1"), [rt]) == "sk"
    with pytest.raises(InputError, match=r'model type: \{sklearn "2"\}'):
        _pick(model("sklearn", "2"), [rt])


def test_no_runtime_message_matches_kserve() -> None:
    triton = runtime(
        "kserve-tritonserver", [{"name": "onnx", "version": "1", "autoSelect": True}], protocols=["v2", "grpc-v2"]
    )
    with pytest.raises(InputError) as err:
        _pick(model("onnx"), [triton])
    assert err.value.message == "no runtime found to support predictor with model type: {onnx <nil>}"


def test_unknown_runtime_name() -> None:
    with pytest.raises(InputError) as err:
        _pick(model("sklearn", runtime="nope"), [runtime("sk", SK)])
    assert err.value.message == "No ServingRuntimes or ClusterServingRuntimes with the name: nope"


def test_disabled_runtime_named_explicitly() -> None:
    with pytest.raises(InputError) as err:
        _pick(model("sklearn", runtime="sk"), [runtime("sk", SK, disabled=True)])
    assert err.value.message == "specified runtime sk is disabled"


def test_disabled_runtime_is_not_auto_selected() -> None:
    assert _pick(model("sklearn"), [runtime("a-off", SK, disabled=True), runtime("b-on", SK)]) == "b-on"


def test_explicit_runtime_protocol_and_format_checks() -> None:
    rt = runtime("sk", SK, protocols=["v1"])
    with pytest.raises(InputError, match="specified runtime sk does not support specified protocol version"):
        _pick(model("sklearn", runtime="sk", protocolVersion="v2"), [rt])
    with pytest.raises(InputError, match="specified runtime sk does not support specified framework/version"):
        _pick(model("xgboost", runtime="sk"), [rt])


def test_explicit_name_prefers_namespaced_runtime() -> None:
    cluster = runtime("same", SK, image="cluster:1")
    namespaced = runtime("same", SK, namespace="default", image="ns:1")
    chosen = select_runtime(model("sklearn", runtime="same"), "default", [cluster, namespaced], multi_node=False)
    assert not chosen.runtime.is_cluster


def test_answers_are_remembered_per_runtime_tuple_only() -> None:
    first = (runtime("a-sk", SK),)
    second = (runtime("b-sk", SK),)
    assert [_pick(model("sklearn", "1"), rts) for rts in (first, second, first)] == ["a-sk", "b-sk", "a-sk"]
    listed = [runtime("a-sk", SK)]
    assert _pick(model("sklearn"), listed) == "a-sk"
    listed[0] = runtime("c-sk", SK)  # a list may change between calls: never answered from memory
    assert _pick(model("sklearn"), listed) == "c-sk"
