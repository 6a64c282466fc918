"""The C walk of the YAML emitter (``_yaml_c``) writes exactly what the Python walk writes, or hands over to it."""

from __future__ import annotations

import collections
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kserve_compile.emit import dump_yaml
from kserve_compile.emit import yaml_text as Y
from tests.leaks import assert_no_growth

from .hazards import HAZARDS, PLAIN

C = Y._yaml_c
needs_c = pytest.mark.skipif(C is None, reason="built without a C compiler: only the Python walk exists")


def c_dump(objs: list[Any]) -> str:
    """The C walk alone, with no fallback: a failure here is a failure of the C walk."""
    assert C is not None
    return C.dump(objs, {}, {}, {}, Y._scalar, Y._literal, Y._prefix, Y._value, Y._LITERAL)


def test_the_c_walks_are_built_wherever_a_compiler_is() -> None:
    """The install builds both extensions when it finds a compiler; on such a machine (CI) a silent miss would
    leave every test below comparing the Python walk with itself."""
    from kserve_compile import datacopy

    if shutil.which("cc") or shutil.which("gcc"):
        assert Y._yaml_c is not None
        assert datacopy._datacopy_c is not None


strings = st.one_of(
    st.sampled_from(HAZARDS + PLAIN),
    st.text(max_size=12),
    st.lists(st.sampled_from(["ab", "", "x y", "- z", "#c", "é"]), min_size=2, max_size=4).map("\n".join),
)
keys = st.one_of(st.sampled_from(["a", "b", "name", "- x", "true", "", "é", "k" * 1100]), st.text(max_size=6))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), strings)
trees = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)),
    max_leaves=30,
)
documents = st.lists(st.dictionaries(keys, trees, max_size=5), max_size=4)


@needs_c
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_c_walk_writes_the_python_walks_bytes(objs: list[dict]) -> None:
    assert c_dump(objs) == Y.dump_yaml_python(objs)


odd_scalars = st.one_of(
    scalars,
    st.sampled_from([math.inf, -math.inf, math.nan, 10**400, b"bytes", object(), ("t",), type("S", (str,), {})("s")]),
)
odd_trees = st.recursive(
    odd_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.tuples(children),
        st.dictionaries(st.one_of(keys, st.integers(), st.none()), children, max_size=3),
        st.dictionaries(keys, children, max_size=2).map(collections.OrderedDict),
    ),
    max_leaves=15,
)


@needs_c
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(odd_trees.filter(lambda d: isinstance(d, dict)), max_size=3))
def test_c_walk_on_anything_writes_the_same_or_hands_over(objs: list[Any]) -> None:
    """Whatever it is given, the C walk writes the Python walk's bytes or stops with an exception (never a crash,
    never other bytes); dump_yaml then answers as the Python walk does."""
    try:
        expected: str | None = Y.dump_yaml_python(objs)
    except (TypeError, ValueError):
        expected = None
    try:
        written: str | None = c_dump(objs)
    except Exception:  # noqa: BLE001 - Unsupported, or the error the Python walk words
        written = None
    if written is not None:
        assert written == expected
    if expected is not None:
        assert dump_yaml(objs) == expected
    else:
        with pytest.raises((TypeError, ValueError)):
            dump_yaml(objs)


@needs_c
def test_c_walk_on_every_golden_output() -> None:
    """Every golden scenario's objects (145 kinds of rendered output) come out byte for byte as the Python walk's."""
    golden = Path(__file__).resolve().parents[2] / "golden"
    scenarios = sorted(golden.glob("*/expected.yaml"))
    assert len(scenarios) > 100
    for expected in scenarios:
        objs = [d for d in yaml.safe_load_all(expected.read_text()) if d is not None]
        assert c_dump(objs) == Y.dump_yaml_python(objs), expected.parent.name


@needs_c
@pytest.mark.parametrize(
    "obj",
    [
        {"t": ("a", "b")},  # a tuple
        {"m": collections.OrderedDict(a=1)},  # a dict subclass
        {"s": type("S", (str,), {})("text")},  # a str subclass
        {1: "non-str key"},
        collections.OrderedDict(a=1),  # a document that is no exact dict
    ],
    ids=["tuple", "dict-subclass", "str-subclass", "int-key", "ordered-document"],
)
def test_what_the_c_walk_does_not_take_goes_to_the_python_walk(obj: Any) -> None:
    with pytest.raises(C.Unsupported):
        c_dump([obj])
    try:
        expected: str | Exception = Y.dump_yaml_python([obj])
    except (TypeError, ValueError) as exc:
        expected = exc
    if isinstance(expected, str):
        assert dump_yaml([obj]) == expected
    else:
        with pytest.raises(type(expected), match=str(expected)[:40]):
            dump_yaml([obj])


@needs_c
def test_nesting_beyond_the_c_depth_is_written_by_python() -> None:
    deep: Any = "leaf"
    for _ in range(200):
        deep = {"k": [deep]}
    with pytest.raises(C.Unsupported):
        c_dump([deep])
    assert dump_yaml([deep]) == Y.dump_yaml_python([deep])


def test_a_bad_value_is_located_the_same_either_way() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": [1, math.inf]}}
    with pytest.raises(ValueError, match=r"ConfigMap/c.*data\.x\[1\]"):
        dump_yaml([obj])
    with pytest.raises(ValueError, match=r"ConfigMap/c.*data\.x\[1\]"):
        Y.dump_yaml_python([obj])


@needs_c
@pytest.mark.parametrize("fails", [False, True], ids=["written", "handed-over"])
def test_c_walk_leaks_nothing(fails: bool) -> None:
    """Every reference the walk takes is given back, on success and when it stops half-way."""
    tree = {"spec": {"containers": [{"name": f"c{i}", "args": ["--a", "x\ny"], "n": i, "f": 1.5} for i in range(50)]}}
    objs = [tree, {"bad": ("tuple",)}] if fails else [tree]

    def once() -> None:
        try:
            c_dump(objs)
        except C.Unsupported:
            assert fails

    assert_no_growth(once)
