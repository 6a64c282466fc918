"""Node selection by a node group's PV node affinity (CheckNodeAffinity → MatchNodeSelectorTerms)."""

from __future__ import annotations

from typing import Any

import pytest

from kserve_compile.errors import InputError
from kserve_compile.localmodel.node_affinity import matches


def _spec(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"required": {"nodeSelectorTerms": list(terms)}}}


def _expr(key: str, op: str, *values: str) -> dict[str, Any]:
    req: dict[str, Any] = {"key": key, "operator": op}
    if values:
        req["values"] = list(values)
    return {"matchExpressions": [req]}


LABELS = {"type": "gpu1", "zone": "a", "cores": "8"}


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        (_expr("type", "In", "gpu1", "gpu2"), True),
        (_expr("type", "In", "gpu2"), False),
        (_expr("type", "NotIn", "gpu2"), True),
        (_expr("missing", "NotIn", "x"), True),
        (_expr("zone", "Exists"), True),
        (_expr("zone", "DoesNotExist"), False),
        (_expr("cores", "Gt", "4"), True),
        (_expr("cores", "Lt", "4"), False),
        (_expr("type", "Gt", "4"), False),  # a non-integer label value never matches Gt/Lt
        ({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}, True),
        ({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-1"]}]}, False),
        ({}, False),  # an empty term matches nothing
    ],
)
def test_operators(term: dict[str, Any], expected: bool) -> None:
    assert matches(_spec(term), "node-1", LABELS) is expected


def test_terms_are_ored_and_requirements_anded() -> None:
    both = {
        "matchExpressions": [
            {"key": "type", "operator": "In", "values": ["gpu1"]},
            {"key": "zone", "operator": "In", "values": ["b"]},
        ]
    }
    assert not matches(_spec(both), "n", LABELS)
    assert matches(_spec(both, _expr("zone", "In", "a")), "n", LABELS)


def test_no_required_affinity_selects_no_node() -> None:
    assert not matches({}, "n", LABELS)
    assert not matches({"nodeAffinity": {}}, "n", LABELS)


def test_a_bad_term_is_reported_only_when_nothing_matches() -> None:
    bad = _expr("type", "In")
    assert matches(_spec(bad, _expr("type", "In", "gpu1")), "n", LABELS)
    with pytest.raises(InputError) as err:
        matches(_spec(bad), "n", LABELS)
    assert "values set can't be empty" in err.value.message
    assert (
        err.value.path
        == "spec.persistentVolumeSpec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values"
    )


@pytest.mark.parametrize(
    ("term", "message"),
    [
        (_expr("type", "Near", "x"), '"Near" is not a valid label selector operator'),
        (_expr("type", "Exists", "x"), "values set must be empty"),
        (_expr("cores", "Gt", "4", "5"), "exactly one value is required"),
        (_expr("cores", "Lt", "four"), "the value must be an integer"),
        (
            {"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["x"]}]},
            "not a valid node field selector key",
        ),
        (
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]},
            "unexpected number of value (2)",
        ),
    ],
)
def test_selector_errors(term: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as err:
        matches(_spec(term), "n", LABELS)
    assert message in err.value.message
