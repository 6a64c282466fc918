"""``clone``: a deep copy of JSON-shaped data, in C where built, equal to the general copy and sharing no container."""

from __future__ import annotations

import collections
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kserve_compile import datacopy
from kserve_compile.datacopy import _clone, clone
from tests.leaks import assert_no_growth

C = datacopy._datacopy_c
needs_c = pytest.mark.skipif(C is None, reason="built without a C compiler: only the Python copy exists")

leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))
trees = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=5), children, max_size=4),
    ),
    max_leaves=30,
)


def containers(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [node, *(c for v in node.values() for c in containers(v))]
    if isinstance(node, (list, tuple)):
        return [node, *(c for v in node for c in containers(v))]
    return []


def leaf_values(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [x for v in node.values() for x in leaf_values(v)]
    if isinstance(node, (list, tuple)):
        return [x for v in node for x in leaf_values(v)]
    return [node]


@settings(max_examples=400, deadline=None)
@given(trees)
def test_clone_equals_the_general_copy_and_shares_no_container(data: Any) -> None:
    copy = clone(data)
    assert copy == _clone(data)
    originals = {id(c) for c in containers(data) if not isinstance(c, tuple)}
    assert not originals & {id(c) for c in containers(copy)}
    assert not any(isinstance(c, tuple) for c in containers(copy))  # tuples come back as lists


@needs_c
def test_c_copy_shares_the_immutable_leaves() -> None:
    data = {"script": "x" * 5000, "n": 10**30, "f": 1.5, "items": ["a" * 100, None, True]}
    copy = C.clone(data)
    assert copy == data and copy is not data and copy["items"] is not data["items"]
    assert all(a is b for a, b in zip(leaf_values(copy), leaf_values(data), strict=True))


@needs_c
def test_c_copy_keeps_a_nan_the_json_round_trip_would_turn_into_null() -> None:
    assert math.isnan(C.clone({"x": [math.nan]})["x"][0])


@needs_c
@pytest.mark.parametrize(
    "data",
    [{"s": {1, 2}}, {1: "int key"}, [collections.OrderedDict(a=1)], {"s": type("S", (str,), {})("x")}],
    ids=["set", "int-key", "dict-subclass", "str-subclass"],
)
def test_what_the_c_copy_does_not_take_is_copied_the_general_way(data: Any) -> None:
    with pytest.raises(C.Unsupported):
        C.clone(data)
    assert clone(data) == data


@needs_c
def test_nesting_beyond_the_c_depth_is_copied_the_general_way() -> None:
    deep: Any = "leaf"
    for _ in range(300):
        deep = [deep]
    with pytest.raises(C.Unsupported):
        C.clone(deep)
    assert clone(deep) == deep


@needs_c
def test_c_copy_leaks_nothing() -> None:
    data = {"spec": {"containers": [{"name": f"c{i}", "args": ["a", "b"], "n": i} for i in range(50)]}}
    bad = {"spec": {"a": [1, 2], "z": {3}}}  # fails after copying part of it

    def once() -> None:
        C.clone(data)
        with pytest.raises(C.Unsupported):
            C.clone(bad)

    assert_no_growth(once)
